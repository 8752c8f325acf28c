// Trace products (AttentionTrace::apply, apply_transposed, head_output): for every registered
// mechanism, on random weights and inputs, A·x and Aᵀ·y equal the explicit matrix products
// (matrix(b, h) spread onto the tokens, times x, in float64) and head_output equals
// matrix(b, h) · v — through the mechanisms' fast O(N·d·c) paths (linear, castling, rala,
// anchor) and the generic chunked-row path (softmax, softmax_rope, hilo, castling with its
// sparse branch), on plain grids, grids with prefix tokens, and HiLo's padded 7×5 grid.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/attention/castling.h"
#include "core/attention/registry.h"
#include "core/runtime/memory_probe.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::AttentionTrace;
using attention::TokenLayout;

constexpr int64_t kTraceProductsDim = 32;
constexpr int64_t kTraceProductsHeads = 2;
constexpr double kTol = 1e-5;  // float32 products against float64 references, relative

// max |a − ref| / max |ref|: float32 results relative to the size of the exact result.
double trace_products_relative_max(const at::Tensor& a, const at::Tensor& ref) {
  const at::Tensor r = ref.to(at::kCPU, at::kDouble);
  const double scale = r.abs().max().item<double>();
  return max_abs_diff(a, r) / (scale > 0 ? scale : 1.0);
}

// The head's N×N attention on the layer's tokens, float64, from the explicit matrix with
// pooled keys spread onto their cell² tokens by hand (not by rows_on_tokens). Tokens that
// no key covers (PVT's reduction floors the grid) keep a zero column.
at::Tensor token_matrix(const AttentionTrace& t, int64_t b, int64_t head) {
  const at::Tensor m = t.matrix(b, head).to(at::kCPU, at::kDouble);
  const auto& ks = t.group_of(head).keys;
  const TokenLayout& l = t.layout;
  at::Tensor out = at::zeros({l.tokens(), l.tokens()}, at::kDouble);
  out.slice(1, 0, ks.prefix).copy_(m.slice(1, 0, ks.prefix));
  for (int64_t y = 0; y < l.height; ++y)
    for (int64_t x = 0; x < l.width; ++x) {
      if (y / ks.cell >= ks.key_h || x / ks.cell >= ks.key_w) continue;
      const int64_t key = ks.prefix + (y / ks.cell) * ks.key_w + x / ks.cell;
      out.select(1, l.token_at(y, x)).copy_(m.select(1, key) / double(ks.cell * ks.cell));
    }
  return out;
}

struct Case {
  std::string mechanism;
  TokenLayout layout;
  std::map<std::string, double> options;
  bool train = false;  // castling: the sparse branch runs only in training mode
  std::string label;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& info : attention::mechanisms()) {
    std::map<std::string, double> opts;
    if (info.name == "anchor") opts["anchors"] = 7;
    out.push_back({info.name, attention::grid_layout(6, 5), opts, false, info.name + " 6x5"});
    if (!info.needs_grid) {
      TokenLayout cls = attention::grid_layout(4, 5);
      cls.prefix = {"cls"};
      out.push_back({info.name, cls, opts, false, info.name + " cls+4x5"});
      TokenLayout two = attention::grid_layout(3, 4);
      two.prefix = {"cls", "dist"};
      out.push_back({info.name, two, opts, false, info.name + " cls+dist+3x4"});
    }
  }
  out.push_back({"hilo", attention::grid_layout(7, 5), {{"window", 2}}, false, "hilo padded 7x5"});
  out.push_back({"hilo",
                 attention::grid_layout(7, 5),
                 {{"window", 2}, {"lofi_heads", 2}},
                 false,
                 "hilo padded 7x5 all lofi"});
  TokenLayout cls = attention::grid_layout(4, 5);
  cls.prefix = {"cls"};
  out.push_back({"castling", cls, {}, true, "castling sparse branch cls+4x5"});
  return out;
}

