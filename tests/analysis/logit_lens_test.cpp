// Logit-lens statistics (core/analysis/logit_lens): identical rows have no divergence; a
// two-class KL by hand in both directions (so the order p_final ‖ p_l is checked); the
// label's rank and probability; bad input.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/analysis/logit_lens.h"

namespace attnlab::testing {
namespace {

using analysis::lens_statistics;

TEST(LogitLens, IdenticalRowsHaveNoDivergence) {
  const at::Tensor logits = at::tensor({1.0f, 3.0f, 2.0f}).repeat({4, 1});
  const auto s = lens_statistics(logits);
  ASSERT_EQ(s.layers.size(), 4u);
  // The last row against itself: every term is p·(x − x) = 0, so exactly 0.
  EXPECT_EQ(s.layers.back().kl, 0.0);
  for (const auto& l : s.layers) {
    // Other rows hold the same numbers; were log_softmax to round them differently by an
    // ulp (~2e-16 at |log p| ≈ 2), the KL would be Σ p·δ <= 2e-16: 1e-14 bounds it.
    EXPECT_NEAR(l.kl, 0.0, 1e-14);
    EXPECT_EQ(l.top1, 1);
    EXPECT_TRUE(l.agrees);
    EXPECT_EQ(l.label_rank, 0);
    EXPECT_TRUE(std::isnan(l.label_probability));
    // softmax(1, 3, 2)[1] = 1 / (1 + e⁻¹ + e⁻²) ≈ 0.665; float32 logits cast exactly, the
    // float64 exp and sum round to a few ulps: 1e-14.
    EXPECT_NEAR(l.top1_probability, 1.0 / (1.0 + std::exp(-1.0) + std::exp(-2.0)), 1e-14);
  }
}

// p_final = softmax(log 3, 0) = (3/4, 1/4) and p_0 = softmax(0, 0) = (1/2, 1/2):
//   KL(p_final ‖ p_0) = 3/4·log(3/4 ÷ 1/2) + 1/4·log(1/4 ÷ 1/2) = 0.75·log 1.5 + 0.25·log 0.5
//                     ≈ 0.75·0.405465 − 0.25·0.693147 ≈ 0.130812,
// and with the rows swapped (final (1/2, 1/2), layer (3/4, 1/4)):
//   KL = 1/2·log(1/2 ÷ 3/4) + 1/2·log(1/2 ÷ 1/4) = 0.5·log(4/3) ≈ 0.143841.
// Float64 logs and exps of these small numbers are within a few ulps: 1e-14.
TEST(LogitLens, TwoClassKlByHand) {
  const double log3 = std::log(3.0);
  const auto s = lens_statistics(at::tensor({0.0, 0.0, log3, 0.0}, at::kDouble).reshape({2, 2}));
  EXPECT_NEAR(s.layers[0].kl, 0.75 * std::log(1.5) + 0.25 * std::log(0.5), 1e-14);
  EXPECT_EQ(s.layers[1].kl, 0.0);
  EXPECT_EQ(s.layers[0].top1, 0);  // a tie: the lowest index
  EXPECT_NEAR(s.layers[0].top1_probability, 0.5, 1e-14);
  EXPECT_NEAR(s.layers[1].top1_probability, 0.75, 1e-14);
  EXPECT_TRUE(s.layers[0].agrees);
  const auto swapped =
      lens_statistics(at::tensor({log3, 0.0, 0.0, 0.0}, at::kDouble).reshape({2, 2}));
  EXPECT_NEAR(swapped.layers[0].kl, 0.5 * std::log(4.0 / 3.0), 1e-14);
}

// Rows (the last is the model's): label 1 is below two classes in rows 0 and 1, and tied
// with class 0 at the top of row 2 (ties count for the label: rank 1).
TEST(LogitLens, RanksAndProbabilitiesOfTheLabel) {
  const at::Tensor logits =
      at::tensor({3.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1.0, 1.0, 0.0, 0.0}, at::kDouble)
          .reshape({3, 4});
  const auto s = lens_statistics(logits, 1);
  EXPECT_EQ(s.label, 1);
  EXPECT_EQ(s.layers[0].label_rank, 3);
  EXPECT_EQ(s.layers[1].label_rank, 3);
  EXPECT_EQ(s.layers[2].label_rank, 1);
  EXPECT_EQ(s.layers[0].top1, 0);
  EXPECT_EQ(s.layers[1].top1, 3);
  EXPECT_EQ(s.layers[2].top1, 0);  // tied with class 1: the lowest index
  EXPECT_TRUE(s.layers[0].agrees);
  EXPECT_FALSE(s.layers[1].agrees);
  EXPECT_TRUE(s.layers[2].agrees);
  // Row 2: p(1) = e / (2e + 2); row 1: p(1) = e / (1 + e + e² + e³). A few ulps: 1e-14.
  const double e = std::exp(1.0);
  EXPECT_NEAR(s.layers[2].label_probability, e / (2 * e + 2), 1e-14);
  EXPECT_NEAR(s.layers[1].label_probability, e / (1 + e + e * e + e * e * e), 1e-14);
  for (const auto& l : s.layers) EXPECT_GE(l.kl, 0.0);
}

TEST(LogitLens, BadInputThrows) {
  EXPECT_THROW(lens_statistics(at::zeros({4})), std::invalid_argument);
  EXPECT_THROW(lens_statistics(at::zeros({2, 3, 4})), std::invalid_argument);
  EXPECT_THROW(lens_statistics(at::zeros({0, 4})), std::invalid_argument);
  EXPECT_THROW(lens_statistics(at::zeros({2, 0})), std::invalid_argument);
  for (const double bad : {double(NAN), double(INFINITY)}) {
    at::Tensor z = at::zeros({2, 3});
    z[0][1] = bad;
    EXPECT_THROW(lens_statistics(z), std::invalid_argument) << bad;
  }
  EXPECT_THROW(lens_statistics(at::zeros({2, 3}), 3), std::invalid_argument);
  EXPECT_THROW(lens_statistics(at::zeros({2, 3}), -2), std::invalid_argument);
  EXPECT_NO_THROW(lens_statistics(at::zeros({2, 3}), 2));
}

}  // namespace
}  // namespace attnlab::testing
