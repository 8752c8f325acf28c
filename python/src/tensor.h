// attnlab.Tensor: a LibTorch tensor handed to Python without torch_python, through the
// DLPack protocol (__dlpack__, __dlpack_device__), so torch.from_dlpack or numpy.from_dlpack
// take it without a copy, on the CPU or the device it lives on. Never a torch::Tensor
// through pybind11's casters (dlpack_input.h says why).
//
// Built against the environment's own torch (a pip torch, 2.x: python/CMakeLists.txt
// defines ATTNLAB_TORCH_PYTHON), the module shares torch's libtorch, and every tensor it
// returns is a torch.Tensor made by torch.from_dlpack from an attnlab.Tensor: the same
// storage, no copy. Built against Debian's LibTorch it returns the attnlab.Tensor itself.
#pragma once

#include <ATen/core/Tensor.h>

#include "python/src/common.h"

namespace attnlab::python {

struct Tensor {
  at::Tensor value;  // detached
};

void bind_tensor(py::module_& m);

// `t` (detached) as the module returns tensors: a torch.Tensor sharing its storage in the
// torch world, else an attnlab.Tensor.
py::object tensor_out(const at::Tensor& t);

}  // namespace attnlab::python
