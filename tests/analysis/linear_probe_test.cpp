// Linear probe (core/analysis/linear_probe): separable data is learnt perfectly and the
// optimum's gradient, checked with autograd, is small; identical features with unequal
// labels give the majority class and the log-odds of the class frequencies by hand; the
// stratified split by hand; bad input.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/analysis/linear_probe.h"

namespace attnlab::testing {
namespace {

using analysis::ProbeOptions;
using analysis::train_linear_probe;

at::Tensor probe_test_labels(std::vector<int64_t> v) {
  return at::tensor(v, at::kLong);
}

// The objective's gradient at the returned weights, by autograd (not the analytic formula
// the probe uses): max |∂/∂W|, |∂/∂b|.
double probe_test_gradient(const analysis::ProbeResult& r, const at::Tensor& x, const at::Tensor& y,
                           double l2) {
  at::AutoGradMode grad(true);
  const at::Tensor xs = (x.to(at::kDouble) - r.probe.mean) / r.probe.std;
  at::Tensor w = r.probe.weight.clone().requires_grad_(true);
  at::Tensor b = r.probe.bias.clone().requires_grad_(true);
  const at::Tensor logp = at::log_softmax(at::matmul(xs, w.t()) + b, 1);
  const at::Tensor loss = -logp.gather(1, y.unsqueeze(1)).mean() + 0.5 * l2 * (w * w).sum();
  loss.backward();
  return std::max(w.grad().abs().max().item<double>(), b.grad().abs().max().item<double>());
}

// Points on either side of x = 0 with a second feature: separable, so with the l2 term the
// optimum exists and L-BFGS reaches it. The training set maps onto itself under x ↦ −x
// with the labels swapped ((−3, 1) ↔ (3, 1), (−2, −1) ↔ (2, −1), (−1, 0) ↔ (1, 0)), and the
// optimum is unique (strictly convex in W), so its boundary is x = 0 and the second
// feature's weights are equal for both classes: test points at x = ±0.5 with a large
// second feature fall on their side.
TEST(LinearProbe, SeparatesPointsOnEitherSideOfZero) {
  const at::Tensor x =
      at::tensor({-3.0, 1.0, -2.0, -1.0, -1.0, 0.0, 1.0, 0.0, 2.0, -1.0, 3.0, 1.0}, at::kDouble)
          .reshape({6, 2});
  const at::Tensor y = probe_test_labels({0, 0, 0, 1, 1, 1});
  const at::Tensor tx = at::tensor({-2.5, 0.0, -0.5, 3.0, 0.5, -3.0, 2.5, 0.0}).reshape({4, 2});
  const at::Tensor ty = probe_test_labels({0, 0, 1, 1});
  const auto r = train_linear_probe(x, y, tx, ty);
  EXPECT_EQ(r.train_accuracy, 1.0);  // 6 of 6 and 4 of 4: exact divisions
  EXPECT_EQ(r.test_accuracy, 1.0);
  EXPECT_TRUE(r.converged);
  EXPECT_GT(r.iterations, 0);
  EXPECT_LT(r.loss, std::log(2.0));  // the objective at W = 0, b = 0 is log K
  // converged means the analytic max |gradient| <= 1e-6; autograd's gradient at the same
  // weights is the same sum in another order (a few ulps of terms of size <= 1): 1e-6 plus
  // 1e-12 of rounding.
  EXPECT_LE(probe_test_gradient(r, x, y, 1e-3), 1e-6 + 1e-12);
  EXPECT_TRUE(at::equal(analysis::predict(r.probe, tx), ty));
  EXPECT_EQ(analysis::probe_logits(r.probe, tx).sizes(), (at::IntArrayRef{4, 2}));
}

TEST(LinearProbe, ThreeClassesAlongThreeAxes) {
  std::vector<double> v;
  std::vector<int64_t> labels;
  for (int64_t k = 0; k < 3; ++k)
    for (const double t : {1.0, 2.0, 3.0}) {
      for (int64_t j = 0; j < 3; ++j) v.push_back(j == k ? t : 0.0);
      labels.push_back(k);
    }
  const at::Tensor x = at::tensor(v, at::kDouble).reshape({9, 3});
  const at::Tensor tx = at::eye(3, at::kDouble) * 1.5;
  const auto r = train_linear_probe(x, probe_test_labels(labels), tx, probe_test_labels({0, 1, 2}));
  EXPECT_EQ(r.train_accuracy, 1.0);
  EXPECT_EQ(r.test_accuracy, 1.0);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.loss, std::log(3.0));
  EXPECT_EQ(r.probe.weight.sizes(), (at::IntArrayRef{3, 3}));
}

// Identical features: standardised they are all 0 (std 0 taken as 1), so only the bias can
// learn, and the optimum of the mean cross-entropy over b is softmax(b) = the class
// frequencies (3/5, 2/5): b_0 − b_1 = log 1.5, every input predicted as class 0. Train
// accuracy 3/5, test accuracy (labels 1, 0) 1/2.
TEST(LinearProbe, IdenticalFeaturesPredictTheMajorityClass) {
  const at::Tensor x = at::tensor({1.0, 2.0}, at::kDouble).repeat({5, 1});
  const at::Tensor y = probe_test_labels({0, 1, 0, 1, 0});
  const auto r = train_linear_probe(x, y, x.slice(0, 0, 2), probe_test_labels({1, 0}));
  EXPECT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.train_accuracy, 0.6);
  EXPECT_DOUBLE_EQ(r.test_accuracy, 0.5);
  EXPECT_EQ(r.probe.weight.abs().max().item<double>(), 0.0);  // its gradient is exactly 0
  // At convergence |softmax(b) − (0.6, 0.4)| <= 1e-6 per class, so log(p0/p1) is within
  // 1e-6·(1/0.6 + 1/0.4) ≈ 4.2e-6 of log 1.5: 1e-5.
  EXPECT_NEAR((r.probe.bias[0] - r.probe.bias[1]).item<double>(), std::log(1.5), 1e-5);
  // Equal counts: b = 0 is already optimal (gradient exactly 0), no iteration, and the tie
  // goes to the lowest class.
  const at::Tensor even = probe_test_labels({0, 1, 0, 1});
  const auto tie = train_linear_probe(x.slice(0, 0, 4), even, x.slice(0, 0, 4), even);
  EXPECT_EQ(tie.iterations, 0);
  EXPECT_TRUE(tie.converged);
  EXPECT_TRUE(at::equal(analysis::predict(tie.probe, x), at::zeros({5}, at::kLong)));
  EXPECT_DOUBLE_EQ(tie.train_accuracy, 0.5);
}

