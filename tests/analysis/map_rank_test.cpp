// Attention-map rank (core/analysis/map_rank): a rank-r construction from factors; for
// every registered mechanism on random weights, the factored singular values equal the
// explicit matrix's (float64 SVD of the rows) and the rank never exceeds the factor width;
// the added depthwise mixings (FLatten's dwc, RALA's LePE, Castling's dconv) written as
// matrices reproduce the tensors the forward added, and lift the rank above the bound;
// size limits, bad images and NaN weights.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/analysis/map_rank.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::AttentionTrace;
using attention::TokenLayout;

constexpr int64_t kDim = 32;
constexpr int64_t kHeads = 2;  // d = 16, below the 30 tokens of a 6x5 grid

std::shared_ptr<attention::AttentionMechanism> map_rank_layer(const std::string& mechanism,
                                                              uint64_t seed = 3) {
  at::manual_seed(seed);
  std::map<std::string, double> options;
  if (mechanism == "anchor") options["anchors"] = 7;
  auto m = make(mechanism, kDim, kHeads, options);
  m->eval();
  return m;
}

std::shared_ptr<const AttentionTrace> traced(attention::AttentionMechanism& m, const TokenLayout& l,
                                             int64_t batch = 2) {
  at::NoGradGuard no_grad;
  return m.forward_traced(random_tokens(batch, l.tokens(), kDim, 11), l).trace;
}

// The float64 SVD of the explicit rows, as the explicit path computes it.
analysis::RankStats explicit_stats(const AttentionTrace& t, int64_t b, int64_t h) {
  const at::Tensor a = t.matrix(b, h).to(at::kDouble);
  return analysis::rank_statistics_of_spectrum(at::linalg_svdvals(a), a.size(0), a.size(1),
                                               at::kFloat);
}

TEST(ConvMixingMatrix, EqualsTheDepthwiseConvolution) {
  at::manual_seed(5);
  const int64_t h = 5, w = 4;
  const at::Tensor kernel = at::randn({3, 3}, at::kDouble);
  const at::Tensor x = at::randn({1, 1, h, w}, at::kDouble);
  const at::Tensor conv = at::conv2d(x, kernel.view({1, 1, 3, 3}), {}, 1, 1).reshape({h * w});
  const at::Tensor m = attention::conv_mixing_matrix(kernel, h, w, 1, 1);
  EXPECT_LE(max_abs_diff(at::matmul(m, x.reshape({h * w})), conv), 1e-12);
  // A token-axis kernel (k, 1) on an N × 1 grid: a band matrix.
  const at::Tensor band = attention::conv_mixing_matrix(at::ones({3, 1}, at::kDouble), 6, 1, 1, 0);
  EXPECT_EQ(band.sum().item<double>(), 6 * 3 - 2);
  EXPECT_THROW(attention::conv_mixing_matrix(kernel, h, w, 0, 1), std::invalid_argument);
  EXPECT_THROW(attention::conv_mixing_matrix(at::ones({3}), h, w, 1, 0), std::invalid_argument);
}

TEST(MapRank, FactorsOfKnownRank) {
  at::manual_seed(2);
  for (int64_t r : {1, 3, 8}) {
    const at::Tensor left = at::randn({40, 8}, at::kDouble),
                     right = at::randn({25, 8}, at::kDouble);
    // Only r of the 8 factor columns are independent: rank r.
    const at::Tensor mix = at::randn({8, r}, at::kDouble);
    const at::Tensor l = at::matmul(at::matmul(left, mix), at::randn({r, 8}, at::kDouble));
    const at::Tensor sigma = analysis::factored_singular_values(l, right);
    const at::Tensor ref = at::linalg_svdvals(at::matmul(l, right.t()));
    EXPECT_LE(max_abs_diff(sigma, ref.slice(0, 0, sigma.size(0))), 1e-9 * ref[0].item<double>());
    const auto st = analysis::rank_statistics_of_spectrum(sigma, 40, 25, at::kDouble);
    EXPECT_EQ(st.rank, r);
  }
  EXPECT_THROW(analysis::factored_singular_values(at::ones({4, 2}), at::ones({4, 3})),
               std::invalid_argument);
}

