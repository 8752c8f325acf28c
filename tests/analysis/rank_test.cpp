// Rank statistics (core/analysis/rank.h): numerical rank of constructed low-rank products in
// float32 and float64, the zero matrix, the identity, effective and stable rank against their
// closed forms, the default tolerance max(m, n)·eps·σ_max and user atol / rtol, describe();
// and rank_subjects() of every mechanism against independent recomputations in double: KV
// buffers from the module's own weights, head outputs as the whole implicit matrix times V.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "core/analysis/rank.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::rank_statistics;
using analysis::RankOptions;

constexpr double kFloatEps = static_cast<double>(std::numeric_limits<float>::epsilon());
constexpr double kDoubleEps = std::numeric_limits<double>::epsilon();

// Singular values from the eigenvalues of the Gram matrix XᵀX in double (a different route
// from the SVD under test), descending; only the well-separated large ones are accurate.
at::Tensor gram_singular_values(const at::Tensor& x) {
  const at::Tensor xd = x.to(at::kDouble);
  const at::Tensor ev = at::linalg_eigvalsh(at::matmul(xd.t(), xd)).clamp_min(0).sqrt();
  return ev.flip(0);
}

TEST(RankStatistics, LowRankProductsHaveTheirRankInFloat32AndFloat64) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double eps = dtype == at::kFloat ? kFloatEps : kDoubleEps;
    std::vector<at::Tensor> stack;
    for (int64_t r = 1; r <= 5; ++r) {
      at::manual_seed(100 + static_cast<uint64_t>(r));
      // U (12×r) V (r×9) formed in double, then rounded once to the dtype under test.
      const at::Tensor x =
          at::matmul(at::randn({12, r}, at::kDouble), at::randn({r, 9}, at::kDouble)).to(dtype);
      stack.push_back(x);
      const auto s = rank_statistics(x);
      ASSERT_EQ(s.size(), 1u);
      EXPECT_EQ(s[0].rank, r) << c10::toString(dtype) << " r=" << r;
      ASSERT_EQ(s[0].sigma.sizes(), at::IntArrayRef({9}));
      EXPECT_EQ(s[0].sigma.scalar_type(), at::kDouble);
      const double sigma_max = s[0].sigma[0].item<double>();
      // torch.linalg.matrix_rank's default: max(m, n)·eps(dtype)·σ_max of the SVD in the
      // dtype, m = 12; the precision rule: 2·√12·eps(float32)·σ_max of the float64 SVD.
      EXPECT_DOUBLE_EQ(s[0].tolerance, 12.0 * eps * s[0].sigma_native[0].item<double>());
      EXPECT_DOUBLE_EQ(s[0].precision_tolerance, 2.0 * std::sqrt(12.0) * kFloatEps * sigma_max);
      EXPECT_EQ(s[0].precision_rank, r) << c10::toString(dtype) << " r=" << r;
      const at::Tensor ref = gram_singular_values(x);
      const double top =
          (s[0].sigma.slice(0, 0, r) - ref.slice(0, 0, r)).abs().max().item<double>();
      const double tol = dtype == at::kFloat ? 1e-5 : 1e-10;  // relative to σ_max
      EXPECT_LE(top / sigma_max, tol) << c10::toString(dtype) << " r=" << r;
      EXPECT_LE(s[0].sigma.slice(0, r).max().item<double>(), s[0].tolerance);
      std::cout << "[rank] " << c10::toString(dtype) << " r=" << r << " tolerance "
                << s[0].tolerance << " sigma_r+1 " << s[0].sigma[r].item<double>()
                << " top-r |dsigma|/sigma_max " << top / sigma_max << "\n";
    }
    // The batched call gives the same per matrix, in order.
    const auto batched = rank_statistics(at::stack(stack));
    ASSERT_EQ(batched.size(), 5u);
    for (int64_t r = 1; r <= 5; ++r) EXPECT_EQ(batched[static_cast<size_t>(r - 1)].rank, r);
  }
}

