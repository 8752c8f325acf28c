// Feature PCA to RGB (core/analysis/feature_pca): hand-built tokens along three orthogonal
// directions give those directions back with their hand-computed variance ratios; a
// central object is the foreground whatever the sign of the features; images fitted
// together share colours; the background is black; bad input throws.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/feature_pca.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

using analysis::FeaturePcaOptions;

// Orthonormal directions in C = 4 whose largest |loading| is tied (2/3 twice), so the
// documented sign rule (lowest index among the ties positive) is exercised as well.
at::Tensor fpca_test_directions() {
  return at::tensor({1.0, 2.0, 2.0, 0.0, 2.0, 1.0, -2.0, 0.0, 2.0, -2.0, 1.0, 0.0}, at::kDouble)
             .reshape({3, 4}) /
         3.0;
}

// A 6×6 grid (C = 3) whose central 2×2 tokens carry 5 on channel 0 and the rest 0, with
// small deterministic wiggles (amplitude 0.1) on channels 1 and 2 everywhere.
at::Tensor fpca_test_object_grid() {
  at::Tensor g = at::zeros({6, 6, 3}, at::kDouble);
  for (int64_t y = 0; y < 6; ++y)
    for (int64_t x = 0; x < 6; ++x) {
      const double i = double(y * 6 + x);
      g[y][x][1] = 0.1 * std::sin(i);
      g[y][x][2] = 0.1 * std::cos(1.7 * i);
    }
  g.slice(0, 2, 4).slice(1, 2, 4).select(2, 0).fill_(5.0);
  return g;
}

at::Tensor fpca_test_centre_mask() {
  at::Tensor m = at::zeros({6, 6}, at::kBool);
  m.slice(0, 2, 4).slice(1, 2, 4).fill_(true);
  return m;
}

// Eight tokens ±3·u1 ± 2·u2 ± 1·u3 (every sign combination) plus an offset, as a 2×4 grid:
// mean = the offset, population variances 9, 4, 1 along u1, u2, u3 and 0 along the fourth
// direction, total 14.
TEST(FeaturePca, RecoversThreeOrthogonalDirectionsAndTheirVariances) {
  const at::Tensor u = fpca_test_directions();
  const at::Tensor offset = at::tensor({0.5, -1.0, 2.0, 3.0}, at::kDouble);
  at::Tensor tokens = at::empty({8, 4}, at::kDouble);
  for (int64_t i = 0; i < 8; ++i) {
    const double a = (i & 1) ? 3.0 : -3.0, b = (i & 2) ? 2.0 : -2.0, c = (i & 4) ? 1.0 : -1.0;
    tokens[i].copy_(offset + a * u[0] + b * u[1] + c * u[2]);
  }
  FeaturePcaOptions o;
  o.foreground = false;
  const auto fit = analysis::fit_feature_pca({tokens.reshape({2, 4, 4}).to(at::kFloat)}, o);
  // Float32 tokens of magnitude <= 7: each carries a relative error of 2⁻²⁴ ≈ 6e-8 after
  // the cast, so the covariance moves by ~7·6e-8·2 ≈ 1e-6 and eigenvectors (smallest gap
  // 1) by about as much: 1e-5 bounds both with room. The cast also breaks the tie of the
  // two 2/3 loadings by more than the rule's 1e-9, so the sign is compared in float64
  // below; here each row up to sign.
  const double cast_tol = 1e-5;
  EXPECT_LE(max_abs_diff(fit.basis.mean, offset), cast_tol);
  for (int64_t k = 0; k < 3; ++k)
    EXPECT_LE(std::min(max_abs_diff(fit.basis.components[k], u[k]),
                       max_abs_diff(fit.basis.components[k], -u[k])),
              cast_tol)
        << k;
  EXPECT_LE(max_abs_diff(fit.basis.explained,
                         at::tensor({9.0 / 14.0, 4.0 / 14.0, 1.0 / 14.0}, at::kDouble)),
            cast_tol);
  // In float64 the same: eigh's error is ~eps·‖cov‖/gap = 2.2e-16·9/1 ≈ 2e-15 per loading,
  // centring adds a few ulps of 7: 1e-12 leaves three orders of magnitude.
  const auto exact = analysis::fit_feature_pca({tokens.reshape({2, 4, 4})}, o);
  const double tol = 1e-12;
  EXPECT_LE(max_abs_diff(exact.basis.components, u), tol);
  EXPECT_NEAR(exact.basis.explained[0].item<double>(), 9.0 / 14.0, tol);
  EXPECT_NEAR(exact.basis.explained[1].item<double>(), 4.0 / 14.0, tol);
  EXPECT_NEAR(exact.basis.explained[2].item<double>(), 1.0 / 14.0, tol);
  // Each channel scales its ±amplitude to 1 and 0: token 5 = (+3, −2, +1) is (1, 0, 1).
  const at::Tensor rgb = exact.images[0].rgb.reshape({8, 3});
  EXPECT_LE(max_abs_diff(rgb[5], at::tensor({1.0, 0.0, 1.0}, at::kDouble)), tol);
  EXPECT_LE(max_abs_diff(rgb[2], at::tensor({0.0, 1.0, 0.0}, at::kDouble)), tol);
  EXPECT_TRUE(exact.images[0].foreground.all().item<bool>());
}