// Every mechanism: the form it reports, rank <= bound, and for factored maps the same
// singular values and rank as the explicit matrix's SVD.
TEST(MapRank, FactoredEqualsExplicitForEveryMechanism) {
  int compared = 0, factored = 0;
  double worst = 0.0;
  for (const auto& info : attention::mechanisms()) {
    std::vector<TokenLayout> layouts{attention::grid_layout(6, 5)};
    if (!info.needs_grid) {
      TokenLayout cls = attention::grid_layout(4, 5);
      cls.prefix = {"cls"};
      layouts.push_back(cls);
    }
    auto m = map_rank_layer(info.name);
    for (const TokenLayout& l : layouts) {
      auto t = traced(*m, l);
      for (int64_t b = 0; b < 2; ++b) {
        const auto ranks = analysis::map_ranks(*t, b);
        ASSERT_EQ(int64_t(ranks.size()), t->heads) << info.name;
        for (const auto& r : ranks) {
          const std::string where = info.name + " " + l.describe() + " head " +
                                    std::to_string(r.head) + " (" + r.form + ")";
          EXPECT_LE(r.stats.rank, r.bound) << where;
          EXPECT_NE(r.form, "skipped") << where;
          const auto ref = explicit_stats(*t, b, r.head);
          if (r.form == "factored") {
            ++factored;
            // The leading singular values agree to float32 rounding of the rows.
            const int64_t k = std::min(r.stats.sigma.size(0), ref.sigma.size(0));
            const double scale = ref.sigma[0].item<double>();
            const double diff =
                max_abs_diff(r.stats.sigma.slice(0, 0, k), ref.sigma.slice(0, 0, k));
            EXPECT_LE(diff, 1e-5 * scale) << where;
            worst = std::max(worst, diff / scale);
          } else {
            EXPECT_EQ(r.bound, std::min(r.tokens, r.keys)) << where;
          }
          if (!r.stats.rank_ambiguous && !ref.rank_ambiguous) {
            EXPECT_EQ(r.stats.rank, ref.rank) << where;
            ++compared;
          }
        }
      }
    }
  }
  std::printf("[map rank] %d factored heads, %d ranks compared, worst sigma delta %.3g\n", factored,
              compared, worst);
  EXPECT_GE(factored, 20);
  EXPECT_GE(compared, 40);
}

TEST(MapRank, BoundsOfTheFactoredForms) {
  const TokenLayout l = attention::grid_layout(6, 5);
  const std::map<std::string, int64_t> bounds{
      {"linear", 16}, {"flatten", 16}, {"anchor", 7}, {"hydra", 1}, {"rala", 16}};
  for (const auto& [name, bound] : bounds) {
    auto m = map_rank_layer(name);
    for (const auto& r : analysis::map_ranks(*traced(*m, l), 0)) {
      EXPECT_EQ(r.form, "factored") << name;
      EXPECT_EQ(r.bound, bound) << name;
      EXPECT_LE(r.stats.rank, bound) << name;
    }
  }
  // Softmax: full rank over 30 keys; Castling's 0.5·I makes its map full too.
  for (const std::string name : {"softmax", "castling"}) {
    auto m = map_rank_layer(name);
    for (const auto& r : analysis::map_ranks(*traced(*m, l), 0)) {
      EXPECT_EQ(r.form, "explicit") << name;
      EXPECT_EQ(r.stats.rank, 30) << name;
    }
  }
}