// A spectrum built to cross the two rules: σ = (1, 0.1, 0.01, 1e-3, 4e-6, 0, ...) on 64×64.
// In float32 the float32 rule cuts at 64·ε₃₂ ≈ 7.6e-6 and counts 4; the precision rule cuts
// at 2·8·ε₃₂ ≈ 1.9e-6 and counts 5; 4e-6 lies within 4× of both tolerances, so both are
// flagged ambiguous. Without the 4e-6 value the same matrices have a clean gap: 4 and 4,
// neither flagged. The float64 copy of the float32 values gives the same float64-based
// statistics (the precision rule does not read the storage dtype); its float32-rule rank
// uses ε₆₄, as torch.linalg.matrix_rank does, and counts the float32 rounding noise too.
at::Tensor with_spectrum(const std::vector<double>& sigma, int64_t n, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor u = std::get<0>(at::linalg_qr(at::randn({n, n}, at::kDouble)));
  const at::Tensor v = std::get<0>(at::linalg_qr(at::randn({n, n}, at::kDouble)));
  at::Tensor d = at::zeros({n}, at::kDouble);
  for (size_t i = 0; i < sigma.size(); ++i) d[int64_t(i)] = sigma[i];
  return at::matmul(u * d, v.t());
}

TEST(RankStatistics, ASpectrumBetweenTheTwoTolerancesSeparatesTheRulesAndIsFlagged) {
  const at::Tensor crossing = with_spectrum({1, 0.1, 0.01, 1e-3, 4e-6}, 64, 11).to(at::kFloat);
  const at::Tensor clean = with_spectrum({1, 0.1, 0.01, 1e-3}, 64, 12).to(at::kFloat);
  const auto s = rank_statistics(at::stack({crossing, clean}));
  ASSERT_EQ(s.size(), 2u);
  std::cout << "[rank] crossing: tolerance " << s[0].tolerance << " precision tolerance "
            << s[0].precision_tolerance << " sigma_5 " << s[0].sigma[4].item<double>()
            << " sigma_6 " << s[0].sigma[5].item<double>() << " (native "
            << s[0].sigma_native[5].item<double>() << ")\n";
  EXPECT_NEAR(s[0].tolerance, 64 * kFloatEps, 64 * kFloatEps * 1e-5);
  EXPECT_NEAR(s[0].precision_tolerance, 16 * kFloatEps, 16 * kFloatEps * 1e-5);
  EXPECT_EQ(s[0].rank, 4);
  EXPECT_EQ(s[0].precision_rank, 5);
  EXPECT_TRUE(s[0].rank_ambiguous);
  EXPECT_TRUE(s[0].precision_ambiguous);
  EXPECT_EQ(s[1].rank, 4);
  EXPECT_EQ(s[1].precision_rank, 4);
  EXPECT_FALSE(s[1].rank_ambiguous) << s[1].sigma_native[4].item<double>();
  EXPECT_FALSE(s[1].precision_ambiguous) << s[1].sigma[4].item<double>();
  // The float64 SVD sees the 4e-6 value itself (float32 storage moves it by ~1e-8).
  EXPECT_NEAR(s[0].sigma[4].item<double>(), 4e-6, 1e-7);

  // Float32 values stored as float64: the same float64-based statistics.
  const auto d = rank_statistics(at::stack({crossing, clean}).to(at::kDouble));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d[i].precision_rank, s[i].precision_rank) << i;
    EXPECT_EQ(d[i].precision_ambiguous, s[i].precision_ambiguous) << i;
    EXPECT_NEAR(d[i].precision_tolerance, s[i].precision_tolerance, 1e-18) << i;
    EXPECT_NEAR(d[i].effective_rank, s[i].effective_rank, 1e-12) << i;
    EXPECT_NEAR(d[i].stable_rank, s[i].stable_rank, 1e-12) << i;
    EXPECT_LE((d[i].sigma - s[i].sigma).abs().max().item<double>(), 1e-15) << i;
  }
  // torch's rule on the float64 copy uses ε₆₄ and counts the float32 rounding noise of
  // the values (σ ≈ 1e-8) as rank: full rank, the artefact the precision rule is there for.
  EXPECT_EQ(d[0].rank, 64);
  EXPECT_EQ(d[1].rank, 64);
}

