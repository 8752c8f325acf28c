// attnlab.Tensor: see tensor.h. The capsule follows the DLPack protocol: named "dltensor"
// until a consumer takes it (and renames it "used_dltensor"); a capsule nobody took frees
// its tensor when it dies.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/stl.h>

#include "python/src/tensor.h"

namespace attnlab::python {
namespace {

void free_unconsumed(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // consumed: the consumer frees it
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed && managed->deleter) managed->deleter(managed);
}

py::capsule dlpack(const Tensor& t, const py::object& stream) {
  (void)stream;  // the work is finished on the producer's side instead (below)
  const at::Tensor& v = t.value;
  if (!v.device().is_cpu()) {
    // The data must be ready before any consumer stream reads it: wait for the stream
    // the tensor was computed on.
    py::gil_scoped_release release;
    const auto* impl = c10::impl::getDeviceGuardImpl(v.device().type());
    impl->synchronizeStream(impl->getStream(v.device()));
  }
  DLManagedTensor* managed = at::toDLPack(v);
  return py::capsule(managed, "dltensor", &free_unconsumed);
}

// DLPack's (device type, device id): what toDLPack writes into the capsule's tensor.
py::tuple dlpack_device(const Tensor& t) {
  DLManagedTensor* managed = at::toDLPack(t.value);
  const DLDevice d = managed->dl_tensor.device;
  managed->deleter(managed);
  return py::make_tuple(int(d.device_type), int(d.device_id));
}

}  // namespace

py::object tensor_out(const at::Tensor& t) {
  py::object wrapped = py::cast(Tensor{t.detach()});
#ifdef ATTNLAB_TORCH_PYTHON
  // torch's public consumer of the capsule above: its tensor owns ours, in the one libtorch
  // both use.
  return py::module_::import("torch").attr("from_dlpack")(wrapped);
#else
  return wrapped;
#endif
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor",
                     "A tensor of the engine, on its device: torch.from_dlpack(t) or "
                     "numpy.from_dlpack(t) (CPU) take it without a copy.")
      .def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none())
      .def("__dlpack_device__", &dlpack_device)
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               return py::tuple(py::cast(std::vector<int64_t>(
                                   t.value.sizes().begin(), t.value.sizes().end())));
                             })
      .def_property_readonly(
          "dtype",
          [](const Tensor& t) { return std::string(c10::toString(t.value.scalar_type())); })
      .def_property_readonly("device", [](const Tensor& t) { return t.value.device().str(); })
      .def(
          "cpu", [](const Tensor& t) { return Tensor{t.value.to(at::kCPU)}; },
          "A copy on the CPU (itself when it is there).")
      .def(
          "numpy",
          [](const Tensor& t) {
            if (!t.value.device().is_cpu())
              throw std::invalid_argument("numpy(): the tensor is on " + t.value.device().str() +
                                          "; take it with torch.from_dlpack, or .cpu().numpy()");
            return py::module_::import("numpy").attr("from_dlpack")(py::cast(t));
          },
          "A numpy view of a CPU tensor (no copy).")
      .def("__repr__", [](const Tensor& t) {
        std::string shape;
        for (const int64_t s : t.value.sizes())
          shape += (shape.empty() ? "" : ", ") + std::to_string(s);
        return "<attnlab.Tensor (" + shape + ") " +
               std::string(c10::toString(t.value.scalar_type())) + " on " + t.value.device().str() +
               ">";
      });
}

}  // namespace attnlab::python
