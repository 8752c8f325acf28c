// models::gelu: at::gelu's values, and a first derivative that is right for every stride
// combination of input and incoming gradient, checked against the closed form
// Φ(x) + x·φ(x) in float64. LibTorch 1.13's own float gelu_backward is wrong for a
// contiguous input with a non-contiguous gradient (models/gelu.h); the test prints
// whether this LibTorch still is, and requires models::gelu to be right either way.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "models/gelu.h"
#include "models/model_registry.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

at::Tensor gelu_derivative(const at::Tensor& x) {
  const at::Tensor d = x.detach().to(at::kDouble);
  const double pi = 3.14159265358979323846;
  return 0.5 * (1 + at::erf(d / std::sqrt(2.0))) + d * at::exp(-0.5 * d * d) / std::sqrt(2 * pi);
}

// (1, 6, 64) tokens: contiguous, or a transposed view of (1, 64, 6), as image_to_tokens makes.
at::Tensor tokens(bool transposed) {
  return transposed ? at::randn({1, 64, 6}).transpose(1, 2) : at::randn({1, 6, 64});
}

TEST(Gelu, ForwardIsAtGelu) {
  const at::Tensor x = at::randn({3, 7, 5});
  EXPECT_TRUE(agree_up_to_reordering(models::gelu(x), at::gelu(x)));
  EXPECT_FALSE(models::gelu(x.requires_grad_(true)).grad_fn() == nullptr);
}

TEST(Gelu, GradientIsRightForEveryStrideCombination) {
  at::manual_seed(9);
  for (bool input_transposed : {false, true})
    for (bool grad_transposed : {false, true}) {
      const at::Tensor x = tokens(input_transposed).detach().requires_grad_(true);
      const at::Tensor g = tokens(grad_transposed);
      models::gelu(x).backward(g);
      const at::Tensor want = g.to(at::kDouble) * gelu_derivative(x);
      // float32 against the float64 closed form: the derivative rounded once or twice.
      const double diff = (x.grad().to(at::kDouble) - want).abs().max().item<double>();
      EXPECT_LE(diff, 1e-5) << "input " << (input_transposed ? "transposed" : "contiguous")
                            << ", gradient " << (grad_transposed ? "transposed" : "contiguous");

      const at::Tensor y = x.detach().clone().requires_grad_(true);
      at::gelu(y).backward(g);
      const double torch_diff = (y.grad().to(at::kDouble) - want).abs().max().item<double>();
      std::cout << "[gelu] input " << (input_transposed ? "T" : "C") << ", gradient "
                << (grad_transposed ? "T" : "C") << ": models::gelu off by " << diff
                << ", at::gelu off by " << torch_diff << "\n";
    }
}

// LITv2's downsampling is where the backbones met the bug. The float32 gradient of a
// logit with respect to the image agrees with the float64 one of the same weights (which
// itself agrees with finite differences); at::gelu's wrong float32 backward made them
// differ by O(1).
TEST(Gelu, Litv2Float32GradientAgreesWithFloat64AndFiniteDifferences) {
  const models::Json config = {{"arch", "litv2"},          {"img_size", 64},
                               {"patch_size", 4},          {"embed_dim", 8},
                               {"depths", {1, 1, 1, 1}},   {"num_heads", {1, 1, 2, 2}},
                               {"local_ws", {0, 0, 2, 1}}, {"num_classes", 4}};
  at::manual_seed(0);
  auto model = models::make_backbone(config);
  model->eval();
  const at::Tensor image = at::randn({1, 3, 64, 96});
  const auto grad_of = [&](const at::Tensor& input) {
    const at::Tensor x = input.detach().clone().requires_grad_(true);
    model->run(x, {}).logits[0][1].backward();
    return x.grad().to(at::kDouble);
  };
  const at::Tensor g32 = grad_of(image);
  model->to(at::kDouble);
  const at::Tensor g64 = grad_of(image.to(at::kDouble));
  const double rel = (g32 - g64).abs().max().item<double>() / g64.abs().max().item<double>();
  std::cout << "[gelu] litv2 d logit / d image, float32 vs float64: max|d|/max|ref| = " << rel
            << "\n";
  EXPECT_LE(rel, 1e-3);

  at::NoGradGuard no_grad;
  const at::Tensor x64 = image.to(at::kDouble);
  const double h = 1e-6;
  double worst = 0;
  for (int64_t i : {0, 1000, 4567, 9001, 12345, 18000}) {
    at::Tensor plus = x64.clone(), minus = x64.clone();
    plus.view({-1})[i] += h;
    minus.view({-1})[i] -= h;
    const double fd = (model->run(plus, {}).logits[0][1].item<double>() -
                       model->run(minus, {}).logits[0][1].item<double>()) /
                      (2 * h);
    worst = std::max(
        worst, std::abs(fd - g64.view({-1})[i].item<double>()) / std::max(1e-3, std::abs(fd)));
  }
  std::cout << "[gelu] litv2 float64 gradient vs finite differences: worst relative error " << worst
            << "\n";
  EXPECT_LE(worst, 1e-5);
}

}  // namespace
}  // namespace attnlab::testing