// The float32 stacks' shorter way (issue 51): float64 values from the Gram matrix where
// accurate to 1e-6 (else an SVD), and torch's float32 SVD only where a value lies near the
// tolerance. Against the two SVDs on tall 197×64 matrices whose spectra fall at different
// rates through both tolerances: the rank must be torch.linalg.matrix_rank's
// (at::linalg_matrix_rank, the float32 SVD) on every matrix, and each float64 value within
// 1e-6 of itself (the Gram bound) or of the largest one's 1e-12 (an SVD's).
TEST(RankStatistics, TheShortWayCountsAsTorchAndKeepsTheFloat64Values) {
  std::vector<at::Tensor> stack;
  for (int i = 0; i < 12; ++i) {
    at::manual_seed(300 + static_cast<uint64_t>(i));
    const at::Tensor u = std::get<0>(at::linalg_qr(at::randn({197, 64}, at::kDouble)));
    const at::Tensor v = std::get<0>(at::linalg_qr(at::randn({64, 64}, at::kDouble)));
    // σ_j = 10^(-rate·j): rates from a well-conditioned head to one that is rank-deficient.
    const double rate = 0.02 + 0.03 * i;
    const at::Tensor sigma = at::pow(10.0, -rate * at::arange(64, at::kDouble));
    stack.push_back(at::matmul(u * sigma, v.t()).to(at::kFloat));
  }
  const at::Tensor all = at::stack(stack);
  const auto s = rank_statistics(all);
  ASSERT_EQ(s.size(), stack.size());
  const at::Tensor torch_rank = at::linalg_matrix_rank(all);
  const at::Tensor exact = at::linalg_svdvals(all.to(at::kDouble));
  int shortened = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].rank, torch_rank[int64_t(i)].item<int64_t>()) << i;
    const at::Tensor e = exact[int64_t(i)];
    const double top = e[0].item<double>();
    const at::Tensor bound = e * 1e-6 + top * 1e-12;
    EXPECT_TRUE(((s[i].sigma - e).abs() <= bound).all().item<bool>())
        << i << ": max |d| " << (s[i].sigma - e).abs().max().item<double>();
    if (s[i].sigma_native.is_same(s[i].sigma)) ++shortened;
    // A matrix's statistics are its own, whatever it is stacked with (the rank analysis
    // ranks all of a model's layers in one stack): the same LAPACK calls per matrix, only
    // the batched float64 Gram product's blocking may differ (~64·ε64·σ_max², far inside
    // 1e-12 of σ_max for every value kept).
    const analysis::RankStats alone = rank_statistics(all[int64_t(i)]).front();
    EXPECT_EQ(alone.rank, s[i].rank) << i;
    EXPECT_EQ(alone.precision_rank, s[i].precision_rank) << i;
    EXPECT_LE((alone.sigma - s[i].sigma).abs().max().item<double>(), 1e-12 * top) << i;
  }
  // The well-conditioned ones needed no float32 SVD (their values are far from it).
  EXPECT_GT(shortened, 0);
}

