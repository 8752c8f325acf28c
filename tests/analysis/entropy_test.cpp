// Attention entropy (core/analysis/entropy): known answers on constructed rows (uniform
// rows give ln K, one-hot rows 0, a row split evenly over m keys ln m with support m,
// signed rows the entropy of |row|/Σ|row| and flagged), and per head against a naive
// float64 loop over the explicit matrix for softmax, linear, signed Castling and HiLo's
// pooled Lo-Fi keys; chunk sizes do not change the result.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/analysis/entropy.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(AttentionEntropy, RowsOfKnownEntropy) {
  const int64_t k = 37;
  bool is_signed = false;
  const at::Tensor uniform = at::full({3, k}, 1.0 / double(k));
  at::Tensor h = analysis::row_entropy(uniform, &is_signed);
  for (int64_t i = 0; i < 3; ++i) EXPECT_NEAR(h[i].item<double>(), std::log(double(k)), 1e-12);
  EXPECT_FALSE(is_signed);
  at::Tensor one_hot = at::zeros({2, k});
  one_hot[0][5] = 1.0, one_hot[1][36] = 1.0;
  h = analysis::row_entropy(one_hot);
  EXPECT_EQ(h[0].item<double>(), 0.0);
  EXPECT_EQ(h[1].item<double>(), 0.0);
  // Evenly over m = 4 keys: ln 4, whatever the row's scale (rows are renormalised).
  at::Tensor four = at::zeros({1, k});
  four.slice(1, 10, 14).fill_(2.5);
  EXPECT_NEAR(analysis::row_entropy(four)[0].item<double>(), std::log(4.0), 1e-12);
  // A signed row: the entropy of |row| / Σ|row|, and the flag is set.
  at::Tensor mixed = at::zeros({1, k});
  mixed[0][0] = -0.5, mixed[0][1] = 0.5, mixed[0][2] = 1.0;
  EXPECT_NEAR(analysis::row_entropy(mixed, &is_signed)[0].item<double>(),
              -(2 * 0.25 * std::log(0.25) + 0.5 * std::log(0.5)), 1e-12);
  EXPECT_TRUE(is_signed);
  // A row of zeros is no distribution: 0, not NaN.
  EXPECT_EQ(analysis::row_entropy(at::zeros({1, k}))[0].item<double>(), 0.0);
}

// A softmax layer whose queries are all zero attends uniformly: H = ln N for every row,
// H / ln N = 1 and the support is N; with queries and keys far apart in one direction the
// rows are one-hot: 0.
TEST(AttentionEntropy, UniformAndPeakedSoftmaxLayers) {
  const TokenLayout l = attention::grid_layout(4, 5);
  auto m = make("softmax", 16, 2);
  m->eval();
  at::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) p.value().zero_();  // q = k = v = 0: uniform rows
  auto t = m->forward_traced(random_tokens(1, l.tokens(), 16), l).trace;
  const analysis::AttentionEntropy e = analysis::attention_entropy(*t, 0, 7);
  for (int64_t h = 0; h < 2; ++h) {
    EXPECT_NEAR(e.entropy[h].item<double>(), std::log(20.0), 1e-6);
    EXPECT_NEAR(e.normalised[h].item<double>(), 1.0, 1e-6);
    EXPECT_NEAR(e.support[h].item<double>(), 20.0, 1e-4);
    EXPECT_EQ(e.keys[size_t(h)], 20);
  }
  EXPECT_FALSE(e.signed_rows);
}

// The naive definition: per head, the mean over every query of −Σ p ln p, p = |a|/Σ|a|
// over the explicit matrix's row in the head's key space.
std::vector<double> naive_entropy(const attention::AttentionTrace& t, int64_t b) {
  std::vector<double> out;
  for (int64_t h = 0; h < t.heads; ++h) {
    const at::Tensor m = t.matrix(b, h).to(at::kCPU, at::kDouble).contiguous();
    const auto a = m.accessor<double, 2>();
    double total = 0.0;
    for (int64_t i = 0; i < m.size(0); ++i) {
      double sum = 0.0, entropy = 0.0;
      for (int64_t j = 0; j < m.size(1); ++j) sum += std::abs(a[i][j]);
      for (int64_t j = 0; j < m.size(1); ++j) {
        const double p = std::abs(a[i][j]) / sum;
        if (p > 0) entropy -= p * std::log(p);
      }
      total += entropy;
    }
    out.push_back(total / double(m.size(0)));
  }
  return out;
}

TEST(AttentionEntropy, EqualsANaiveLoopOverTheExplicitMatrix) {
  struct Case {
    std::string mech;
    TokenLayout layout;
    bool signed_rows;
  };
  TokenLayout cls = attention::grid_layout(5, 6);
  cls.prefix = {"cls"};
  const std::vector<Case> cases{{"softmax", cls, false},
                                {"linear", cls, false},
                                {"castling", attention::grid_layout(4, 4), true},
                                {"hilo", attention::grid_layout(6, 4), false}};
  for (const Case& c : cases) {
    at::manual_seed(3);
    auto m = make(c.mech, 32, 2);
    m->eval();
    at::NoGradGuard no_grad;
    auto t = m->forward_traced(random_tokens(2, c.layout.tokens(), 32, 4), c.layout).trace;
    for (int64_t b = 0; b < 2; ++b) {
      const std::vector<double> want = naive_entropy(*t, b);
      for (int64_t chunk : {int64_t{1}, int64_t{7}, int64_t{256}}) {
        const analysis::AttentionEntropy e = analysis::attention_entropy(*t, b, chunk);
        ASSERT_EQ(e.entropy.size(0), 2) << c.mech;
        EXPECT_EQ(e.signed_rows, c.signed_rows) << c.mech;
        for (int64_t h = 0; h < 2; ++h) {
          // The same float32 rows in float64, queried in chunks of other sizes than the whole
          // matrix: BLAS blocking may change a row by float32 rounding, nothing more.
          EXPECT_NEAR(e.entropy[h].item<double>(), want[size_t(h)], 1e-5 * want[size_t(h)])
              << c.mech << " head " << h << " chunk " << chunk;
          const int64_t keys = t->group_of(h).keys.size();
          EXPECT_EQ(e.keys[size_t(h)], keys);
          EXPECT_NEAR(e.normalised[h].item<double>(), want[size_t(h)] / std::log(double(keys)),
                      1e-5);
          EXPECT_LE(e.support[h].item<double>(), double(keys) * (1 + 1e-9));
          EXPECT_GE(e.support[h].item<double>(), 1.0 - 1e-9);
        }
      }
    }
  }
}

TEST(AttentionEntropy, RefusesBadChunksAndImages) {
  const TokenLayout l = attention::grid_layout(2, 2);
  auto m = make("softmax", 16, 2);
  auto t = m->forward_traced(random_tokens(1, l.tokens(), 16), l).trace;
  EXPECT_THROW(analysis::attention_entropy(*t, 0, 0), std::invalid_argument);
  EXPECT_THROW(analysis::attention_entropy(*t, 1), attention::TraceQueryError);
}

}  // namespace
}  // namespace attnlab::testing