TEST(FeaturePca, MissingDirectionsAreZeroComponents) {
  FeaturePcaOptions o;
  o.foreground = false;
  // C = 2: two directions at most; the third row and ratio are zero, and so is blue.
  const at::Tensor two = at::tensor({2.0, 0.0, -2.0, 0.0, 0.0, 1.0, 0.0, -1.0}, at::kDouble);
  const auto fit = analysis::fit_feature_pca({two.reshape({2, 2, 2})}, o);
  EXPECT_EQ(fit.basis.components[2].abs().max().item<double>(), 0.0);  // assigned, not computed
  EXPECT_EQ(fit.basis.explained[2].item<double>(), 0.0);
  EXPECT_EQ(fit.images[0].rgb.select(2, 2).abs().max().item<double>(), 0.0);
  // Variances 2 and 0.5 of 2.5 (float64 of small integers and halves: a few ulps at most).
  EXPECT_NEAR(fit.basis.explained[0].item<double>(), 0.8, 1e-12);
  EXPECT_NEAR(fit.basis.explained[1].item<double>(), 0.2, 1e-12);
  // Rank one in C = 3 (tokens on a line): only the first component exists.
  const at::Tensor line =
      at::arange(6, at::kDouble).unsqueeze(1) * at::tensor({1.0, -2.0, 2.0}, at::kDouble);
  const auto one = analysis::fit_feature_pca({line.reshape({2, 3, 3})}, o);
  EXPECT_EQ(one.basis.components.slice(0, 1).abs().max().item<double>(), 0.0);
  // The line's direction (1, −2, 2)/3 with its largest-|loading| tie at indices 1 and 2: the
  // lowest index positive, so −(1, −2, 2)/3. eigh's error ~1e-15: 1e-12.
  EXPECT_LE(max_abs_diff(one.basis.components[0], at::tensor({-1.0, 2.0, -2.0}, at::kDouble) / 3.0),
            1e-12);
  EXPECT_NEAR(one.basis.explained[0].item<double>(), 1.0, 1e-12);
}

TEST(FeaturePca, TheForegroundIsTheCentralObjectWhateverTheSign) {
  const auto fit = analysis::fit_feature_pca({fpca_test_object_grid()});
  EXPECT_TRUE(at::equal(fit.images[0].foreground, fpca_test_centre_mask()));
  EXPECT_FALSE(fit.basis.fg_flipped);  // +channel 0 already puts the object high
  // The object's scaled first component is ~1, the background's ~0 (the wiggles are 2% of
  // the object's step): 0.1 either side of them is well inside the threshold's margin.
  EXPECT_GT(fit.images[0].first.index({fpca_test_centre_mask()}).min().item<double>(), 0.9);
  EXPECT_LT(fit.images[0].first.index({~fpca_test_centre_mask()}).max().item<double>(), 0.1);
  // Negated features: the direction keeps its sign (the largest loading positive), so the
  // object projects low and the border rule flips it back.
  const auto neg = analysis::fit_feature_pca({-fpca_test_object_grid()});
  EXPECT_TRUE(at::equal(neg.images[0].foreground, fpca_test_centre_mask()));
  EXPECT_TRUE(neg.basis.fg_flipped);
  EXPECT_GT(neg.images[0].first.index({fpca_test_centre_mask()}).min().item<double>(), 0.9);
}

