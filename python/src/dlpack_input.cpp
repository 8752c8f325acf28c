// Tensors taken through DLPack; see dlpack_input.h. The capsule is renamed
// "used_dltensor" once at::fromDLPack owns its tensor, so the producer's capsule
// destructor leaves it alone (the protocol's hand-over); the tensor calls the producer's
// deleter when it dies.
#include "python/src/dlpack_input.h"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <pybind11/numpy.h>

#include <stdexcept>

namespace attnlab::python {

bool offers_dlpack(const py::handle& o) {
  return !py::isinstance<py::array>(o) && py::hasattr(o, "__dlpack__");
}

at::Tensor take_dlpack(const py::handle& o, const std::string& where) {
  py::object capsule;
  try {
    capsule = o.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    // torch refuses a tensor that requires grad, a sparse or conjugated one: its reason,
    // without the traceback what() appends.
    throw std::invalid_argument(where + ": its __dlpack__() failed: " +
                                std::string(py::str(e.type().attr("__name__"))) + ": " +
                                std::string(py::str(e.value())));
  }
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    throw std::invalid_argument(where +
                                ": its __dlpack__() did not return an unused DLPack capsule "
                                "(\"dltensor\")");
  }
  at::Tensor t;
  try {
    t = at::fromDLPack(managed);
  } catch (const std::exception& e) {
    // A device or dtype this LibTorch does not know (a CUDA tensor for a CPU-only build).
    // fromDLPack has not taken the capsule: its destructor still frees the tensor.
    throw std::invalid_argument(where + ": LibTorch cannot take this tensor: " + e.what());
  }
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return t;
}

}  // namespace attnlab::python
