// See gelu.h: at::gelu forward, gelu_backward on contiguous operands.
#include "models/gelu.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace attnlab::models {
namespace {

struct ContiguousGradGelu : torch::autograd::Function<ContiguousGradGelu> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return at::gelu(x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    return {at::gelu_backward(grads[0].contiguous(), x.contiguous())};
  }
};

}  // namespace

at::Tensor gelu(const at::Tensor& x) {
  // Nothing to differentiate: the plain kernel, no autograd node.
  if (!at::GradMode::is_enabled() || !x.requires_grad()) return at::gelu(x);
  return ContiguousGradGelu::apply(x);
}

}  // namespace attnlab::models
