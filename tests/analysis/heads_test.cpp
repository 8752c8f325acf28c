// Head importance by ablation: every mechanism that says where its heads enter its output
// projection says it consistently (the columns partition the projection's inputs, and the
// heads' effects add up to the whole attention output), switching a head off equals
// removing its values (softmax), a head whose output is unused changes nothing, the weights
// come back, and the session's table and the figure.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "app/session/analysis_session.h"
#include "core/attention/head_outputs.h"
#include "core/attention/registry.h"
#include "models/head_ablation.h"
#include "models/model_registry.h"
#include "tests/attention/attention_test_util.h"
#include "viz/figures/head_importance.h"

namespace {

using attnlab::attention::HeadColumns;
using attnlab::attention::HeadOutputSource;

std::map<std::string, at::Tensor> parameters(torch::nn::Module& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value();
  return out;
}

// The mechanism's output with the given heads' projection columns zeroed.
at::Tensor without(attnlab::attention::AttentionMechanism& m, const std::vector<HeadColumns>& heads,
                   const at::Tensor& x, const attnlab::attention::TokenLayout& layout) {
  const at::NoGradGuard no_grad;
  auto params = parameters(m);
  std::vector<std::pair<at::Tensor, at::Tensor>> saved;
  for (const auto& h : heads) {
    at::Tensor slice = params.at(h.parameter).narrow(1, h.first, h.count);
    saved.emplace_back(slice, slice.clone());
    slice.zero_();
  }
  const at::Tensor y = m.forward(x, layout);
  for (auto& [slice, copy] : saved) slice.copy_(copy);
  return y;
}

}  // namespace

TEST(HeadColumns, EveryMechanismThatOffersThemPartitionsItsProjectionAndAddsUp) {
  std::set<std::string> without_columns;
  for (const auto& name : attnlab::attention::mechanism_names()) {
    SCOPED_TRACE(name);
    at::manual_seed(0);
    auto m = attnlab::testing::make(name, 16, 2);
    const auto* source = dynamic_cast<const HeadOutputSource*>(m.get());
    const std::vector<HeadColumns> heads =
        source ? source->head_columns() : std::vector<HeadColumns>{};
    if (heads.empty()) {
      without_columns.insert(name);
      continue;
    }
    m->eval();
    // One entry per head of the trace: the config's 2, or what the mechanism reports
    // (PolaFormer's same-sign and opposite-sign maps: two trace heads per head).
    const auto& info = attnlab::attention::mechanism_info(name);
    EXPECT_EQ(int64_t(heads.size()), info.trace_heads ? info.trace_heads(m->config()) : 2);
    // Per parameter, the heads' channel ranges tile its inputs exactly.
    const auto params = parameters(*m);
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> ranges;
    for (const auto& h : heads) {
      ASSERT_TRUE(params.count(h.parameter)) << h.parameter;
      ranges[h.parameter].push_back({h.first, h.first + h.count});
    }
    for (auto& [param, r] : ranges) {
      std::sort(r.begin(), r.end());
      int64_t next = 0;
      for (const auto& [a, b] : r) {
        EXPECT_EQ(a, next) << param;
        next = b;
      }
      EXPECT_EQ(next, params.at(param).size(1)) << param;
    }
    attnlab::attention::TokenLayout layout;
    layout.height = 4;
    layout.width = 6;
    if (!attnlab::attention::mechanism_info(name).needs_grid) layout.prefix = {"cls"};
    const at::Tensor x = at::randn({2, layout.tokens(), 16});
    const at::Tensor y = without(*m, {}, x, layout);
    const at::Tensor none = without(*m, heads, x, layout);
    // With every head off only the projection's bias is left: the same for every token.
    EXPECT_TRUE(at::allclose(none, none[0][0].expand_as(none), 1e-6, 1e-6));
    // The projection is linear in its inputs, so the heads' effects add up to the whole
    // (float32 sums in another order: 1e-5 of the output's scale).
    at::Tensor sum = at::zeros_like(y);
    for (const auto& h : heads) sum += y - without(*m, {h}, x, layout);
    const double scale = (y - none).abs().max().item<double>();
    EXPECT_LT((sum - (y - none)).abs().max().item<double>(), 1e-5 * std::max(1.0, scale));
  }
  // The mechanisms whose heads do not enter one projection as channel blocks (Hydra: one
  // head per channel; EfficientViT's multi-scale branches; Efficient attention's own
  // reprojection; MLLA has no projection inside the layer: its block's gate and out_proj
  // come after it). A new mechanism must decide and be listed or implement the mix-in.
  EXPECT_EQ(without_columns, (std::set<std::string>{"efficient", "efficientvit", "hydra", "mlla"}));
}

namespace {

std::shared_ptr<attnlab::models::Backbone> heads_tiny_vit() {
  at::manual_seed(3);
  auto m = attnlab::models::make_backbone({{"arch", "vit"},
                                           {"img_size", 32},
                                           {"patch_size", 8},
                                           {"embed_dim", 16},
                                           {"depth", 2},
                                           {"num_heads", 2},
                                           {"num_classes", 5}});
  m->eval();
  return m;
}

// Zeroes the value rows of `head` in a softmax layer's qkv ([q | k | v], head-major).
void remove_values(attnlab::models::Backbone& model, const std::string& layer, int64_t head) {
  const at::NoGradGuard no_grad;
  auto params = parameters(model);
  const int64_t dim = 16, d = 8;
  params.at(layer + ".qkv.weight").narrow(0, 2 * dim + head * d, d).zero_();
  params.at(layer + ".qkv.bias").narrow(0, 2 * dim + head * d, d).zero_();
}

}  // namespace

