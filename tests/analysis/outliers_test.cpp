// Outlier tokens (core/analysis/outliers, the `outliers` analysis): an injected high-norm
// token is found and nothing else is; the attention each token receives equals the column
// means of the explicit matrix (softmax with a cls token, linear, HiLo's pooled keys), so
// uniform rows give the outliers exactly their share of the tokens; block outputs in both
// layouts; bad input; and through the session on a DeiT whose block output gets a token
// scaled 50× by hand.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "app/session/analyses/step_helpers.h"
#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/outliers.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

std::shared_ptr<const attention::AttentionTrace> outliers_traced(
    const std::string& mechanism, const TokenLayout& l, std::map<std::string, double> opts = {},
    bool zero_weights = false) {
  at::manual_seed(3);
  auto m = make(mechanism, 32, 2, std::move(opts));
  m->eval();
  at::NoGradGuard no_grad;
  if (zero_weights)
    for (auto& p : m->named_parameters()) p.value().zero_();
  return m->forward_traced(random_tokens(2, l.tokens(), 32, 5), l).trace;
}

TEST(OutlierTokens, AnInjectedHighNormTokenIsFound) {
  TokenLayout l = attention::grid_layout(4, 5);
  l.prefix = {"cls"};
  auto t = outliers_traced("softmax", l);
  at::manual_seed(9);
  at::Tensor tokens = at::randn({l.tokens(), 16}, at::kDouble);
  tokens[7] *= 50.0;
  const auto o = analysis::outlier_tokens(tokens, *t, 1);
  ASSERT_EQ(o.outliers, std::vector<int64_t>{7});
  EXPECT_NEAR(o.max, tokens[7].norm().item<double>(), 1e-12);
  EXPECT_NEAR(o.median, tokens.norm(2, 1).median().item<double>(), 1e-12);
  EXPECT_DOUBLE_EQ(o.outlier_share, 1.0 / double(l.tokens()));
  // No token 10× the median in plain Gaussian tokens; a lower factor flags more.
  EXPECT_TRUE(analysis::outlier_tokens(at::randn({l.tokens(), 16}), *t, 0).outliers.empty());
  EXPECT_GT(analysis::outlier_tokens(tokens, *t, 1, 1.0).outliers.size(), 1u);
}

// received[h][j] is the mean over queries of the head's weight on token j: the column
// means of the explicit matrix (pooled Lo-Fi keys share equally among their tokens).
TEST(OutlierTokens, ReceivedAttentionIsTheColumnMeans) {
  TokenLayout cls = attention::grid_layout(4, 5);
  cls.prefix = {"cls"};
  struct Case {
    std::string mechanism;
    TokenLayout layout;
    std::map<std::string, double> options;
  };
  for (const Case& c : {Case{"softmax", cls, {}}, Case{"linear", cls, {}},
                        Case{"hilo", attention::grid_layout(4, 6), {{"window", 2}}}}) {
    auto t = outliers_traced(c.mechanism, c.layout, c.options);
    const int64_t n = c.layout.tokens();
    at::Tensor tokens = at::randn({n, 8}, at::kDouble);
    tokens[0] *= 40.0;  // the cls token (softmax, linear) or the first grid token (hilo)
    const auto o = analysis::outlier_tokens(tokens, *t, 0);
    ASSERT_EQ(o.outliers, std::vector<int64_t>{0}) << c.mechanism;
    double mass = 0;
    for (int64_t h = 0; h < t->heads; ++h) {
      const at::Tensor rows =
          attention::rows_on_tokens(t->matrix(0, h), t->group_of(h).keys, c.layout);
      const at::Tensor expected = rows.to(at::kDouble).mean(0);
      EXPECT_LE(max_abs_diff(o.received[h], expected), 1e-6) << c.mechanism << " head " << h;
      EXPECT_NEAR(o.received[h].sum().item<double>(), 1.0, 1e-5) << c.mechanism;  // rows sum to 1
      mass += expected[0].item<double>();
    }
    EXPECT_NEAR(o.outlier_mass, mass / double(t->heads), 1e-6) << c.mechanism;
    if (c.layout.num_prefix() > 0)
      EXPECT_NEAR(o.prefix_mass, o.outlier_mass, 1e-12);
    else
      EXPECT_EQ(o.prefix_mass, 0.0);
  }
}