// W_c · v_c (+ the conv's bias) is the tensor the forward added for channel c, and A + W_c
// is no longer held to the factor width.
TEST(MapRank, AddedMixingIsWhatTheForwardAdded) {
  struct Mixing {
    std::string mechanism, internal, bias, name;
  };
  const std::vector<Mixing> mixings{{"flatten", "flatten.dwc_v", "dwc.bias", "dwc"},
                                    {"rala", "rala.lepe", "lepe.bias", "lepe"},
                                    {"castling", "castling.dconv_v", "", "dconv"}};
  TokenLayout cls = attention::grid_layout(4, 5);
  cls.prefix = {"cls"};
  for (const auto& mix : mixings) {
    auto m = map_rank_layer(mix.mechanism);
    at::Tensor bias;
    for (const auto& p : m->named_parameters())
      if (p.key() == mix.bias) bias = p.value().detach();
    for (const TokenLayout& l : {attention::grid_layout(6, 5), cls}) {
      if (mix.mechanism != "castling" && l.num_prefix() > 0) continue;
      auto t = traced(*m, l);
      const auto* source = dynamic_cast<const attention::AddedMixingSource*>(t.get());
      ASSERT_NE(source, nullptr) << mix.mechanism;
      EXPECT_EQ(source->added_mixing_name(), mix.name);
      const int64_t d = t->head_dim;
      for (int64_t h = 0; h < kHeads; ++h) {
        const std::vector<int64_t> channels{0, 5, d - 1};
        const auto w = source->added_mixing(h, channels);
        ASSERT_EQ(w.size(), channels.size());
        const at::Tensor v = t->group_of(h).v[1][h].to(at::kDouble);
        const at::Tensor added = t->internal(mix.internal)[1][h].to(at::kDouble);
        for (size_t i = 0; i < channels.size(); ++i) {
          const int64_t c = channels[i];
          at::Tensor ours = at::matmul(w[i], v.select(1, c));
          // RALA's LePE has a kernel per channel of every head; FLatten's dwc is shared.
          const int64_t bias_index = mix.mechanism == "rala" ? h * d + c : c;
          if (bias.defined()) ours = ours + bias[bias_index].item<double>();
          EXPECT_LE(max_abs_diff(ours, added.select(1, c)), 1e-5 * added.abs().max().item<double>())
              << mix.mechanism << " " << l.describe() << " head " << h << " channel " << c;
        }
      }
      for (const auto& r : analysis::map_ranks(*t, 0)) {
        EXPECT_EQ(r.mixing, mix.name);
        ASSERT_EQ(r.lifted.size(), 4u);
        // A factored map is held to its width; the mixing lifts it above (Castling's map is
        // full already through its 0.5·I).
        if (r.form == "factored") {
          for (const auto& st : r.lifted) EXPECT_GT(st.rank, r.bound) << mix.mechanism;
        }
      }
    }
  }
  // Mechanisms with no added mixing report none.
  auto m = map_rank_layer("linear");
  for (const auto& r : analysis::map_ranks(*traced(*m, attention::grid_layout(6, 5)), 0)) {
    EXPECT_EQ(r.mixing, "");
    EXPECT_TRUE(r.lifted.empty());
  }
}

TEST(MapRank, LimitsBadImagesAndNaN) {
  const TokenLayout l = attention::grid_layout(6, 5);
  analysis::MapRankOptions small;
  small.max_explicit_tokens = 10;
  auto soft = map_rank_layer("softmax");
  auto t = traced(*soft, l);
  for (const auto& r : analysis::map_ranks(*t, 0, small)) {
    EXPECT_EQ(r.form, "skipped");
    EXPECT_EQ(r.stats.rank, 0);
  }
  auto lin = map_rank_layer("linear");
  for (const auto& r : analysis::map_ranks(*traced(*lin, l), 0, small))
    EXPECT_EQ(r.form, "factored");
  EXPECT_THROW(analysis::map_ranks(*t, 2), attention::TraceQueryError);
  small.lift_channels = 0;
  EXPECT_THROW(analysis::map_ranks(*t, 0, small), std::invalid_argument);
  for (auto* m : {soft.get(), lin.get()}) {
    {
      at::NoGradGuard no_grad;
      m->named_parameters().begin()->value().fill_(NAN);
    }
    EXPECT_THROW(analysis::map_ranks(*traced(*m, l), 0), std::invalid_argument);
  }
}

}  // namespace
}  // namespace attnlab::testing
