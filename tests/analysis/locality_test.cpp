// Locality (core/analysis/locality): the distance of one-hot and split rows by hand (3
// right and 4 down is 5 patches; prefix weight adds nothing), and the mean attention
// distance per head against a naive float64 double loop over the explicit matrix for
// softmax and linear on a small layout with a cls token, and for HiLo's pooled Lo-Fi keys
// spread over their cells by hand; chunk sizes do not change the result.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/analysis/locality.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::AttentionTrace;
using attention::TokenLayout;

TokenLayout cls_grid(int64_t h, int64_t w) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = {"cls"};
  return l;
}

TEST(Locality, OneHotRowDistanceIsTheEuclideanOffsetInPatches) {
  const TokenLayout l = cls_grid(7, 9);
  const int64_t query = l.token_at(1, 2);
  at::Tensor row = at::zeros({l.tokens()});
  row[l.token_at(1 + 4, 2 + 3)] = 1.0f;  // 4 down, 3 right
  EXPECT_DOUBLE_EQ(analysis::attention_distance(row, l, query), 5.0);
  // Half the weight on cls: it has no position and adds nothing (no renormalisation).
  row[l.token_at(5, 5)] = 0.5f;
  row[0] = 0.5f;
  EXPECT_DOUBLE_EQ(analysis::attention_distance(row, l, query), 2.5);
  // Split over two tokens: 0.25 at distance 1 (left), 0.75 at √2 (diagonal up-right).
  at::Tensor two = at::zeros({l.tokens()});
  const int64_t q2 = l.token_at(3, 3);
  two[l.token_at(3, 2)] = 0.25f;
  two[l.token_at(2, 4)] = 0.75f;
  EXPECT_NEAR(analysis::attention_distance(two, l, q2), 0.25 + 0.75 * std::sqrt(2.0), 1e-12);
  // From (3, 2): the first weight is on the query itself, the second 1 up and 2 right.
  EXPECT_NEAR(analysis::attention_distance(two, l, l.token_at(3, 2)), 0.75 * std::sqrt(5.0), 1e-12);
}

TEST(Locality, RefusesPrefixQueriesAndRowsOfTheWrongLength) {
  const TokenLayout l = cls_grid(2, 2);
  EXPECT_THROW(analysis::attention_distance(at::zeros({5}), l, 0), attention::TraceQueryError);
  EXPECT_THROW(analysis::attention_distance(at::zeros({4}), l, 1), std::invalid_argument);
  at::manual_seed(1);
  auto m = make("softmax", 16, 2);
  m->eval();
  auto t = m->forward_traced(random_tokens(1, l.tokens(), 16), l).trace;
  EXPECT_THROW(analysis::mean_attention_distance(*t, 0, 0), std::invalid_argument);
  EXPECT_THROW(analysis::mean_attention_distance(*t, 1), attention::TraceQueryError);
}

// The naive definition: for each head, the mean over grid queries i of Σ_j a_ij·‖p_i − p_j‖
// over grid keys j, with pooled keys' weight split equally over their cell's positions.
std::vector<double> naive_mean_distance(const AttentionTrace& t, int64_t b) {
  const TokenLayout& l = t.layout;
  std::vector<double> out;
  for (int64_t h = 0; h < t.heads; ++h) {
    const auto& ks = t.group_of(h).keys;
    const at::Tensor m = t.matrix(b, h).to(at::kCPU, at::kDouble).contiguous();
    const auto a = m.accessor<double, 2>();
    double total = 0.0;
    for (int64_t yi = 0; yi < l.height; ++yi)
      for (int64_t xi = 0; xi < l.width; ++xi)
        for (int64_t yj = 0; yj < l.height; ++yj)
          for (int64_t xj = 0; xj < l.width; ++xj) {
            const int64_t key = ks.prefix + (yj / ks.cell) * ks.key_w + xj / ks.cell;
            const double w = a[l.token_at(yi, xi)][key] / double(ks.cell * ks.cell);
            total += w * std::hypot(double(yi - yj), double(xi - xj));
          }
    out.push_back(total / double(l.grid_tokens()));
  }
  return out;
}

TEST(Locality, MeanAttentionDistanceEqualsANaiveDoubleLoop) {
  struct Case {
    std::string mech;
    TokenLayout layout;
  };
  const std::vector<Case> cases{{"softmax", cls_grid(5, 6)},
                                {"linear", cls_grid(5, 6)},
                                {"hilo", attention::grid_layout(6, 4)},
                                {"hilo", attention::grid_layout(7, 5)}};
  double worst = 0.0;
  for (const Case& c : cases) {
    at::manual_seed(3);
    auto m = make(c.mech, 32, 2);
    m->eval();
    at::NoGradGuard no_grad;
    auto t = m->forward_traced(random_tokens(2, c.layout.tokens(), 32, 4), c.layout).trace;
    for (int64_t b = 0; b < 2; ++b) {
      const std::vector<double> want = naive_mean_distance(*t, b);
      for (int64_t chunk : {int64_t{1}, int64_t{7}, int64_t{256}}) {
        const at::Tensor got = analysis::mean_attention_distance(*t, b, chunk);
        ASSERT_EQ(got.scalar_type(), at::kDouble);
        ASSERT_EQ(got.size(0), 2);
        for (int64_t h = 0; h < 2; ++h) {
          const double rel = std::abs(got[h].item<double>() - want[size_t(h)]) / want[size_t(h)];
          // The same float32 rows in float64, but queried in chunks of other sizes than the
          // whole matrix: BLAS blocking may change a row by float32 rounding, nothing more.
          EXPECT_LE(rel, 1e-6) << c.mech << " " << c.layout.describe() << " head " << h;
          worst = std::max(worst, rel);
        }
      }
      std::printf("[locality] %s %s image %lld: mean distance per head %.6f %.6f\n", c.mech.c_str(),
                  c.layout.describe().c_str(), static_cast<long long>(b), want[0], want[1]);
    }
  }
  std::printf("[locality] worst relative |delta| vs naive loop = %.3g\n", worst);
}

// The mean over grid queries of attention_distance(row on tokens) is what the chunked
// computation returns.
TEST(Locality, MeanDistanceMatchesTheSingleRowDefinition) {
  const TokenLayout l = cls_grid(4, 5);
  at::manual_seed(5);
  auto m = make("linear", 16, 2);
  m->eval();
  at::NoGradGuard no_grad;
  auto t = m->forward_traced(random_tokens(1, l.tokens(), 16), l).trace;
  const at::Tensor mean = analysis::mean_attention_distance(*t, 0, 3);
  for (int64_t h = 0; h < 2; ++h) {
    double sum = 0.0;
    for (int64_t q = 1; q < l.tokens(); ++q)
      sum += analysis::attention_distance(t->matrix(0, h)[q], l, q);
    EXPECT_NEAR(mean[h].item<double>(), sum / 20.0, 1e-6 * sum / 20.0);
  }
}

}  // namespace
}  // namespace attnlab::testing