std::shared_ptr<const AttentionTrace> trace_products_traced(const Case& c, int64_t batch,
                                                            uint64_t seed) {
  at::manual_seed(seed);
  auto m = make(c.mechanism, kTraceProductsDim, kTraceProductsHeads, c.options);
  if (c.train)
    m->train();
  else
    m->eval();
  at::NoGradGuard no_grad;
  return m
      ->forward_traced(random_tokens(batch, c.layout.tokens(), kTraceProductsDim, seed + 1),
                       c.layout)
      .trace;
}

TEST(TraceProducts, ApplyAndApplyTransposedEqualTheExplicitMatrixProducts) {
  double worst = 0.0;
  for (const Case& c : cases()) {
    auto t = trace_products_traced(c, 2, 3);
    if (c.train) {
      ASSERT_TRUE(attention::castling_sparse_branch_active(*t)) << c.label;
    }
    const int64_t n = c.layout.tokens();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < kTraceProductsHeads; ++h) {
        const at::Tensor a = token_matrix(*t, b, h);
        const at::Tensor x = at::randn({n, 3});
        const at::Tensor y = at::randn({n});
        const double fwd =
            trace_products_relative_max(t->apply(b, h, x), at::matmul(a, x.to(at::kDouble)));
        const double bwd = trace_products_relative_max(t->apply_transposed(b, h, y),
                                                       at::matmul(a.t(), y.to(at::kDouble)));
        const double bwd2 = trace_products_relative_max(t->apply_transposed(b, h, x),
                                                        at::matmul(a.t(), x.to(at::kDouble)));
        const double fwd1 =
            trace_products_relative_max(t->apply(b, h, y), at::matmul(a, y.to(at::kDouble)));
        EXPECT_EQ(t->apply(b, h, y).dim(), 1) << c.label;
        EXPECT_LE(fwd, kTol) << c.label << " image " << b << " head " << h << ": A·x";
        EXPECT_LE(fwd1, kTol) << c.label << " image " << b << " head " << h << ": A·y (vector)";
        EXPECT_LE(bwd, kTol) << c.label << " image " << b << " head " << h << ": Aᵀ·y (vector)";
        EXPECT_LE(bwd2, kTol) << c.label << " image " << b << " head " << h << ": Aᵀ·x";
        worst = std::max({worst, fwd, fwd1, bwd, bwd2});
      }
  }
  std::printf("[products] worst relative max|delta| of A·x, Aᵀ·y over all cases = %.3g\n", worst);
}

TEST(TraceProducts, HeadOutputIsRowsTimesTheGroupsValues) {
  double worst = 0.0;
  for (const Case& c : cases()) {
    auto t = trace_products_traced(c, 2, 5);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < kTraceProductsHeads; ++h) {
        const auto& g = t->group_of(h);
        // In the head's own key space: pooled values for Lo-Fi, padded grid for Hi-Fi.
        const at::Tensor ref =
            at::matmul(t->matrix(b, h).to(at::kDouble), g.v[b][h - g.first_head].to(at::kDouble));
        const at::Tensor out = t->head_output(b, h);
        ASSERT_EQ(out.sizes(), (at::IntArrayRef{c.layout.tokens(), t->head_dim})) << c.label;
        const double d = trace_products_relative_max(out, ref);
        EXPECT_LE(d, kTol) << c.label << " image " << b << " head " << h;
        worst = std::max(worst, d);
      }
  }
  std::printf("[products] worst relative max|delta| of head_output vs rows·v = %.3g\n", worst);
}

