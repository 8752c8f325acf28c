// castling: parity with the reference LinAngularAttention (castling_attn fixture, with and
// without the training-only masked softmax branch), the implicit rows, the token-axis dconv,
// the auxiliary-mask statistics and option validation.
#include <iostream>

#include "core/attention/castling.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::AttentionError;
using attention::TokenLayout;

constexpr double kPi = 3.14159265358979323846;

// The fixture has N = 50 tokens; castling mixes a 1-D sequence, so 7×7 + cls only labels them.
TokenLayout fixture_layout() {
  TokenLayout l = attention::grid_layout(7, 7);
  l.prefix = {"cls"};
  return l;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const AttentionError& e) {
    return e.what();
  }
  return "(no AttentionError)";
}

TEST(CastlingAttention, MatchesReferenceInEvalAndWithTheSparseBranchInTraining) {
  auto w = parity_weights("castling_attn");
  auto e = parity_expected("castling_attn");
  auto attn = make("castling", 64, 2);  // defaults = the fixture's config
  load_from(*attn, w, "");
  const at::Tensor x = e.at("input");

  attn->eval();
  const at::Tensor inference = attn->forward(x, fixture_layout());
  attn->train();
  const at::Tensor training = attn->forward(x, fixture_layout());
  const double d_inf = max_abs_diff(inference, e.at("out.inference"));
  const double d_sparse = max_abs_diff(training, e.at("out.with_sparse_branch"));
  std::cout << "castling parity max|d|: out.inference " << d_inf << ", out.with_sparse_branch "
            << d_sparse << "\n";
  EXPECT_LE(d_inf, 1e-5);
  EXPECT_LE(d_sparse, 1e-5);
  // The two references differ, so the second comparison really tests the branch.
  EXPECT_GT(max_abs_diff(e.at("out.inference"), e.at("out.with_sparse_branch")), 1e-3);

  // Tracing changes nothing, in either mode: the same ops, but two runs of them, which
  // need not round alike on every CPU (see tests/support/float_compare.h).
  auto traced = attn->forward_traced(x, fixture_layout());
  EXPECT_LE(max_abs_diff(traced.output, training), reordering_tolerance(training));
  EXPECT_TRUE(attention::castling_sparse_branch_active(*traced.trace));
  attn->eval();
  traced = attn->forward_traced(x, fixture_layout());
  EXPECT_LE(max_abs_diff(traced.output, inference), reordering_tolerance(inference));
  EXPECT_FALSE(attention::castling_sparse_branch_active(*traced.trace));
  EXPECT_DOUBLE_EQ(attention::castling_threshold(*traced.trace), 0.02);
}

// out = proj(normalise(rows·V) + dconv_v), head by head, for eval and training rows.
TEST(CastlingAttention, OutputIsProjOfNormalisedRowsTimesValuesPlusDconv) {
  TokenLayout layout = attention::grid_layout(5, 6);
  layout.prefix = {"cls", "dist"};
  const int64_t n = layout.tokens();
  auto attn = make("castling", 48, 3, {{"kernel", 5}});
  const at::Tensor x = random_tokens(2, n, 48);
  const auto params = attn->named_parameters();
  for (bool training : {false, true}) {
    attn->train(training);
    auto [out, trace] = attn->forward_traced(x, layout);
    ASSERT_EQ(trace->heads, 3);
    EXPECT_EQ(attention::castling_sparse_branch_active(*trace), training);
    EXPECT_FALSE(trace->has_internal("castling.scores"));  // only with keep_scores
    const at::Tensor dconv_v = trace->internal("castling.dconv_v");
    double worst = 0.0;
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<at::Tensor> heads;
      for (int64_t h = 0; h < 3; ++h) {
        at::Tensor y = rows_times_v(*trace, b, h);
        heads.push_back(y / y.norm(2, {-1}, true) + dconv_v[b][h]);
      }
      at::Tensor rebuilt =
          at::linear(at::cat(heads, -1), params["proj.weight"], params["proj.bias"]);
      worst = std::max(worst, max_abs_diff(rebuilt, out[b]));
    }
    std::cout << "castling rows-rebuilt output max|d| (" << (training ? "training" : "eval")
              << "): " << worst << "\n";
    EXPECT_LE(worst, 1e-5);
  }
}