// Ten samples: class 0 at 0, 2, 4, 6, 8 and class 1 at 1, 3, 5, 7, 9 (alternating); each
// class's 5th sample (count 4) is the test set: 8 and 9. Every 2nd: counts 1 and 3.
TEST(LinearProbe, TheSplitTakesEveryFifthSampleOfEachClass) {
  const at::Tensor alternating = probe_test_labels({0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  auto s = analysis::split_for_probe(10, alternating);
  EXPECT_TRUE(at::equal(s.test, probe_test_labels({8, 9})));
  EXPECT_TRUE(at::equal(s.train, probe_test_labels({0, 1, 2, 3, 4, 5, 6, 7})));
  s = analysis::split_for_probe(10, alternating, 2);
  EXPECT_TRUE(at::equal(s.test, probe_test_labels({2, 3, 6, 7})));
  // Six of class 0 then four of class 1: only class 0 has a 5th sample (index 4).
  s = analysis::split_for_probe(10, probe_test_labels({0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_TRUE(at::equal(s.test, probe_test_labels({4})));
  EXPECT_EQ(s.train.size(0), 9);
}

TEST(LinearProbe, BadInputThrows) {
  const at::Tensor x = at::tensor({0.0, 1.0, 2.0, 3.0}, at::kDouble).reshape({4, 1});
  const at::Tensor y = probe_test_labels({0, 0, 1, 1});
  auto train = [&](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                   const at::Tensor& d,
                   ProbeOptions o = {}) { return train_linear_probe(a, b, c, d, o); };
  EXPECT_THROW(train(x.reshape({4}), y, x, y), std::invalid_argument);
  EXPECT_THROW(train(x, y.slice(0, 0, 3), x, y), std::invalid_argument);
  EXPECT_THROW(train(x, y.to(at::kFloat), x, y), std::invalid_argument);
  EXPECT_THROW(train(x, y, at::zeros({4, 2}), y), std::invalid_argument);
  EXPECT_THROW(train(x, y, x, y.slice(0, 0, 2)), std::invalid_argument);
  EXPECT_THROW(train(x, y, x.slice(0, 0, 0), y.slice(0, 0, 0)), std::invalid_argument);
  EXPECT_THROW(train(x, probe_test_labels({1, 1, 1, 1}), x, y), std::invalid_argument);
  EXPECT_THROW(train(x, probe_test_labels({0, -1, 1, 1}), x, y), std::invalid_argument);
  at::Tensor nan = x.clone();
  nan[2][0] = NAN;
  EXPECT_THROW(train(nan, y, x, y), std::invalid_argument);
  EXPECT_THROW(train(x, y, nan, y), std::invalid_argument);
  ProbeOptions o;
  o.classes = 2;
  EXPECT_THROW(train(x, y, x, probe_test_labels({0, 2, 1, 1}), o), std::invalid_argument);
  for (auto bad : {&ProbeOptions::l2, &ProbeOptions::tolerance}) {
    ProbeOptions b;
    b.*bad = -1.0;
    EXPECT_THROW(train(x, y, x, y, b), std::invalid_argument);
  }
  ProbeOptions iters;
  iters.max_iterations = -1;
  EXPECT_THROW(train(x, y, x, y, iters), std::invalid_argument);
  EXPECT_THROW(analysis::predict({}, x), std::invalid_argument);
  EXPECT_THROW(analysis::split_for_probe(4, y, 1), std::invalid_argument);
  EXPECT_THROW(analysis::split_for_probe(5, y), std::invalid_argument);
  EXPECT_THROW(analysis::split_for_probe(4, y), std::invalid_argument);  // no class has 5
}

}  // namespace
}  // namespace attnlab::testing