// The Lo-Fi head of HiLo on the padded grid: its matrix is (N, M) over the pooled keys and
// its output is that matrix times the pooled values, the query rows cropped to N tokens.
TEST(TraceProducts, HiloLofiHeadOutputIsTheMatrixTimesPooledValues) {
  const Case c{"hilo", attention::grid_layout(7, 5), {{"window", 2}}, false, "hilo 7x5"};
  auto t = trace_products_traced(c, 1, 9);
  const auto& g = t->group_of(1);
  ASSERT_EQ(g.name, "lofi");
  const at::Tensor m = t->matrix(0, 1);
  ASSERT_EQ(m.sizes(), (at::IntArrayRef{35, 4 * 3}));  // padded 8×6 pooled to 4×3
  const at::Tensor ref = at::matmul(m.to(at::kDouble), g.v[0][0].to(at::kDouble));
  const double d = trace_products_relative_max(t->head_output(0, 1), ref);
  std::printf("[products] hilo lofi head_output vs matrix·pooled v: %.3g\n", d);
  EXPECT_LE(d, kTol);
  // The Lo-Fi rows sum to 1 over pooled keys; on the tokens, the share of the padding
  // positions is lost: A·1 = 1 − (weight on keys beyond the grid) < 1 for some queries.
  const at::Tensor sums = t->apply(0, 1, at::ones({35})).to(at::kDouble);
  EXPECT_LT(sums.min().item<double>(), 1.0 - 1e-3);
  EXPECT_LE(trace_products_relative_max(sums, token_matrix(*t, 0, 1).sum(1)), kTol);
}

// The fast paths form no row: on a 128×128 grid (16384 tokens) one 256-row chunk of the
// generic path is a 16 MiB block; the fast products must not allocate any block of even a
// quarter of that (they need O(N·d)). Memory, not time, so machine load cannot flip it.
// A·x is also checked on 256 sampled rows.
TEST(TraceProducts, FastPathsOnLinearMechanismsFormNoRows) {
  const TokenLayout l = attention::grid_layout(128, 128);
  const int64_t n = l.tokens();
  const int64_t chunk_bytes = AttentionTrace::kApplyChunkRows * n * int64_t(sizeof(float));
  for (const std::string mech : {"linear", "castling", "rala", "anchor"}) {
    at::manual_seed(4);
    auto m = make(mech, 8, 1,
                  mech == "anchor" ? std::map<std::string, double>{{"anchors", 4}}
                                   : std::map<std::string, double>{});
    m->eval();
    at::NoGradGuard no_grad;
    auto t = m->forward_traced(random_tokens(1, n, 8, 5), l).trace;
    // A positive operand: with randn, A·x over 16384 tokens is a cancelling sum ~1/√N the
    // size of its terms, and relative error would measure the conditioning, not the code.
    const at::Tensor x = at::rand({n}) + 0.5, sample = at::randint(n, {256}, at::kLong);
    int64_t largest = 0;
    {
      runtime::CpuMemoryProbe probe;
      t->apply(0, 0, x);
      t->apply_transposed(0, 0, x);
      largest = probe.largest_block();
    }
    const at::Tensor want = at::matmul(t->rows(0, 0, sample).to(at::kDouble), x.to(at::kDouble));
    const double d = trace_products_relative_max(t->apply(0, 0, x).index_select(0, sample), want);
    std::printf(
        "[products] %s 128x128: A·x + Aᵀ·x largest block %.3g MiB (one row chunk %.3g MiB), "
        "sampled rows rel max|delta| %.3g\n",
        mech.c_str(), double(largest) / (1 << 20), double(chunk_bytes) / (1 << 20), d);
    EXPECT_LT(largest, chunk_bytes / 4) << mech;
    EXPECT_LE(d, kTol) << mech;
  }
}

TEST(TraceProducts, OperandsOfTheWrongLengthAreRefused) {
  const Case c{"linear", attention::grid_layout(3, 3), {}, false, "linear"};
  auto t = trace_products_traced(c, 1, 1);
  EXPECT_THROW(t->apply(0, 0, at::ones({8})), attention::TraceQueryError);
  EXPECT_THROW(t->apply_transposed(0, 0, at::ones({10, 2})), attention::TraceQueryError);
  EXPECT_THROW(t->apply(0, 2, at::ones({9})), attention::TraceQueryError);
  EXPECT_THROW(t->head_output(1, 0), attention::TraceQueryError);
}

}  // namespace
}  // namespace attnlab::testing