TEST(OutlierTokens, UniformAttentionGivesOutliersTheirShare) {
  const TokenLayout l = attention::grid_layout(5, 5);
  auto t = outliers_traced("softmax", l, {}, /*zero_weights=*/true);  // q = k = 0: uniform rows
  at::Tensor tokens = at::ones({25, 4}, at::kDouble);
  tokens[3] *= 20.0, tokens[11] *= 30.0;
  const auto o = analysis::outlier_tokens(tokens, *t, 0);
  ASSERT_EQ(o.outliers.size(), 2u);
  EXPECT_NEAR(o.outlier_mass, 2.0 / 25.0, 1e-6);
  EXPECT_NEAR(o.outlier_share, 2.0 / 25.0, 1e-12);
}

TEST(OutlierTokens, BlockOutputsInBothLayoutsAndBadInput) {
  const TokenLayout l = attention::grid_layout(3, 4);
  const at::Tensor bnc = at::randn({2, 12, 5});
  EXPECT_LE(max_abs_diff(session::block_tokens(bnc, 1, l), bnc[1].to(at::kDouble)), 0.0);
  const at::Tensor nchw = bnc.transpose(1, 2).reshape({2, 5, 3, 4});
  EXPECT_LE(max_abs_diff(session::block_tokens(nchw, 1, l), bnc[1].to(at::kDouble)), 0.0);
  EXPECT_THROW(session::block_tokens(at::randn({2, 11, 5}), 0, l), attention::TraceQueryError);
  EXPECT_THROW(session::block_tokens(bnc, 2, l), attention::TraceQueryError);
  auto t = outliers_traced("linear", l);
  EXPECT_THROW(analysis::outlier_tokens(at::randn({12, 5}), *t, 0, 0.0), std::invalid_argument);
  EXPECT_THROW(analysis::outlier_tokens(at::randn({11, 5}), *t, 0), std::invalid_argument);
  EXPECT_THROW(analysis::outlier_tokens(at::randn({12, 5}), *t, 5), attention::TraceQueryError);
  at::Tensor nan = at::randn({12, 5});
  nan[2][1] = NAN;
  EXPECT_THROW(analysis::outlier_tokens(nan, *t, 0), std::invalid_argument);
}

// Through the session: a 2-block DeiT whose first block output gets token 5 scaled by
// hand; the table and the per-image array find it there and only there.
TEST(OutlierTokens, TheSessionFindsAnInjectedToken) {
  const models::Json c = {
      {"arch", "vit"}, {"img_size", 32}, {"patch_size", 8},  {"embed_dim", 32},
      {"depth", 2},    {"num_heads", 2}, {"num_classes", 5}, {"attention", "softmax"}};
  at::manual_seed(4);
  auto model = models::make_backbone(c);
  model->eval();
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("outliers");
  at::NoGradGuard no_grad;
  models::ForwardResult r = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
  ASSERT_TRUE(r.outputs.count("out.blocks.0"));
  r.outputs["out.blocks.0"] = r.outputs["out.blocks.0"].clone();
  r.outputs["out.blocks.0"][0][5] *= 100.0;  // token 5 = grid cell (1, 0) after the cls
  std::map<std::string, analysis::Array> arrays;
  session::AnalysisSession session(s, [&](const analysis::Array& a) { arrays[a.name] = a; });
  session.add("img", r);
  const analysis::Table* table = nullptr;
  const auto tables = session.tables();
  for (const auto& t : tables)
    if (t.name == "outliers_layers") table = &t;
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0][table->column("outliers_mean")].number(), 1.0);
  EXPECT_EQ(table->rows[1][table->column("outliers_mean")].number(), 0.0);
  EXPECT_EQ(table->rows[0][table->column("factor_mean")].number(), 10.0);
  const analysis::Array& norm = arrays.at("outliers__img__L00__norm");
  ASSERT_EQ(norm.shape, (std::vector<int64_t>{4, 4}));
  const auto top = std::max_element(norm.data.begin(), norm.data.end()) - norm.data.begin();
  EXPECT_EQ(top, 4);  // grid token 4 = layout token 5
  EXPECT_GT(norm.data[size_t(top)], 10.0f);
  EXPECT_TRUE(arrays.count("outliers__img__L01__norm"));
}

