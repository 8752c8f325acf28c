// The meta-device check (issue 28): LibTorch's `meta` device runs shapes without data,
// and refuses to mix devices as CUDA does ("Expected all tensors to be on the same
// device"). Code run on meta tensors that creates a tensor on a fixed device (a
// `torch::zeros(...)` without the input's options, a CPU index tensor) or moves one to the
// CPU in the middle of compute fails there, so a pass on meta is the GPU path proven
// without a GPU. `meta_outcome` runs a piece of such code and sorts what happened.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/nn/module.h>

#include <functional>
#include <string>

namespace attnlab::testing {

struct MetaOutcome {
  enum Kind {
    Ok,            // ran on meta from end to end
    DeviceMixed,   // a tensor on another device met the meta ones: a fixed-device bug
    NoMetaKernel,  // an op our LibTorch has no meta kernel for (`op` names it)
    ReadsValues,   // it reads values (item(), a copy to the CPU): not a shape computation
    OtherError     // anything else (`message`)
  } kind = Ok;
  std::string op;       // NoMetaKernel: "aten::bincount"
  std::string message;  // the error's first line
  bool ok() const { return kind == Ok; }
  std::string describe() const {
    static const char* names[] = {"ok", "device mixed", "no meta kernel", "reads values",
                                  "other error"};
    return std::string(names[kind]) + (op.empty() ? "" : " (" + op + ")") +
           (message.empty() ? "" : ": " + message);
  }
};

inline MetaOutcome classify_meta_error(const std::string& what) {
  MetaOutcome o;
  o.message = what.substr(0, what.find('\n'));
  const auto has = [&](const char* s) { return what.find(s) != std::string::npos; };
  if (has("same device") || has("to be on the same") || has("device type") ||
      (has("Expected") && has("device") && has("meta") && has("cpu"))) {
    o.kind = MetaOutcome::DeviceMixed;
  } else if (has("'Meta' backend") || has("Meta backend") || has("meta kernel") ||
             has("not implemented for 'Meta'") || has("_overrideable") ||
             has("with Meta tensors")) {
    o.kind = MetaOutcome::NoMetaKernel;
    const size_t a = what.find("'aten::");
    if (a != std::string::npos) o.op = what.substr(a + 1, what.find('\'', a + 1) - a - 1);
    // LibTorch 2.x: "aten::_local_scalar_dense: attempted to run this operator with Meta
    // tensors, but there was no fake impl or Meta kernel registered".
    if (o.op.empty() && what.rfind("aten::", 0) == 0) o.op = what.substr(0, what.find(':', 6));
    const size_t ov = what.find("_overrideable");
    if (o.op.empty() && ov != std::string::npos) {  // "convolution_overrideable not implemented"
      const size_t start = what.rfind(' ', ov) == std::string::npos ? 0 : what.rfind(' ', ov) + 1;
      o.op = "aten::" + what.substr(start, ov + 13 - start);
    }
    // item() and copies to the host are the ops that read values.
    if (o.op == "aten::_local_scalar_dense" || o.op == "aten::_copy_from" ||
        o.op == "aten::_copy_from_and_resize" || o.op == "aten::equal")
      o.kind = MetaOutcome::ReadsValues;
  } else if (has("meta tensor") || has("out of meta") || has("item()") || has("Cannot copy out")) {
    o.kind = MetaOutcome::ReadsValues;
  } else {
    o.kind = MetaOutcome::OtherError;
  }
  return o;
}

// Defined with the test-only meta kernels (meta_kernels.cpp): asking for it links them in.
bool meta_kernels_registered();

inline MetaOutcome meta_outcome(const std::function<void()>& body) {
  static const bool kernels = meta_kernels_registered();
  (void)kernels;
  try {
    body();
    return {};
  } catch (const std::exception& e) {
    return classify_meta_error(e.what());
  }
}

// Moves every parameter and buffer of `module` (and its children) to the meta device.
// Module::to(kMeta) cannot in LibTorch 1.13 (set_data refuses a tensor of another
// TensorImpl key set), so each tensor's metadata is replaced in place, keeping the
// identity (and the requires_grad) the module's members share with its parameter list. A
// tensor a module keeps outside its parameters and buffers stays where it was, and then
// mixes devices as it would after a real .to(cuda).
inline void move_to_meta(torch::nn::Module& module) {
  const auto move = [](const at::Tensor& t) {
    const at::Tensor m = at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
    t.unsafeGetTensorImpl()->shallow_copy_from(m.getIntrusivePtr());
  };
  for (const auto& p : module.parameters(true)) move(p);
  for (const auto& b : module.buffers(true)) move(b);
}

// A meta tensor of `sizes` (float32), what inputs of the check are made of.
inline at::Tensor meta_tensor(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kMeta));
}

}  // namespace attnlab::testing
