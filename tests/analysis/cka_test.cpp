// Linear CKA (core/analysis/cka, the `cka` analysis): the unbiased HSIC_1 against its
// definition written out term by term; CKA of a layer with itself is 1 and CKA is
// invariant to orthogonal transforms and isotropic scaling; independent features give ≈ 0
// (the estimator is unbiased, the biased one is not); pooling onto the coarsest grid;
// and through the session: an L×L array, diagonal 1, the derived cka_layers table equal to
// the ratio of mean HSICs over two images.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/cka.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

// HSIC_1 with every sum written as a loop (Song et al. 2012, eq. 5).
double naive_hsic(const at::Tensor& k_in, const at::Tensor& l_in) {
  const at::Tensor k = k_in.to(at::kDouble).clone(), l = l_in.to(at::kDouble).clone();
  const int64_t n = k.size(0);
  auto K = k.accessor<double, 2>();
  auto L = l.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) K[i][i] = L[i][i] = 0;
  double trace = 0, sum_k = 0, sum_l = 0, cross = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      trace += K[i][j] * L[j][i];
      sum_k += K[i][j];
      sum_l += L[i][j];
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < n; ++q) cross += K[i][j] * L[j][q];
  const double nd = double(n);
  return (trace + sum_k * sum_l / ((nd - 1) * (nd - 2)) - 2 / (nd - 2) * cross) / (nd * (nd - 3));
}

at::Tensor gram(const at::Tensor& x) { return at::matmul(x, x.t()); }

TEST(Cka, UnbiasedHsicIsItsDefinition) {
  at::manual_seed(1);
  const at::Tensor x = at::randn({9, 5}, at::kDouble), y = at::randn({9, 3}, at::kDouble);
  const double ours = analysis::hsic_unbiased(gram(x), gram(y));
  EXPECT_NEAR(ours, naive_hsic(gram(x), gram(y)), 1e-12 * std::abs(ours) + 1e-14);
  const at::Tensor h = analysis::hsic_matrix({x, y});
  EXPECT_NEAR(h[0][1].item<double>(), ours, 1e-12 * std::abs(ours) + 1e-14);
  EXPECT_NEAR(h[1][0].item<double>(), ours, 1e-12 * std::abs(ours) + 1e-14);
  EXPECT_THROW(analysis::hsic_unbiased(gram(x.slice(0, 0, 3)), gram(y.slice(0, 0, 3))),
               std::invalid_argument);
  EXPECT_THROW(analysis::hsic_unbiased(gram(x), gram(y.slice(0, 0, 8))), std::invalid_argument);
}

TEST(Cka, SelfOneAndInvariantToRotationAndScale) {
  at::manual_seed(2);
  const at::Tensor x = at::randn({40, 6}, at::kDouble);
  const at::Tensor q = std::get<0>(at::linalg_qr(at::randn({6, 6}, at::kDouble)));  // orthogonal
  const at::Tensor other = at::matmul(x, at::randn({6, 4}, at::kDouble)) + 0.3 * at::randn({40, 4}, at::kDouble);
  const at::Tensor cka =
      analysis::cka_from_hsic(analysis::hsic_matrix({x, at::matmul(x, q) * 7.5, other}));
  EXPECT_NEAR(cka[0][0].item<double>(), 1.0, 1e-12);
  EXPECT_NEAR(cka[0][1].item<double>(), 1.0, 1e-9);  // rotated and scaled: the same
  EXPECT_NEAR(cka[0][2].item<double>(), cka[1][2].item<double>(), 1e-9);
  EXPECT_LT(cka[0][2].item<double>(), 0.999);
  EXPECT_GT(cka[0][2].item<double>(), 0.3);  // related, not identical
  // A constant layer has no variance: NaN, not a number that looks like an answer.
  const at::Tensor with_constant =
      analysis::cka_from_hsic(analysis::hsic_matrix({x, at::ones({40, 3}, at::kDouble)}));
  EXPECT_TRUE(std::isnan(with_constant[0][1].item<double>()));
}