TEST(FeaturePca, TheBackgroundIsBlackAndTheObjectIsNot) {
  const auto fit = analysis::fit_feature_pca({fpca_test_object_grid()});
  const at::Tensor rgb = fit.images[0].rgb;
  const at::Tensor bg = ~fpca_test_centre_mask();
  // Background pixels are assigned 0, not computed: exactly black.
  EXPECT_EQ(rgb.index({bg}).abs().max().item<double>(), 0.0);
  // The four object tokens differ in channels 1 and 2 only: some of them are coloured.
  EXPECT_GT(rgb.index({~bg}).max().item<double>(), 0.5);
  EXPECT_GE(rgb.min().item<double>(), 0.0);
  EXPECT_LE(rgb.max().item<double>(), 1.0);
}

TEST(FeaturePca, ImagesFittedTogetherShareColours) {
  at::manual_seed(11);
  const at::Tensor a = at::randn({4, 4, 6}, at::kDouble);
  at::Tensor b = at::randn({3, 5, 6}, at::kDouble);
  b[1][2].copy_(a[2][1]);  // one identical token in both images
  FeaturePcaOptions o;
  o.foreground = false;
  const auto fit = analysis::fit_feature_pca({a, b}, o);
  ASSERT_EQ(fit.images.size(), 2u);
  // One token, two matmuls of different sizes: the projections differ by a few ulps of
  // |x|·|v| ≈ 5 (~1e-15), divided by a component's range (~4): 1e-12 is ample.
  EXPECT_LE(max_abs_diff(fit.images[0].rgb[2][1], fit.images[1].rgb[1][2]), 1e-12);
  // The fit's images are apply_feature_pca's results on them (one function: equal).
  const auto again = analysis::apply_feature_pca(fit.basis, b);
  EXPECT_TRUE(at::equal(again.rgb, fit.images[1].rgb));
  // A new image holding a fitted token gets that token's colour.
  at::Tensor c = at::randn({2, 2, 6}, at::kDouble);
  c[0][1].copy_(a[2][1]);
  const auto other = analysis::apply_feature_pca(fit.basis, c);
  EXPECT_LE(max_abs_diff(other.rgb[0][1], fit.images[0].rgb[2][1]), 1e-12);
  EXPECT_GE(other.rgb.min().item<double>(), 0.0);
  EXPECT_LE(other.rgb.max().item<double>(), 1.0);
}

TEST(FeaturePca, BadInputThrows) {
  using analysis::fit_feature_pca;
  const at::Tensor g = fpca_test_object_grid();
  EXPECT_THROW(fit_feature_pca({}), std::invalid_argument);
  EXPECT_THROW(fit_feature_pca({g.reshape({36, 3})}), std::invalid_argument);
  EXPECT_THROW(fit_feature_pca({g, at::zeros({2, 2, 4})}), std::invalid_argument);
  EXPECT_THROW(fit_feature_pca({at::zeros({0, 2, 3})}), std::invalid_argument);
  at::Tensor nan = g.clone();
  nan[1][1][1] = NAN;
  EXPECT_THROW(fit_feature_pca({nan}), std::invalid_argument);
  for (const double t : {-0.1, 1.5, double(NAN)}) {
    FeaturePcaOptions o;
    o.threshold = t;
    EXPECT_THROW(fit_feature_pca({g}, o), std::invalid_argument) << t;
  }
  FeaturePcaOptions all_out;
  all_out.threshold = 1.0;  // no scaled value is above 1
  try {
    fit_feature_pca({g}, all_out);
    ADD_FAILURE() << "no foreground token did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lower threshold"), std::string::npos) << e.what();
  }
  const auto fit = fit_feature_pca({g});
  EXPECT_THROW(analysis::apply_feature_pca(fit.basis, at::zeros({2, 2, 4})), std::invalid_argument);
  EXPECT_THROW(analysis::apply_feature_pca({}, g), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