// Registers (DINOv2 _reg): prefix tokens named reg<k> after cls. Uniform rows give them
// exactly their share of the attention; an outlier among them is not a grid outlier.
TEST(OutlierTokens, RegistersHaveTheirOwnMassAndAreNotGridOutliers) {
  TokenLayout l = attention::grid_layout(4, 4);
  l.prefix = {"cls", "reg0", "reg1"};
  EXPECT_EQ(l.register_tokens(), (std::vector<int64_t>{1, 2}));
  TokenLayout named = l;
  named.prefix = {"cls", "dist", "region", "reg"};  // not registers: no index after "reg"
  EXPECT_TRUE(named.register_tokens().empty());
  auto t = outliers_traced("softmax", l, {}, /*zero_weights=*/true);  // uniform rows
  at::Tensor tokens = at::ones({l.tokens(), 4}, at::kDouble);
  tokens[2] *= 40.0;   // a register with a high norm
  tokens[10] *= 40.0;  // and a grid token
  const auto o = analysis::outlier_tokens(tokens, *t, 0);
  EXPECT_EQ(o.outliers, (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(o.grid_outliers, 1);
  // Softmax rows over 19 keys in float32: each share within a few ulps of 1/19.
  EXPECT_NEAR(o.register_mass, 2.0 / 19.0, 1e-6);
  EXPECT_NEAR(o.prefix_mass, 3.0 / 19.0, 1e-6);
}

// Through the session on DINOv2 with registers: the outlier and entropy tables carry the
// registers' count, mass and norm, the same mass in both (one definition), and a model
// without registers writes nan there.
TEST(OutlierTokens, TheSessionReportsRegistersOfDinov2) {
  for (const int registers : {0, 2}) {
    SCOPED_TRACE(registers);
    const models::Json c = {{"arch", "dinov2_vit"}, {"img_size", 28},
                            {"patch_size", 14},     {"embed_dim", 32},
                            {"depth", 2},           {"num_heads", 2},
                            {"init_values", 1.0},   {"num_register_tokens", registers}};
    at::manual_seed(5);
    auto model = models::make_backbone(c);
    model->eval();
    session::AnalysisSettings s;
    s.analyses = session::parse_analyses("outliers,entropy");
    at::NoGradGuard no_grad;
    session::AnalysisSession session(s, [](const analysis::Array&) {});
    session.add("img", model->run(at::randn({1, 3, 28, 28}), s.forward_options()));
    const auto tables = session.tables();
    const analysis::Table *out = nullptr, *ent = nullptr;
    for (const auto& t : tables) {
      if (t.name == "outliers_layers") out = &t;
      if (t.name == "entropy_layers") ent = &t;
    }
    ASSERT_NE(out, nullptr);
    ASSERT_NE(ent, nullptr);
    ASSERT_EQ(out->rows.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const auto& row = out->rows[i];
      EXPECT_EQ(row[out->column("registers_mean")].number(), registers);
      const double mass = row[out->column("register_mass_mean")].number();
      const double norm = row[out->column("register_norm_over_median_mean")].number();
      const double entropy_mass = ent->rows[i][ent->column("register_mass_mean")].number();
      if (registers == 0) {
        EXPECT_TRUE(std::isnan(mass) && std::isnan(norm) && std::isnan(entropy_mass));
        continue;
      }
      EXPECT_GT(mass, 0.0);
      EXPECT_LT(mass, 1.0);
      EXPECT_GT(norm, 0.0);
      // Both are the same float64 sums of the same received-attention products.
      EXPECT_NEAR(entropy_mass, mass, 1e-12);
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