// Independent features: the unbiased estimator averages to about 0 over minibatches; the
// biased one (HSIC_0 = tr(KHLH)/(n−1)²) stays clearly positive at this n.
TEST(Cka, IndependentFeaturesGiveAboutZero) {
  at::manual_seed(3);
  at::Tensor sum = at::zeros({2, 2}, at::kDouble);
  double biased = 0, biased_xx = 0, biased_yy = 0;
  const int64_t n = 16;
  const at::Tensor h = at::eye(n, at::kDouble) - 1.0 / double(n);
  for (int batch = 0; batch < 200; ++batch) {
    const at::Tensor x = at::randn({n, 8}, at::kDouble), y = at::randn({n, 8}, at::kDouble);
    sum += analysis::hsic_matrix({x, y});
    const at::Tensor kc = at::matmul(at::matmul(h, gram(x)), h);
    const at::Tensor lc = at::matmul(at::matmul(h, gram(y)), h);
    biased += (kc * lc).sum().item<double>();
    biased_xx += (kc * kc).sum().item<double>();
    biased_yy += (lc * lc).sum().item<double>();
  }
  const double unbiased_cka = analysis::cka_from_hsic(sum)[0][1].item<double>();
  const double biased_cka = biased / std::sqrt(biased_xx * biased_yy);
  std::printf("[cka] independent features: unbiased %.4f, biased %.4f\n", unbiased_cka,
              biased_cka);
  EXPECT_LT(std::abs(unbiased_cka), 0.05);
  EXPECT_GT(biased_cka, 0.2);
}

TEST(Cka, CommonGridPoolsByArea) {
  attention::TokenLayout fine = attention::grid_layout(4, 4), coarse = attention::grid_layout(2, 2);
  fine.prefix = {"cls"};
  at::Tensor f = at::arange(17 * 2, at::kDouble).reshape({17, 2});
  const at::Tensor c = at::randn({4, 3}, at::kDouble);
  const auto out = analysis::common_grid_features({f, c}, {fine, coarse});
  ASSERT_EQ(out[0].sizes(), (c10::IntArrayRef{4, 2}));
  // Cell (0, 0) of the 2×2 grid averages fine tokens (0,0), (0,1), (1,0), (1,1): layout
  // tokens 1, 2, 5, 6 (after the cls token).
  EXPECT_NEAR(out[0][0][0].item<double>(), (f[1][0] + f[2][0] + f[5][0] + f[6][0]).item<double>() / 4, 1e-12);
  EXPECT_LE(max_abs_diff(out[1], c), 0.0);
  EXPECT_THROW(analysis::common_grid_features({f}, {coarse}), std::invalid_argument);
}

TEST(Cka, TheSessionAveragesHsicAndDerivesTheTable) {
  const models::Json c = {{"arch", "vit"},  {"img_size", 32},    {"patch_size", 8},
                          {"embed_dim", 32}, {"depth", 3},       {"num_heads", 2},
                          {"num_classes", 5}, {"attention", "linear"}};
  at::manual_seed(4);
  auto model = models::make_backbone(c);
  model->eval();
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("cka");
  at::NoGradGuard no_grad;
  session::AnalysisSession session(s, [](const analysis::Array&) {});
  at::Tensor expected = at::zeros({3, 3}, at::kDouble);
  for (int i = 0; i < 2; ++i) {
    const models::ForwardResult r = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
    session.add("img" + std::to_string(i), r);
    std::vector<at::Tensor> features;
    for (int l = 0; l < 3; ++l)  // grid tokens of each block's output (the cls token left out)
      features.push_back(r.outputs.at("out.blocks." + std::to_string(l))[0].slice(0, 1));
    expected += analysis::hsic_matrix(features);
  }
  const at::Tensor cka = analysis::cka_from_hsic(expected);
  const analysis::Table* table = nullptr;
  const auto tables = session.tables();
  for (const auto& t : tables)
    if (t.name == "cka_layers") table = &t;
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 9u);
  for (const auto& row : table->rows) {
    const int64_t a = row[0].i, b = row[1].i;
    // float32 arrays in between: CKA to float32 precision.
    EXPECT_NEAR(row[table->column("cka")].number(), cka[a][b].item<double>(), 1e-5)
        << a << ", " << b;
    if (a == b) {
      EXPECT_NEAR(row[table->column("cka")].number(), 1.0, 1e-6);
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
