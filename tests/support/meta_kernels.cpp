// Meta kernels for the ops our LibTorchs (1.13, 2.x) run on CPU and CUDA but have none for on
// the `meta` device (tests/support/meta_device.h). Each computes its output's shape only,
// and first checks that every tensor argument is on the meta device, the check a CUDA
// kernel makes: a CPU tensor reaching one is the fixed-device bug the meta tests look for.
// Test-only: registered for the test binaries that include meta_device.h.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "tests/support/meta_device.h"

namespace attnlab::testing {
namespace {

void same_device(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors)
    if (t && t->defined() && !t->is_meta())
      TORCH_CHECK(false,
                  "Expected all tensors to be on the same device, but found at least "
                  "two devices, meta and ",
                  t->device().str(), "!");
}

at::Tensor index_select_meta(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  same_device({&self, &index});
  auto sizes = self.sizes().vec();
  if (sizes.empty()) return at::empty({index.numel()}, self.options());
  dim = at::maybe_wrap_dim(dim, self.dim());
  sizes[size_t(dim)] = index.numel();
  return at::empty(sizes, self.options());
}

at::Tensor where_meta(const at::Tensor& condition, const at::Tensor& self,
                      const at::Tensor& other) {
  same_device({&condition, &self, &other});
  const auto sizes = at::infer_size(at::infer_size(condition.sizes(), self.sizes()), other.sizes());
  return at::empty(sizes, self.options().dtype(at::result_type(self, other)));
}

// LibTorch 2.x's scaled_dot_product_attention (the fused softmax path) reaches where's out=
// form, which has no Meta kernel there either.
at::Tensor& where_out_meta(const at::Tensor& condition, const at::Tensor& self,
                           const at::Tensor& other, at::Tensor& out) {
  same_device({&condition, &self, &other, &out});
  out.resize_(at::infer_size(at::infer_size(condition.sizes(), self.sizes()), other.sizes()));
  return out;
}

at::Tensor& abs_out_meta(const at::Tensor& self, at::Tensor& out) {
  same_device({&self, &out});
  out.resize_(self.sizes());
  return out;
}

at::Tensor convolution_meta(const at::Tensor& input, const at::Tensor& weight,
                            const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                            at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                            at::IntArrayRef output_padding, int64_t groups) {
  same_device({&input, &weight, bias ? &*bias : nullptr});
  const int64_t spatial = input.dim() - 2;
  std::vector<int64_t> sizes{input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t d = 0; d < spatial; ++d) {
    const auto at = [](at::IntArrayRef a, int64_t i) {
      return a.size() == 1 ? a[0] : a[size_t(i)];
    };
    const int64_t k =
        dilation.empty() ? weight.size(d + 2) : at(dilation, d) * (weight.size(d + 2) - 1) + 1;
    const int64_t in = input.size(d + 2);
    sizes.push_back(transposed ? (in - 1) * at(stride, d) - 2 * at(padding, d) + k +
                                     (output_padding.empty() ? 0 : at(output_padding, d))
                               : (in + 2 * at(padding, d) - k) / at(stride, d) + 1);
  }
  return at::empty(sizes, input.options());
}

at::Tensor relu_meta(const at::Tensor& self) {
  same_device({&self});
  return at::empty_like(self);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_meta(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& running_mean,
    const c10::optional<at::Tensor>& running_var, bool training, double, double) {
  same_device({&input, weight ? &*weight : nullptr, bias ? &*bias : nullptr,
               running_mean ? &*running_mean : nullptr, running_var ? &*running_var : nullptr});
  const int64_t saved = training ? input.size(1) : 0;
  return {at::empty_like(input), at::empty({saved}, input.options()),
          at::empty({saved}, input.options())};
}

at::Tensor min_meta(const at::Tensor& self) {  // the whole tensor's minimum, 0-d
  same_device({&self});
  return at::empty({}, self.options());
}

at::Tensor roll_meta(const at::Tensor& self, at::IntArrayRef, at::IntArrayRef) {
  same_device({&self});
  return at::empty_like(self);
}

// Gradients have their inputs' shapes (a mask entry false: undefined, as the CPU kernels).
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_meta(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool, at::IntArrayRef, int64_t,
    std::array<bool, 3> mask) {
  same_device({&grad_output, &input, &weight});
  return {mask[0] ? at::empty_like(input) : at::Tensor(),
          mask[1] ? at::empty_like(weight) : at::Tensor(),
          mask[2] ? at::empty({weight.size(0)}, weight.options()) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward_meta(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef, const at::Tensor& mean,
    const at::Tensor& rstd, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, std::array<bool, 3> mask) {
  same_device(
      {&grad_out, &input, &mean, &rstd, weight ? &*weight : nullptr, bias ? &*bias : nullptr});
  return {mask[0] ? at::empty_like(input) : at::Tensor(),
          mask[1] && weight ? at::empty_like(*weight) : at::Tensor(),
          mask[2] && bias ? at::empty_like(*bias) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward_meta(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var,
    const c10::optional<at::Tensor>& save_mean, const c10::optional<at::Tensor>& save_invstd, bool,
    double, std::array<bool, 3> mask) {
  same_device({&grad_out, &input, weight ? &*weight : nullptr,
               running_mean ? &*running_mean : nullptr, running_var ? &*running_var : nullptr,
               save_mean ? &*save_mean : nullptr, save_invstd ? &*save_invstd : nullptr});
  const int64_t c = input.size(1);
  return {mask[0] ? at::empty_like(input) : at::Tensor(),
          mask[1] ? at::empty({c}, input.options()) : at::Tensor(),
          mask[2] ? at::empty({c}, input.options()) : at::Tensor()};
}

TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("native_batch_norm_backward", batch_norm_backward_meta);
  m.impl("convolution_backward_overrideable", convolution_backward_meta);
  m.impl("native_layer_norm_backward", layer_norm_backward_meta);
  m.impl("roll", roll_meta);
  m.impl("relu", relu_meta);
  m.impl("native_batch_norm", batch_norm_meta);
  m.impl("min", min_meta);
  m.impl("max", min_meta);
  m.impl("index_select", index_select_meta);
  m.impl("where.self", where_meta);
  m.impl("where.self_out", where_out_meta);
  m.impl("abs.out", abs_out_meta);
  m.impl("convolution_overrideable", convolution_meta);
}

}  // namespace

bool meta_kernels_registered() {
  return true;
}

}  // namespace attnlab::testing