// The check before the eigensolver (gram_surely_inaccurate) sends a matrix straight to
// its SVD: it must do so only where the eigenvalues would have been refused anyway
// (gram_values_accurate false), and must catch the clearly rank-deficient ones, or it would
// cost a Cholesky factorisation for nothing. Spectra σ_j = 10^(-rate·j) on 197×64: the
// smallest value runs from 10^-0.6 (well conditioned) to 10^-19 of the largest, through the
// refusal floor √(e/2e-6) ≈ 2e-4 of σ_max; plus the zero matrix and one of rank one.
TEST(RankStatistics, TheCheckBeforeTheEigensolverOnlyCatchesRefusedMatrices) {
  const double unit = analysis::gram_error_unit(197, 64);
  int caught = 0, refused = 0;
  std::vector<at::Tensor> matrices;
  for (int i = 0; i < 30; ++i) {
    at::manual_seed(500 + static_cast<uint64_t>(i));
    const at::Tensor u = std::get<0>(at::linalg_qr(at::randn({197, 64}, at::kDouble)));
    const at::Tensor v = std::get<0>(at::linalg_qr(at::randn({64, 64}, at::kDouble)));
    const double rate = 0.01 * (i + 1);
    const at::Tensor sigma = at::pow(10.0, -rate * at::arange(64, at::kDouble));
    matrices.push_back(at::matmul(u * sigma, v.t()).to(at::kFloat));
  }
  matrices.push_back(at::zeros({197, 64}));
  matrices.push_back(at::matmul(at::randn({197, 1}), at::randn({1, 64})));
  for (size_t i = 0; i < matrices.size(); ++i) {
    const at::Tensor a = matrices[i].to(at::kDouble);
    const at::Tensor gram = at::mm(a.t(), a);
    const at::Tensor lambda = at::linalg_eigvalsh(gram).flip(0).clamp_min(0.0).contiguous();
    const bool accurate = analysis::gram_values_accurate(lambda.data_ptr<double>(), 64, unit);
    const bool surely_not = analysis::gram_surely_inaccurate(gram, unit);
    if (surely_not) {
      EXPECT_FALSE(accurate) << i;
    }
    caught += surely_not;
    refused += !accurate;
  }
  // Ten of the thirty spectra end above the floor; the rest, the zero and the rank-one
  // matrix are refused, and the check catches nearly all of them (a pivot bounds λ_min only
  // from above, so one just under the floor may pass to the eigensolver).
  EXPECT_GE(refused, 20);
  EXPECT_GE(caught, refused - 3);

  // Where the pivots are the eigenvalues (orthonormal columns scaled by σ: G = diag(σ²)),
  // the check's line is exact: half the refusal floor λ_min = e/(2e-6). A smallest value
  // 1.5× over the floor must reach the eigensolver and be accepted; one at a quarter of it
  // must be caught. Float32 rounding moves λ_min by ~2·ε₃₂·σ_max·σ_min, 1e-3 of it here.
  const double floor = unit / 2e-6;  // of σ_max² = 1
  at::manual_seed(7);
  const at::Tensor q = std::get<0>(at::linalg_qr(at::randn({197, 64}, at::kDouble)));
  for (const double over : {1.5, 0.25}) {
    at::Tensor sigma = at::linspace(1.0, std::sqrt(over * floor), 64, at::kDouble);
    const at::Tensor a = (q * sigma).to(at::kFloat).to(at::kDouble);
    const at::Tensor gram = at::mm(a.t(), a);
    const at::Tensor lambda = at::linalg_eigvalsh(gram).flip(0).clamp_min(0.0).contiguous();
    EXPECT_EQ(analysis::gram_values_accurate(lambda.data_ptr<double>(), 64, unit), over > 1.0);
    EXPECT_EQ(analysis::gram_surely_inaccurate(gram, unit), over < 0.5) << over;
  }
}

TEST(RankStatistics, AllZeroMatrixHasRankZero) {
  const auto s = rank_statistics(at::zeros({2, 6, 4}))[1];
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.precision_rank, 0);
  EXPECT_FALSE(s.rank_ambiguous);
  EXPECT_FALSE(s.precision_ambiguous);
  EXPECT_EQ(s.effective_rank, 0.0);
  EXPECT_EQ(s.stable_rank, 0.0);
  EXPECT_EQ(s.tolerance, 0.0);
  EXPECT_EQ(s.sigma.sizes(), at::IntArrayRef({4}));
  EXPECT_EQ(s.sigma.abs().max().item<double>(), 0.0);
}

TEST(RankStatistics, IdentityHasFullRankAndEqualSpectrum) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const auto s = rank_statistics(at::eye(7, dtype))[0];
    EXPECT_EQ(s.rank, 7);
    // Seven equal singular values: entropy log 7, so exp gives 7; Σσ²/σ_max² = 7.
    EXPECT_NEAR(s.effective_rank, 7.0, 7.0 * 1e-5);
    EXPECT_NEAR(s.stable_rank, 7.0, 7.0 * 1e-5);
  }
}