TEST(CastlingAttention, RowsAreAngularTermPlusHalfSelfPlusMaskedSoftmaxWhenTraining) {
  TokenLayout layout = attention::grid_layout(4, 5);
  layout.prefix = {"cls"};
  const int64_t n = layout.tokens();
  auto attn = make("castling", 32, 2, {{"threshold", 0.05}});
  const at::Tensor x = random_tokens(2, n, 32, 11);
  for (bool training : {false, true}) {
    attn->train(training);
    attention::TraceOptions opts;
    opts.keep_scores = true;
    auto [out, trace] = attn->forward_traced(x, layout, opts);
    const auto& g = trace->group_of(1);
    // The group holds unit q̂, k̂; the raw ones are internals.
    at::Tensor qn = g.q[1][1], kn = g.k[1][1];
    EXPECT_LE(max_abs_diff(qn.norm(2, {-1}), at::ones({n})), 1e-5);
    EXPECT_LE(max_abs_diff(kn, trace->internal("castling.k")[1][1] /
                                   trace->internal("castling.k")[1][1].norm(2, {-1}, true)),
              1e-6);
    at::Tensor expected = at::matmul(qn, kn.t()) / kPi + 0.5 * at::eye(n);
    if (training) {
      at::Tensor s = trace->internal("castling.scores")[1][1];
      expected = expected + s * (s > 0.05);
    }
    EXPECT_LE(max_abs_diff(trace->matrix(1, 1), expected), 1e-6);
    // A single row and a subset of rows agree with the matrix.
    EXPECT_LE(max_abs_diff(trace->row(1, 7, 1).weights, expected[7]), 1e-6);
    at::Tensor some = at::tensor({19, 0, 3}, at::kLong);
    EXPECT_LE(max_abs_diff(trace->rows(1, 1, some), expected.index_select(0, some)), 1e-6);
  }
}

// dconv is a per-head 1-D conv along the flattened token index, shared over the d columns.
TEST(CastlingAttention, DconvIsAZeroPaddedConvAlongTheTokenIndex) {
  const int64_t k = 7, n = 13, heads = 2;
  auto attn = make("castling", 16, heads, {{"kernel", k}});
  auto [out, trace] =
      attn->forward_traced(random_tokens(2, n, 16, 3), attention::grid_layout(1, n));
  const at::Tensor v = trace->groups[0].v;  // (B, h, N, d)
  const at::Tensor weight = attn->named_parameters()["dconv.weight"];
  ASSERT_EQ(weight.sizes(), at::IntArrayRef({heads, 1, k, 1}));
  const int64_t pad = (k - 1) / 2;
  at::Tensor padded = at::constant_pad_nd(v, {0, 0, pad, pad});
  at::Tensor expected = at::zeros_like(v);
  for (int64_t t = 0; t < k; ++t)
    expected += weight.select(2, t).reshape({1, heads, 1, 1}) * padded.slice(2, t, t + n);
  EXPECT_LE(max_abs_diff(trace->internal("castling.dconv_v"), expected), 1e-6);
}

