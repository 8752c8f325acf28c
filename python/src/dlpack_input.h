// Tensors given to the module (a torch.Tensor, a CuPy or JAX array): taken through the
// DLPack protocol, the consumer side of what attnlab.Tensor offers (tensor.h).
//
// Why DLPack and not torch's pybind11 casters (torch/extension.h): the casters need
// torch_python and torch's Python headers, which only a pip torch's world has, while
// DLPack is a C struct both LibTorch 1.13 (Debian's world) and 2.x read with
// at::fromDLPack. So one code path builds in both worlds, links LibTorch alone, takes any
// producer's tensor without a copy, and never depends on torch's Python ABI.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "python/src/common.h"

namespace attnlab::python {

// Whether `o` offers a DLPack capsule and is not a numpy array (whose own path, the
// H×W×3 uint8 picture, it keeps).
bool offers_dlpack(const py::handle& o);

// The tensor `o` exports, sharing its memory (on its device). A CUDA producer is asked
// with no stream, so it orders its current stream before the default one (the protocol's
// contract); the engine then runs on this thread's current stream, which with a shared
// LibTorch is the stream the producer's work was queued on. Throws std::invalid_argument
// starting with `where` when the export fails or the capsule is not DLPack's.
at::Tensor take_dlpack(const py::handle& o, const std::string& where);

}  // namespace attnlab::python
