// See bf16_products.h.
#include "core/runtime/bf16_products.h"

#include <ATen/ATen.h>
#include <ATen/ops/_slow_conv2d_forward_cpu_dispatch.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/addmv_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/dot_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <ATen/ops/mv_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <mutex>

#include "core/runtime/torch_compat.h"

namespace attnlab::runtime {
namespace {

bool bf16(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kBFloat16;
}
at::Tensor fp32(const at::Tensor& t) {
  return t.to(at::kFloat);
}
at::Tensor back(const at::Tensor& t) {
  return t.to(at::kBFloat16);
}

// Each kernel: bf16 operands → LibTorch's fp32 CPU kernel on their exact fp32 values, one
// rounding of the result; anything else → LibTorch's own CPU kernel (at::cpu:: calls it
// directly, not through the dispatcher, so there is no recursion).
at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  if (bf16(a) && bf16(b)) return back(at::cpu::mm(fp32(a), fp32(b)));
  return at::cpu::mm(a, b);
}
at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  if (bf16(a) && bf16(b)) return back(at::cpu::bmm(fp32(a), fp32(b)));
  return at::cpu::bmm(a, b);
}
at::Tensor addmm(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  if (bf16(c) && bf16(a) && bf16(b))
    return back(at::cpu::addmm(fp32(c), fp32(a), fp32(b), beta, alpha));
  return at::cpu::addmm(c, a, b, beta, alpha);
}
at::Tensor baddbmm(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  if (bf16(c) && bf16(a) && bf16(b))
    return back(at::cpu::baddbmm(fp32(c), fp32(a), fp32(b), beta, alpha));
  return at::cpu::baddbmm(c, a, b, beta, alpha);
}
at::Tensor addmv(const at::Tensor& c, const at::Tensor& a, const at::Tensor& v,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  if (bf16(c) && bf16(a) && bf16(v))
    return back(at::cpu::addmv(fp32(c), fp32(a), fp32(v), beta, alpha));
  return at::cpu::addmv(c, a, v, beta, alpha);
}
// mv has no CPU kernel of its own (its composite one writes through addmv's out= form,
// which the kernel above does not see): a CPU kernel here takes precedence for CPU tensors.
at::Tensor mv(const at::Tensor& a, const at::Tensor& v) {
  if (bf16(a) && bf16(v)) return back(at::native::mv(fp32(a), fp32(v)));
  return at::native::mv(a, v);
}
at::Tensor dot(const at::Tensor& a, const at::Tensor& b) {
  if (bf16(a) && bf16(b)) return back(at::cpu::dot(fp32(a), fp32(b)));
  return at::cpu::dot(a, b);
}
// conv2d at bf16 on such a CPU runs the unfolded ("slow") convolution, a gemm inside.
at::Tensor slow_conv2d(const at::Tensor& x, const at::Tensor& w, at::IntArrayRef kernel,
                       const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                       at::IntArrayRef padding) {
  if (bf16(x) && bf16(w) && (!bias || !bias->defined() || bf16(*bias))) {
    c10::optional<at::Tensor> b32;
    if (bias && bias->defined()) b32 = fp32(*bias);
    return back(at::cpu::_slow_conv2d_forward(fp32(x), fp32(w), kernel, b32, stride, padding));
  }
  return at::cpu::_slow_conv2d_forward(x, w, kernel, bias, stride, padding);
}


}  // namespace

bool cpu_bf16_products_lose_sums() {
  static const bool lose = [] {
    const at::NoGradGuard no_grad;
    const at::Tensor a = at::ones({1, 1024}, at::kBFloat16), b = at::ones({1024, 1}, at::kBFloat16);
    return at::mm(a, b).item<float>() < 1024.0f;
  }();
  return lose;
}

bool install_fp32_accumulating_bf16_products() {
  static std::once_flag once;
  static bool installed = false;
  std::call_once(once, [] {
    if (!cpu_bf16_products_lose_sums()) return;
    // Swallows the dispatcher's "Overriding a previously registered kernel" warnings: the
    // override is the point, and they would land on a user's terminal.
    compat::SilentWarningHandler silent;
    const compat::WarningHandlerGuard guard(&silent);
    // Never destroyed: the kernels stay registered until the process ends (a static
    // destructor would unregister them while LibTorch may still be running).
    auto* lib =
        new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    lib->impl("mm", TORCH_FN(mm));
    lib->impl("bmm", TORCH_FN(bmm));
    lib->impl("addmm", TORCH_FN(addmm));
    lib->impl("baddbmm", TORCH_FN(baddbmm));
    lib->impl("addmv", TORCH_FN(addmv));
    lib->impl("mv", TORCH_FN(mv));
    lib->impl("dot", TORCH_FN(dot));
    lib->impl("_slow_conv2d_forward", TORCH_FN(slow_conv2d));
    installed = true;
  });
  return installed;
}

std::string bf16_products_description() {
  if (!cpu_bf16_products_lose_sums()) return "LibTorch's own (fp32 accumulation)";
  return install_fp32_accumulating_bf16_products()
             ? "fp32 accumulation (attnlab's kernels: LibTorch's own add in bf16 on this CPU)"
             : "bf16 accumulation (LibTorch's own)";
}

}  // namespace attnlab::runtime