TEST(CastlingMaskStatistics, EqualADirectCountOfScoresAboveThresholdForAnyChunkSize) {
  TokenLayout layout = fixture_layout();  // N = 50
  const int64_t n = layout.tokens(), batch = 3;
  auto attn = make("castling", 32, 2);
  const at::Tensor x = random_tokens(batch, n, 32, 5);
  for (bool training : {false, true}) {
    attn->train(training);
    attention::TraceOptions opts;
    opts.keep_scores = true;
    auto [out, trace] = attn->forward_traced(x, layout, opts);
    const at::Tensor s = trace->internal("castling.scores");
    ASSERT_EQ(s.sizes(), at::IntArrayRef({batch, 2, n, n}));
    // The kept S is the softmax of the raw q, k.
    at::Tensor q = trace->internal("castling.q"), k = trace->internal("castling.k");
    at::Tensor direct_s = at::softmax(at::matmul(q / std::sqrt(16.0), k.transpose(-2, -1)), -1);
    EXPECT_LE(max_abs_diff(s, direct_s), 1e-6);
    for (double eps : {0.02, 0.05}) {
      const at::Tensor direct = (s > eps).sum({0, 2, 3});
      const int64_t total = direct.sum().item<int64_t>();
      EXPECT_GT(total, 0);
      EXPECT_LT(total, 2 * batch * n * n);  // the threshold really splits the entries
      for (int64_t chunk : {attention::kDefaultMaskChunkRows, int64_t{7}, int64_t{1}, n}) {
        auto stats = attention::castling_mask_statistics(*trace, eps, chunk);
        EXPECT_EQ(stats.threshold, eps);
        EXPECT_EQ(stats.entries_per_head, batch * n * n);
        ASSERT_EQ(stats.above_per_head.size(), 2u);
        for (int64_t h = 0; h < 2; ++h) {
          EXPECT_EQ(stats.above_per_head[h], direct[h].item<int64_t>())
              << "head " << h << " chunk " << chunk << " eps " << eps;
          EXPECT_DOUBLE_EQ(stats.fraction(h), static_cast<double>(direct[h].item<int64_t>()) /
                                                  static_cast<double>(batch * n * n));
        }
        EXPECT_EQ(stats.above_total, total);
        EXPECT_DOUBLE_EQ(stats.overall_fraction(),
                         static_cast<double>(total) / static_cast<double>(2 * batch * n * n));
      }
      // One image of the batch alone: its own counts, which add up to the batch's.
      int64_t summed = 0;
      for (int64_t b = 0; b < batch; ++b) {
        const auto one = attention::castling_mask_statistics(
            *trace, eps, attention::kDefaultMaskChunkRows, b);
        EXPECT_EQ(one.entries_per_head, n * n);
        EXPECT_EQ(one.above_total, (s[b] > eps).sum().item<int64_t>()) << "image " << b;
        summed += one.above_total;
      }
      EXPECT_EQ(summed, total);
      EXPECT_THROW(attention::castling_mask_statistics(*trace, eps,
                                                       attention::kDefaultMaskChunkRows, batch),
                   attention::TraceQueryError);
    }
  }
}

TEST(CastlingMaskStatistics, RefusesOtherTracesAndEmptyChunks) {
  auto soft = make("softmax", 16, 2);
  auto traced = soft->forward_traced(random_tokens(1, 4, 16), attention::grid_layout(2, 2));
  EXPECT_THROW(attention::castling_mask_statistics(*traced.trace, 0.02),
               attention::TraceQueryError);
  EXPECT_THROW(attention::castling_threshold(*traced.trace), attention::TraceQueryError);
  auto cast = make("castling", 16, 2);
  traced = cast->forward_traced(random_tokens(1, 4, 16), attention::grid_layout(2, 2));
  EXPECT_THROW(attention::castling_mask_statistics(*traced.trace, 0.02, 0),
               attention::TraceQueryError);
}

TEST(CastlingAttention, ParametersFollowTheOptionsAndBadOptionsAreRefused) {
  auto plain = make("castling", 16, 2);
  const auto params = plain->named_parameters();
  EXPECT_EQ(params.size(), 4u);  // qkv.weight, proj.weight, proj.bias, dconv.weight
  EXPECT_EQ(params["dconv.weight"].sizes(), at::IntArrayRef({2, 1, 9, 1}));
  EXPECT_EQ(make("castling", 16, 2, {{"qkv_bias", 1}})->named_parameters().size(), 5u);
  EXPECT_EQ(make("castling", 16, 2, {{"kernel", 1}})->named_parameters()["dconv.weight"].sizes(),
            at::IntArrayRef({2, 1, 1, 1}));

  const std::string even = error_of([] { make("castling", 16, 2, {{"kernel", 8}}); });
  EXPECT_NE(even.find("castling"), std::string::npos) << even;
  EXPECT_NE(even.find("'kernel' = 8 must be odd"), std::string::npos) << even;
  const std::string unknown = error_of([] { make("castling", 16, 2, {{"sparse_reg", 1}}); });
  EXPECT_NE(unknown.find("castling has no option 'sparse_reg'"), std::string::npos) << unknown;
  EXPECT_NE(error_of([] {
              make("castling", 16, 2, {{"kernel", 0}});
            }).find("kernel"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              make("castling", 16, 2, {{"threshold", -0.1}});
            }).find("threshold"),
            std::string::npos);
}

}  // namespace
}  // namespace attnlab::testing
