// attnlab.Tensor: a LibTorch tensor handed to Python without torch_python, through the
// DLPack protocol (__dlpack__, __dlpack_device__), so torch.from_dlpack or numpy.from_dlpack
// take it without a copy, on the CPU or the device it lives on. Never a torch::Tensor
// through pybind11's casters (docs/PYTHON.md: LibTorch and PyTorch in one process).
#pragma once

#include <ATen/core/Tensor.h>

#include "python/src/common.h"

namespace attnlab::python {

struct Tensor {
  at::Tensor value;  // detached
};

void bind_tensor(py::module_& m);

}  // namespace attnlab::python