TEST(RankStatistics, EqualSingularValuesGiveEffectiveRankEqualToRank) {
  at::manual_seed(3);
  // X = 2.5 · P Qᵀ with P (10×4), Q (8×4) orthonormal columns: σ = (2.5, 2.5, 2.5, 2.5, 0…).
  const at::Tensor p = std::get<0>(at::linalg_qr(at::randn({10, 4}, at::kDouble)));
  const at::Tensor q = std::get<0>(at::linalg_qr(at::randn({8, 4}, at::kDouble)));
  const auto s = rank_statistics(2.5 * at::matmul(p, q.t()))[0];
  EXPECT_EQ(s.rank, 4);
  EXPECT_NEAR(s.effective_rank, 4.0, 1e-10);
  EXPECT_NEAR(s.stable_rank, 4.0, 1e-10);
  EXPECT_NEAR(s.sigma[0].item<double>(), 2.5, 1e-12);
}

TEST(RankStatistics, StableAndEffectiveRankOfDiag31) {
  const auto s = rank_statistics(at::diag(at::tensor({3.0, 1.0}, at::kDouble)))[0];
  EXPECT_EQ(s.rank, 2);
  EXPECT_NEAR(s.stable_rank, (9.0 + 1.0) / 9.0, 1e-14);
  // p = (3/4, 1/4): exp(−(¾ log ¾ + ¼ log ¼)).
  const double h = -(0.75 * std::log(0.75) + 0.25 * std::log(0.25));
  EXPECT_NEAR(s.effective_rank, std::exp(h), 1e-14);
  EXPECT_DOUBLE_EQ(s.tolerance, 2.0 * kDoubleEps * 3.0);
  EXPECT_NEAR(s.sigma[0].item<double>(), 3.0, 1e-14);
  EXPECT_NEAR(s.sigma[1].item<double>(), 1.0, 1e-14);
}

TEST(RankStatistics, UserToleranceIsHonoured) {
  // σ = (1, 1e-2, 1e-4) by construction.
  const at::Tensor x = at::diag(at::tensor({1e-2, 1.0, 1e-4}, at::kDouble));
  auto with = [&](double atol, double rtol) {
    RankOptions o;
    o.atol = atol;
    o.rtol = rtol;
    return rank_statistics(x, o)[0];
  };
  EXPECT_EQ(with(0, 0).rank, 3);     // 3·eps·1 is far below 1e-4
  EXPECT_EQ(with(0, 1e-3).rank, 2);  // rtol·σ_max = 1e-3
  EXPECT_DOUBLE_EQ(with(0, 1e-3).tolerance, 1e-3);
  EXPECT_EQ(with(0, 0.1).rank, 1);
  EXPECT_EQ(with(0.05, 0).rank, 1);
  EXPECT_DOUBLE_EQ(with(0.05, 0).tolerance, 0.05);
  EXPECT_EQ(with(5e-3, 0).rank, 2);
  EXPECT_EQ(with(1e-2, 0).rank, 1);    // strictly greater: σ = 1e-2 is not counted
  EXPECT_EQ(with(5e-5, 0.5).rank, 3);  // atol set: rtol is not used
  EXPECT_DOUBLE_EQ(with(5e-5, 0.5).tolerance, 5e-5);
  // A relative tolerance scales with each matrix's own σ_max.
  RankOptions rel;
  rel.rtol = 1e-3;
  const auto scaled = rank_statistics(at::stack({x, 100.0 * x}), rel);
  EXPECT_EQ(scaled[0].rank, 2);
  EXPECT_EQ(scaled[1].rank, 2);
  EXPECT_DOUBLE_EQ(scaled[1].tolerance, 0.1);
}

TEST(RankStatistics, DescribeStatesTheTolerance) {
  RankOptions o;
  EXPECT_EQ(o.describe(), "max(m,n)*eps(dtype)*sigma_max");
  o.rtol = 1e-3;
  EXPECT_EQ(o.describe(), "rtol=0.001");
  o.rtol = 2.5e-7;
  EXPECT_EQ(o.describe(), "rtol=2.5e-07");
  o.atol = 0.01;
  EXPECT_EQ(o.describe(), "atol=0.01");  // atol wins over rtol, as in rank_statistics
}