TEST(HeadAblation, SwitchingAHeadOffEqualsRemovingItsValues) {
  auto model = heads_tiny_vit();
  const at::Tensor x = at::randn({3, 3, 32, 32});
  const auto plan = attnlab::models::plan_head_ablation(*model);
  ASSERT_EQ(plan.layers.size(), 2u);
  EXPECT_TRUE(plan.unsupported.empty());
  EXPECT_EQ(plan.heads(), 4);
  const auto before = parameters(*model);
  std::map<std::string, at::Tensor> copies;
  for (const auto& [k, v] : before) copies[k] = v.clone();
  const auto r = attnlab::models::ablate_heads(*model, plan, x, at::tensor({0, 1, 2}));
  // The weights are back exactly (restored copies, no arithmetic).
  for (const auto& [k, v] : parameters(*model)) EXPECT_TRUE(at::equal(v, copies.at(k))) << k;
  // With head 1 of layer 0 having no values, its attention output is exactly zero: the
  // model's prediction probability is what ablating that head gives (float rounding only).
  auto reference = heads_tiny_vit();
  remove_values(*reference, "blocks.0.attn", 1);
  const at::Tensor p = reference->run(x)
                           .logits.to(at::kDouble)
                           .softmax(-1)
                           .gather(1, r.predicted.unsqueeze(1))
                           .squeeze(1);
  EXPECT_TRUE(at::allclose(p, r.ablated_probability[0][1], 1e-6, 1e-9));
  EXPECT_TRUE(r.loss.isfinite().all().item<bool>());
}

TEST(HeadAblation, AHeadWhoseOutputIsUnusedChangesNothing) {
  auto model = heads_tiny_vit();
  remove_values(*model, "blocks.1.attn", 0);  // head 0 of layer 1 outputs zeros
  const at::Tensor x = at::randn({4, 3, 32, 32});
  const auto plan = attnlab::models::plan_head_ablation(*model);
  const auto r = attnlab::models::ablate_heads(*model, plan, x, at::Tensor());
  // Zeroing the projection columns of an all-zero input changes no product: the drop is
  // zero up to the summation order of the GEMM (1e-9 on probabilities in float32 logits).
  const at::Tensor drop = r.probability - r.ablated_probability[1][0];
  EXPECT_LT(drop.abs().max().item<double>(), 1e-6);
  EXPECT_TRUE(at::equal(r.ablated_top1_kept[1][0], at::ones({4}, at::kDouble)));
  // The other heads matter: switching them off moves the probabilities.
  EXPECT_GT((r.probability - r.ablated_probability[0][0]).abs().max().item<double>(), 1e-4);
  EXPECT_TRUE(r.loss.isnan().all().item<bool>());  // no labels, no loss
  EXPECT_THROW(attnlab::models::ablate_heads(*model, plan, x, at::tensor({1, 2})),
               attnlab::models::ModelError);
}

TEST(HeadAblation, TheSessionTabulatesEveryHeadAndTheFigureDrawsIt) {
  auto model = heads_tiny_vit();
  attnlab::session::AnalysisSettings settings;
  settings.analyses = {"heads"};
  attnlab::session::AnalysisSession session(settings, [](const auto&) {});
  for (int i = 0; i < 2; ++i)
    session.explain("img" + std::to_string(i), *model, at::randn({1, 3, 32, 32}));
  EXPECT_TRUE(session.warnings().empty());
  const attnlab::analysis::Table* table = nullptr;
  const auto tables = session.tables();
  for (const auto& t : tables)
    if (t.name == "head_importance") table = &t;
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->rows.size(), 4u);
  EXPECT_EQ(table->rows.front()[table->column("images")].number(), 2);
  const auto fig = attnlab::viz::head_importance_figure({{"tiny", *table}});
  ASSERT_EQ(fig.figure.panels.size(), 1u);
  EXPECT_THROW(attnlab::viz::head_importance_figure({}), std::invalid_argument);
}

TEST(HeadAblation, TheGuiRunsItOnlyForSmallModels) {
  const attnlab::session::AnalysisInfo* heads = attnlab::session::find_analysis("heads");
  ASSERT_NE(heads, nullptr);
  ASSERT_TRUE(heads->in_image_analysis_if);
  EXPECT_TRUE(heads->opt_in);
  attnlab::models::ForwardOptions traced;
  traced.trace_attention = true;
  const at::NoGradGuard no_grad;
  // 2 layers x 2 heads on 16 tokens: 64 head-tokens.
  EXPECT_TRUE(
      heads->in_image_analysis_if(heads_tiny_vit()->run(at::randn({1, 3, 32, 32}), traced)));
  // DeiT-Tiny at 224: 12 x 3 heads on 197 tokens (7092 > 4096): left to the command line.
  at::manual_seed(0);
  auto deit = attnlab::models::make_backbone({{"arch", "vit"},
                                              {"img_size", 224},
                                              {"patch_size", 16},
                                              {"embed_dim", 192},
                                              {"depth", 12},
                                              {"num_heads", 3},
                                              {"num_classes", 10}});
  deit->eval();
  EXPECT_FALSE(heads->in_image_analysis_if(deit->run(at::randn({1, 3, 224, 224}), traced)));
}
