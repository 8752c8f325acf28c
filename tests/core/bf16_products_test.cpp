// bf16 matrix products accumulate in fp32 on every CPU (core/runtime/bf16_products.h).
// LibTorch 1.13 without AVX-512 adds a bf16 product's terms into the bf16 output, so a row
// of 1024 ones times a column of 1024 ones gives 256; with the kernels installed every
// product a forward uses gives 1024 (exact: 1024 is a bf16 number and fp32 adds 1024 ones
// exactly), and a random product is within bf16's one rounding of the exact result.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/bf16_products.h"
#include "core/runtime/precision.h"
#include "tests/support/precision_skip.h"

namespace attnlab::testing {
namespace {

constexpr int64_t K = 1024;

float first(const at::Tensor& t) {
  return t.flatten()[0].item<float>();
}

// Each product a forward reaches (directly, or through matmul, linear, einsum, conv2d).
std::vector<std::pair<std::string, std::function<at::Tensor()>>> products() {
  const auto ones = [](at::IntArrayRef shape) { return at::ones(shape, at::kBFloat16); };
  const at::Tensor a = ones({8, K}), b = ones({K, 8});
  return {
      {"mm", [=] { return at::mm(a, b); }},
      {"mm, transposed left", [=] { return at::mm(a.t().contiguous().t(), b); }},
      {"bmm", [=] { return at::bmm(a.unsqueeze(0), b.unsqueeze(0)); }},
      {"addmm",
       [=] {
         return at::addmm(ones({8, 8}) * 0, a, b);
       }},
      {"baddbmm",
       [=] {
         return at::baddbmm(ones({1, 8, 8}) * 0, a.unsqueeze(0), b.unsqueeze(0));
       }},
      {"mv", [=] { return at::mv(a, ones({K})); }},
      {"dot", [=] { return at::dot(ones({K}), ones({K})); }},
      {"matmul 3d x 2d",
       [=] {
         return at::matmul(a.unsqueeze(0).expand({3, 8, K}), b);
       }},
      {"linear", [=] { return at::linear(a, b.t()); }},
      {"einsum",
       [=] {
         return at::einsum("bij,bjk->bik", {a.unsqueeze(0), b.unsqueeze(0)});
       }},
      {"conv2d 4x16x16",
       [=] {
         return at::conv2d(ones({1, 4, 16, 16}), ones({2, 4, 16, 16}), ones({2}) * 0, {16, 16});
       }},
  };
}

TEST(Bf16Products, EveryProductAddsItsTermsInFp32) {
  ATTNLAB_SKIP_UNLESS_CPU_RUNS(at::kBFloat16);
  // What a bf16 target does first (select_target installs the kernels where needed).
  runtime::select_target("cpu", "bf16");
  std::printf("bf16 products on this CPU: %s\n", runtime::bf16_products_description().c_str());
  const at::NoGradGuard no_grad;
  for (const auto& [name, product] : products()) {
    const at::Tensor r = product();
    EXPECT_EQ(r.scalar_type(), at::kBFloat16) << name;
    EXPECT_EQ(first(r), float(K)) << name << ": the sum of " << K << " ones";
  }
}

// A random product: operands are bf16 numbers, so the exact result (float64) differs from
// the bf16 one by its final rounding, at most u = 2^-8 of |result| ≤ u·Σ|a_i b_i|, plus
// fp32's accumulation, at most K·2^-24·Σ|a_i b_i| (a worst case; the order is the BLAS's).
TEST(Bf16Products, ARandomProductIsOneRoundingFromExact) {
  ATTNLAB_SKIP_UNLESS_CPU_RUNS(at::kBFloat16);
  runtime::select_target("cpu", "bf16");
  const at::NoGradGuard no_grad;
  at::manual_seed(3);
  const at::Tensor a = at::randn({64, K}).to(at::kBFloat16),
                   b = at::randn({K, 48}).to(at::kBFloat16);
  const at::Tensor exact = at::mm(a.to(at::kDouble), b.to(at::kDouble));
  const at::Tensor magnitude = at::mm(a.to(at::kDouble).abs(), b.to(at::kDouble).abs());
  const double bound = std::ldexp(1.0, -8) + double(K) * std::ldexp(1.0, -24);
  for (const auto& [name, r] : std::vector<std::pair<std::string, at::Tensor>>{
           {"mm", at::mm(a, b)},
           {"matmul", at::matmul(a.unsqueeze(0), b)[0]},
           {"linear", at::linear(a, b.t().contiguous())}}) {
    const double worst = ((r.to(at::kDouble) - exact).abs() / magnitude).max().item<double>();
    std::printf("%-7s max |bf16 - exact| / sum|a b| = %.2e (bound %.2e)\n", name.c_str(), worst,
                bound);
    EXPECT_LE(worst, bound) << name;
  }
}

// fp32 and float64 products still reach LibTorch's own kernels: the same numbers as the
// float64 reference to fp32's accumulation error.
TEST(Bf16Products, OtherDtypesAreLibTorchsOwn) {
  runtime::install_fp32_accumulating_bf16_products();
  at::manual_seed(4);
  const at::Tensor a = at::randn({16, 256}), b = at::randn({256, 8});
  const at::Tensor exact = at::mm(a.to(at::kDouble), b.to(at::kDouble));
  const at::Tensor magnitude = at::mm(a.to(at::kDouble).abs(), b.to(at::kDouble).abs());
  const double fp32_bound = 256 * std::ldexp(1.0, -24);  // K·u for fp32, worst case
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  EXPECT_LE(((at::mm(a, b).to(at::kDouble) - exact).abs() / magnitude).max().item<double>(),
            fp32_bound);
  EXPECT_EQ(at::mm(a.to(at::kDouble), b.to(at::kDouble)).scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(at::mm(a.to(at::kDouble), b.to(at::kDouble)), exact));
}

}  // namespace
}  // namespace attnlab::testing