TEST(RankStatistics, RefusesWhatItCannotRank) {
  EXPECT_THROW(rank_statistics(at::ones({4})), std::invalid_argument);
  EXPECT_THROW(rank_statistics(at::ones({2, 2, 2, 2})), std::invalid_argument);
  EXPECT_THROW(rank_statistics(at::ones({3, 3}, at::kLong)), std::invalid_argument);
  // A NaN, +Inf or -Inf anywhere, tall or wide, float32 (checked on its Gram diagonal) or
  // float64 (checked entry by entry), in a stack of clean matrices.
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()})
    for (const auto type : {at::kFloat, at::kDouble})
      for (const auto& shape : {std::vector<int64_t>{3, 7, 4}, std::vector<int64_t>{3, 4, 7}}) {
        at::Tensor stack = at::randn(shape, type);
        stack[1][2][3] = bad;
        EXPECT_THROW(rank_statistics(stack), std::invalid_argument)
            << bad << " " << c10::toString(type) << " " << shape[1] << "x" << shape[2];
        EXPECT_THROW(rank_statistics(stack[1]), std::invalid_argument);
      }
  RankOptions negative;
  negative.atol = -1.0;
  EXPECT_THROW(rank_statistics(at::eye(3), negative), std::invalid_argument);
}

// ---- rank_subjects ----------------------------------------------------------------------

using attention::AttentionTrace;
using attention::TokenLayout;

// max |a − ref| / max |ref|, in double: the relative error the subject checks are held to.
double relative(const at::Tensor& a, const at::Tensor& ref) {
  return max_abs_diff(a, ref) / ref.to(at::kDouble).abs().max().item<double>();
}

// x (N, C) @ weightᵀ + bias in double, for a Linear or a 1×1 conv named `name`.
at::Tensor project(attention::AttentionMechanism& m, const std::string& name, const at::Tensor& x) {
  const auto params = m.named_parameters();
  const at::Tensor w = params[name + ".weight"].to(at::kDouble);
  at::Tensor y = at::matmul(x.to(at::kDouble), w.reshape({w.size(0), -1}).t());
  if (const at::Tensor* bias = params.find(name + ".bias")) y = y + bias->to(at::kDouble);
  return y;
}

// Part `part` of a head-major projection (N, parts·C) as (h, N, d).
at::Tensor head_part(const at::Tensor& y, int64_t part, int64_t c, int64_t heads) {
  return y.slice(1, part * c, (part + 1) * c)
      .reshape({y.size(0), heads, c / heads})
      .permute({1, 0, 2});
}

at::Tensor elu1(const at::Tensor& x) {
  return at::elu(x) + 1.0;
}

std::map<std::string, at::Tensor> by_name(const std::vector<analysis::RankSubject>& subjects) {
  std::map<std::string, at::Tensor> out;
  for (const auto& s : subjects) out[s.name] = s.matrices;
  return out;
}

std::vector<std::string> names(const std::vector<analysis::RankSubject>& subjects) {
  std::vector<std::string> out;
  for (const auto& s : subjects) out.push_back(s.name);
  return out;
}

// "output" must be (heads, N, d) with head h = (whole implicit matrix of h) · (h's values).
void expect_output_is_rows_times_v(const AttentionTrace& t, int64_t b, const at::Tensor& output,
                                   const std::string& label) {
  ASSERT_EQ(output.sizes(), at::IntArrayRef({t.heads, t.layout.tokens(), t.head_dim})) << label;
  for (int64_t h = 0; h < t.heads; ++h) {
    const auto& g = t.group_of(h);
    const at::Tensor ref =
        at::matmul(t.matrix(b, h).to(at::kDouble), g.v[b][h - g.first_head].to(at::kDouble));
    const double rel = relative(output[h], ref);
    std::cout << "[rank_subjects] " << label << " head " << h << " output vs rows·v: " << rel
              << "\n";
    EXPECT_LE(rel, 1e-5) << label << " head " << h;
  }
}

