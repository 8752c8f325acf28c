// Patch similarity (core/analysis/patch_similarity.h and the `similarity` analysis): the
// cosine row by hand, the trace's keys laid out per token, the refusal for a mechanism whose
// keys are pooled, and the analysis through the session (the query is alike itself).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/patch_similarity.h"
#include "models/model_registry.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::SimilarityFacet;

TEST(PatchSimilarity, TheCosineRowByHand) {
  const at::Tensor x =
      at::tensor({1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, -2.0, 0.0}, at::kDouble).reshape({5, 2});
  const at::Tensor c = analysis::cosine_similarity_row(x, 0);
  const double want[] = {1.0, 0.0, 1.0 / std::sqrt(2.0), 0.0, -1.0};  // the zero row: 0
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(c[i].item<double>(), want[i], 1e-15) << i;
  EXPECT_THROW(analysis::cosine_similarity_row(x, 5), std::invalid_argument);
  EXPECT_THROW(analysis::cosine_similarity_row(x.view({10}), 0), std::invalid_argument);
  EXPECT_THROW(analysis::parse_similarity_facet("weights"), std::invalid_argument);
}

TEST(PatchSimilarity, TheKeysAreTheTracesOnePerToken) {
  attention::TokenLayout l = attention::grid_layout(3, 4);
  l.prefix = {"cls"};
  at::manual_seed(2);
  auto m = make("softmax", 16, 2);
  m->eval();
  at::NoGradGuard no_grad;
  const auto trace = m->forward_traced(random_tokens(2, l.tokens(), 16, 5), l).trace;
  const at::Tensor k = analysis::trace_facet(*trace, 1, SimilarityFacet::Keys);
  ASSERT_EQ(k.sizes(), (at::IntArrayRef{13, 16}));  // 1 + 12 tokens, 2 heads × 8
  const at::Tensor& gk = trace->groups.front().k;   // (B, heads, N, d)
  // Token 5, head 1, channel 3 sits at column 8 + 3: a copy, so equal.
  EXPECT_EQ(k[5][11].item<double>(), gk[1][1][5][3].to(at::kDouble).item<double>());
  EXPECT_THROW(analysis::trace_facet(*trace, 2, SimilarityFacet::Keys), attention::TraceQueryError);
}

TEST(PatchSimilarity, PooledKeysAreRefusedBySaying) {
  attention::TokenLayout l = attention::grid_layout(4, 4);
  at::manual_seed(2);
  auto m = make("sra", 16, 2, {{"sr_ratio", 2}});
  m->eval();
  at::NoGradGuard no_grad;
  const auto trace = m->forward_traced(random_tokens(1, l.tokens(), 16, 5), l).trace;
  try {
    analysis::trace_facet(*trace, 0, SimilarityFacet::Keys);
    FAIL() << "sra's reduced keys were taken for per-token keys";
  } catch (const attention::TraceQueryError& e) {
    EXPECT_NE(std::string(e.what()).find("per token"), std::string::npos) << e.what();
  }
}

TEST(PatchSimilarity, TheAnalysisFindsTheQueryAlikeItself) {
  const models::Json c = {
      {"arch", "vit"}, {"img_size", 32}, {"patch_size", 8},  {"embed_dim", 32},
      {"depth", 2},    {"num_heads", 2}, {"num_classes", 5}, {"attention", "softmax"}};
  at::manual_seed(4);
  auto model = models::make_backbone(c);
  model->eval();
  for (const std::string facet : {"tokens", "queries", "keys", "values"}) {
    session::AnalysisSettings s;
    s.analyses = session::parse_analyses("similarity");
    s.options.set("similarity-facet", facet);
    s.query_y = 1;
    s.query_x = 2;
    at::NoGradGuard no_grad;
    const models::ForwardResult r = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
    std::map<std::string, analysis::Array> arrays;
    session::AnalysisSession session(s, [&](const analysis::Array& a) { arrays[a.name] = a; });
    session.add("img", r);
    EXPECT_TRUE(session.warnings().empty()) << facet << ": " << session.warnings().front();
    for (const std::string layer : {"L00", "L01"}) {
      const auto it = arrays.find("similarity__img__" + layer + "__q1-2__" + facet);
      ASSERT_NE(it, arrays.end()) << facet << " " << layer;
      ASSERT_EQ(it->second.shape, (std::vector<int64_t>{4, 4}));
      // Cell (1, 2) of the 4×4 grid: cosine 1 with itself, up to float32 storage (6e-8).
      EXPECT_NEAR(it->second.data[1 * 4 + 2], 1.0, 1e-6) << facet << " " << layer;
      for (float v : it->second.data) EXPECT_LE(std::fabs(v), 1.0 + 1e-6);
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