TEST(RankSubjects, LinearKvIsElu1KTransposeV) {
  auto m = make("linear", 32, 4);
  TokenLayout layout = attention::grid_layout(4, 5);
  layout.prefix = {"cls"};
  const at::Tensor x = random_tokens(2, layout.tokens(), 32);
  const auto t = m->forward_traced(x, layout).trace;
  const auto subjects = analysis::rank_subjects(*t, 1);
  EXPECT_EQ(names(subjects), (std::vector<std::string>{"kv", "output"}));
  const auto s = by_name(subjects);
  const at::Tensor qkv = project(*m, "qkv", x[1]);
  const at::Tensor ref = at::matmul(elu1(head_part(qkv, 1, 32, 4)).transpose(1, 2),
                                    head_part(qkv, 2, 32, 4));  // (h, d, d)
  const double rel = relative(s.at("kv"), ref);
  std::cout << "[rank_subjects] linear kv vs κ(k)ᵀv from the weights: " << rel << "\n";
  EXPECT_LE(rel, 1e-5);
  expect_output_is_rows_times_v(*t, 1, s.at("output"), "linear");
  // Rank of a d×d buffer of N = 21 tokens: at most d = 8 per head.
  for (const auto& r : analysis::rank_statistics(s.at("kv"))) EXPECT_LE(r.rank, 8);
}

TEST(RankSubjects, RalaKvPlainKvAndGatedOutputFromTheWeights) {
  const int64_t c = 32, heads = 2, h = 4, w = 6, n = h * w;
  auto m = make("rala", c, heads);
  const at::Tensor x = random_tokens(2, n, c, 11);
  const auto t = m->forward_traced(x, attention::grid_layout(h, w)).trace;
  const auto subjects = analysis::rank_subjects(*t, 0);
  EXPECT_EQ(names(subjects),
            (std::vector<std::string>{"kv", "kv_plain", "output", "output_gated"}));
  const auto s = by_name(subjects);

  const at::Tensor y4 = project(*m, "qkvo", x[0]);  // (N, 4C): [q | k | v | o]
  const at::Tensor q = elu1(head_part(y4, 0, c, heads)), k = elu1(head_part(y4, 1, c, heads));
  const at::Tensor v = head_part(y4, 2, c, heads), o = head_part(y4, 3, c, heads);
  // α_j = L · softmax_j(d^-0.5 · q̄ · k_j): the query-guided key weights.
  const double d = static_cast<double>(c / heads);
  const at::Tensor wts =
      at::softmax(at::matmul(k, q.mean(1).unsqueeze(-1)).squeeze(-1) / std::sqrt(d), -1);
  const at::Tensor alpha = wts * static_cast<double>(n);  // (h, N)
  const at::Tensor kv = at::matmul((k * alpha.unsqueeze(-1)).transpose(1, 2), v);
  const at::Tensor kv_plain = at::matmul(k.transpose(1, 2), v);
  const double rel_kv = relative(s.at("kv"), kv), rel_plain = relative(s.at("kv_plain"), kv_plain);
  std::cout << "[rank_subjects] rala kv " << rel_kv << ", kv_plain " << rel_plain << "\n";
  EXPECT_LE(rel_kv, 1e-5);
  EXPECT_LE(rel_plain, 1e-5);
  EXPECT_GT(relative(s.at("kv"), kv_plain), 1e-3) << "α must change the buffer";
  expect_output_is_rows_times_v(*t, 0, s.at("output"), "rala");

  // Gated: (rows·v + lepe(v)) ⊙ o, lepe a 5×5 depthwise conv of v on the grid.
  const auto params = m->named_parameters();
  const at::Tensor v_img = y4.slice(1, 2 * c, 3 * c).t().reshape({1, c, h, w});
  const at::Tensor lepe = at::conv2d(v_img, params["lepe.weight"].to(at::kDouble),
                                     params["lepe.bias"].to(at::kDouble), {1, 1}, {2, 2}, {1, 1}, c)
                              .reshape({c, n})
                              .t();  // (N, C)
  const at::Tensor mixed = at::stack({at::matmul(t->matrix(0, 0).to(at::kDouble), v[0]),
                                      at::matmul(t->matrix(0, 1).to(at::kDouble), v[1])});
  const at::Tensor gated = (mixed + head_part(lepe, 0, c, heads)) * o;
  const double rel_gated = relative(s.at("output_gated"), gated);
  std::cout << "[rank_subjects] rala output_gated vs (rows·v + lepe) ⊙ o: " << rel_gated << "\n";
  EXPECT_LE(rel_gated, 1e-5);
}

TEST(RankSubjects, CastlingKvIsUnitKTransposeV) {
  auto m = make("castling", 32, 4);
  m->eval();
  TokenLayout layout = attention::grid_layout(3, 5);
  layout.prefix = {"cls"};
  const at::Tensor x = random_tokens(1, layout.tokens(), 32, 5);
  const auto t = m->forward_traced(x, layout).trace;
  const auto s = by_name(analysis::rank_subjects(*t, 0));
  ASSERT_EQ(s.size(), 2u);
  const at::Tensor qkv = project(*m, "qkv", x[0]);
  const at::Tensor k = head_part(qkv, 1, 32, 4);
  const at::Tensor unit_k = k / k.norm(2, -1, true);  // k̂ = k/‖k‖ per token
  const at::Tensor ref = at::matmul(unit_k.transpose(1, 2), head_part(qkv, 2, 32, 4));
  const double rel = relative(s.at("kv"), ref);
  std::cout << "[rank_subjects] castling kv vs k̂ᵀv from the weights: " << rel << "\n";
  EXPECT_LE(rel, 1e-5);
  expect_output_is_rows_times_v(*t, 0, s.at("output"), "castling");
}

TEST(RankSubjects, SoftmaxOutputIsSoftmaxRowsTimesV) {
  auto m = make("softmax", 24, 3);
  TokenLayout layout = attention::grid_layout(3, 4);
  layout.prefix = {"cls", "dist"};
  const at::Tensor x = random_tokens(2, layout.tokens(), 24, 9);
  const auto t = m->forward_traced(x, layout).trace;
  const auto subjects = analysis::rank_subjects(*t, 1);
  ASSERT_EQ(names(subjects), std::vector<std::string>{"output"});
  expect_output_is_rows_times_v(*t, 1, subjects[0].matrices, "softmax");
  // And against softmax(q kᵀ/√d) v from the module's weights.
  const at::Tensor qkv = project(*m, "qkv", x[1]);
  const at::Tensor q = head_part(qkv, 0, 24, 3), k = head_part(qkv, 1, 24, 3);
  const at::Tensor ref = at::matmul(
      at::softmax(at::matmul(q, k.transpose(1, 2)) / std::sqrt(8.0), -1), head_part(qkv, 2, 24, 3));
  EXPECT_LE(relative(subjects[0].matrices, ref), 1e-5);
}

TEST(RankSubjects, HiloOutputStacksBothGroupsInHeadOrderOnAPaddedGrid) {
  auto m = make("hilo", 32, 4, {{"alpha", 0.5}});           // 2 Hi-Fi + 2 Lo-Fi heads, d = 8
  const TokenLayout layout = attention::grid_layout(5, 7);  // padded to 6×8 for s = 2
  const auto t = m->forward_traced(random_tokens(1, 35, 32, 13), layout).trace;
  ASSERT_EQ(t->groups.size(), 2u);
  const auto subjects = analysis::rank_subjects(*t, 0);
  ASSERT_EQ(names(subjects), std::vector<std::string>{"output"});
  expect_output_is_rows_times_v(*t, 0, subjects[0].matrices, "hilo");
}

TEST(RankSubjects, AnchorOutputAndImageRange) {
  auto m = make("anchor", 24, 3, {{"anchors", 5}});
  TokenLayout layout = attention::grid_layout(4, 4);
  layout.prefix = {"cls"};
  const auto t = m->forward_traced(random_tokens(2, 17, 24, 21), layout).trace;
  const auto subjects = analysis::rank_subjects(*t, 1);
  ASSERT_EQ(names(subjects), std::vector<std::string>{"output"});
  expect_output_is_rows_times_v(*t, 1, subjects[0].matrices, "anchor");
  EXPECT_THROW(analysis::rank_subjects(*t, 2), attention::TraceQueryError);
  EXPECT_THROW(analysis::rank_subjects(*t, -1), attention::TraceQueryError);
}

}  // namespace
}  // namespace attnlab::testing
