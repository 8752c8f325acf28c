// Rank statistics of stacks of matrices (SPEC §3, RALA Figs. 2, 4, 5, 8) and the per-head
// matrices each mechanism's trace offers for them (rank.h), on the CPU. The float64 singular
// values every definition reads come from each matrix's Gram eigenvalues where that is
// accurate to 1e-6, else its float64 SVD (float32_stack_values); the float32 rule's count is
// torch.linalg.matrix_rank's, from an SVD in the matrices' own dtype wherever a float64 value
// lies near its tolerance (elsewhere the two cannot differ: rank_statistics). Everything
// after that (thresholds, entropies) is a few scalars per matrix, in double.
#include "core/analysis/rank.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "core/io/text.h"
#include "core/runtime/precision.h"
#include "core/runtime/small_tasks.h"

namespace attnlab::analysis {
namespace {

// Machine epsilon of the matrices' real value type (complex matrices use their parts').
double epsilon_of(at::ScalarType type) {
  switch (c10::toRealValueType(type)) {
    case at::kFloat:
      return static_cast<double>(std::numeric_limits<float>::epsilon());
    case at::kDouble:
      return std::numeric_limits<double>::epsilon();
    default:
      throw std::invalid_argument(std::string("rank_statistics: matrices must be float32 or "
                                              "float64 (real or complex), got ") +
                                  c10::toString(type));
  }
}

// A matrix's n singular values, read in place (a row of a contiguous (matrices, n) tensor).
struct Values {
  const double* p;
  int64_t n;
  double max() const { return n > 0 ? *std::max_element(p, p + n) : 0.0; }
};

Values row_values(const at::Tensor& rows, int64_t i) {
  return {rows.data_ptr<double>() + i * rows.size(1), rows.size(1)};
}

// Singular values above `tolerance`, and whether one lies within the ambiguity factor of it.
std::pair<int64_t, bool> count_above(Values sigma, double tolerance) {
  const double* p = sigma.p;
  int64_t above = 0, near = 0;
  for (int64_t i = 0; i < sigma.n; ++i) {
    if (p[i] > tolerance) ++above;
    if (p[i] > tolerance / kRankAmbiguityFactor && p[i] <= tolerance * kRankAmbiguityFactor) ++near;
  }
  // All-zero matrices (tolerance 0) have nothing near their tolerance.
  return {above, tolerance > 0.0 && near > 0};
}

// Effective and stable rank of a float64 spectrum.
void spread_of(Values sigma, RankStats& s) {
  const double* p = sigma.p;
  const int64_t n = sigma.n;
  double sum = 0.0, sum_sq = 0.0, max = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += p[i];
    sum_sq += p[i] * p[i];
    max = std::max(max, p[i]);
  }
  if (max <= 0.0) return;  // all-zero (or empty) matrix: every rank is 0
  // exp of the Shannon entropy of σ/Σσ; zero singular values carry no mass (0·log 0 = 0).
  double entropy = 0.0;
  for (int64_t i = 0; i < n; ++i)
    if (p[i] > 0.0) entropy -= (p[i] / sum) * std::log(p[i] / sum);
  s.effective_rank = std::exp(entropy);
  s.stable_rank = sum_sq / (max * max);
}

// Descending singular values of each matrix of the stack (n, m, k), (n, min(m, k)) float64
// on the CPU: in the stack's own dtype (`native`, as torch.linalg.matrix_rank computes them)
// and, for a float32 stack, of the values in float64 (`precise`; the same tensor for a
// float64 stack). On the CPU every SVD is a small task on a single-threaded BLAS, side by
// side (runtime/small_tasks.h); each is the LAPACK call a batched svdvals makes for it.
// A real float32 stack on the CPU takes a shorter way (float32_stack_values) that needs the
// SVDs only where they could change a result; `native_needed` then says which matrices
// still need their float32 SVD (the caller decides, from the float64 values).
struct SingularValues {
  at::Tensor native, precise;
};

at::Tensor as_double(const at::Tensor& t) {
  return t.to(c10::isComplexType(t.scalar_type()) ? at::kComplexDouble : at::kDouble);
}

// The largest relative error accepted for a singular value taken from the Gram matrix's
// eigenvalues: far below the float32 values' own (ε₃₂ ≈ 6e-8 relative per entry, so the
// precision rule's floor at 2·√m·ε₃₂·σ_max), and far from every tolerance's ambiguity band.
constexpr double kGramRelativeError = 1e-6;

// Float64 singular values of a real float32 stack (n, m, k): √ of the eigenvalues of each
// matrix's Gram matrix on its shorter side, a float64 product per matrix and
// a symmetric eigensolver per matrix (about half an SVD's work, in BLAS-3), wherever that is
// accurate: products of float32 values are exact in float64, so G carries only the rounding
// of its r-long sums, and the eigensolver's backward error, together at most
// e = (max(m, k) + 2·r)·ε₆₄·σ_max² on every eigenvalue (Weyl); σ_i = √λ_i is then within
// e/(2σ_i²) of itself, relative. A matrix whose smallest singular value makes that exceed
// kGramRelativeError (a rank-deficient one) gets its float64 SVD instead, as before.
at::Tensor float32_stack_values(const at::Tensor& stack) {
  const int64_t n = stack.size(0), m = stack.size(1), k = stack.size(2), r = std::min(m, k);
  at::Tensor sigma = at::empty({n, r}, at::kDouble);
  const double e_unit = gram_error_unit(m, k);
  // Each matrix's float64 copy, Gram matrix and eigensolver in one task: the copies and
  // products (the larger part of the flops) are spread over the cores with the
  // eigensolvers, where one batched product of the stack ran on one core.
  runtime::for_each_small_task(n, [&](int64_t i) {
    const at::Tensor a = stack[i].to(at::kDouble);
    const at::Tensor gram = m >= k ? at::mm(a.t(), a) : at::mm(a, a.t());
    // The values are finite exactly where every Gram diagonal entry is: each entry is
    // squared into one of them, and no sum of float32 squares reaches float64's overflow
    // (max(m, k)·(3.4e38)² ≈ max(m, k)·1e77), while a NaN or Inf carries through: r values
    // to look at instead of every entry.
    if (!at::isfinite(gram.diagonal()).all().item<bool>())
      throw std::invalid_argument("rank_statistics: the matrices hold NaN or Inf values");
    if (!gram_surely_inaccurate(gram, e_unit)) {
      at::Tensor lambda = at::linalg_eigvalsh(gram).flip(0).clamp_min(0.0);  // descending
      if (gram_values_accurate(lambda.data_ptr<double>(), r, e_unit)) {
        sigma[i].copy_(lambda.sqrt_());
        return;
      }
    }
    sigma[i].copy_(at::linalg_svdvals(a));
  });
  return sigma;
}

SingularValues singular_values(const at::Tensor& stack, bool precise_too = true) {
  const int64_t n = stack.size(0), r = std::min(stack.size(1), stack.size(2));
  const bool is_double = c10::toRealValueType(stack.scalar_type()) == at::kDouble;
  if (r == 0) {
    const at::Tensor none = at::zeros({n, 0}, at::kDouble);
    return {none, none};
  }
  at::Tensor native = at::empty({n, r}, at::kDouble);
  const bool one = is_double || !precise_too;  // one SVD per matrix
  at::Tensor precise = one ? native : at::empty({n, r}, at::kDouble);
  runtime::for_each_small_task(one ? n : 2 * n, [&](int64_t t) {
    const int64_t i = t % n;
    if (t < n)
      native[i].copy_(at::linalg_svdvals(stack[i]));
    else
      precise[i].copy_(at::linalg_svdvals(as_double(stack[i])));
  });
  return {native, precise};
}

// (heads, ...) stacked head outputs of one image: the rows·v features of every head.
at::Tensor head_outputs(const attention::AttentionTrace& trace, int64_t b) {
  std::vector<at::Tensor> heads;
  heads.reserve(static_cast<size_t>(trace.heads));
  for (int64_t h = 0; h < trace.heads; ++h) heads.push_back(trace.head_output(b, h));
  return at::stack(heads);
}

}  // namespace

// Whether a Gram matrix's eigenvalues certainly miss kGramRelativeError (below), known
// before its eigensolver (~15× a Cholesky factorisation here) runs: a rank-deficient
// matrix then goes straight to its SVD. Each Cholesky pivot is 1/(G_j⁻¹)_jj of a leading
// block G_j, at least λ_min(G_j) and so at least λ_min(G) (interlacing), and λ_max is at
// least G's largest diagonal entry: a pivot under the accepted floor, taken on that
// diagonal, puts λ_min under it too. A factorisation that stops (a pivot ≤ 0) has λ_min at
// rounding level. The floor is halved so that the pivots' rounding (~r·ε₆₄·λ_max, 10⁻⁶
// of the floor) never decides: a borderline matrix takes the eigensolver, as before.
bool gram_surely_inaccurate(const at::Tensor& gram, double error_unit) {
  const auto [factor, info] = at::linalg_cholesky_ex(gram);
  if (info.item<int64_t>() != 0) return true;
  const auto g = gram.accessor<double, 2>();
  const auto f = factor.accessor<double, 2>();
  double diagonal_max = 0.0, pivot_min = std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < g.size(0); ++j) {
    diagonal_max = std::max(diagonal_max, g[j][j]);
    pivot_min = std::min(pivot_min, f[j][j] * f[j][j]);
  }
  const double floor = error_unit * diagonal_max / (2.0 * kGramRelativeError);
  return pivot_min < 0.5 * floor;
}

double gram_error_unit(int64_t m, int64_t k) {
  return double(std::max(m, k) + 2 * std::min(m, k)) * std::numeric_limits<double>::epsilon();
}

bool gram_values_accurate(const double* l, int64_t r, double error_unit) {
  return l[0] > 0.0 && l[r - 1] * 2.0 * kGramRelativeError >= error_unit * l[0];  // λ_max = σ_max²
}

std::string RankOptions::describe() const {
  if (atol > 0.0) return "atol=" + text::shortest_decimal(atol);
  if (rtol > 0.0) return "rtol=" + text::shortest_decimal(rtol);
  // The dtype is the matrices', not known here; RankStats::tolerance holds the number.
  return "max(m,n)*eps(dtype)*sigma_max";
}

std::vector<RankDefinition> rank_definitions(const RankOptions& options) {
  return {
      {"rank", "numerical rank, float32 rule as torch.linalg.matrix_rank",
       "count of singular values (SVD in the matrices' dtype, float32 here) above " +
           options.describe()},
      {"precision_rank", "rank above float32 precision",
       "count of singular values (float64, of the values: their Gram matrix's eigenvalues "
       "where accurate to 1e-6, else an SVD) above "
       "2*sqrt(max(m,n))*eps(float32)*sigma_max: the spectral norm of independent float32 "
       "rounding errors of the entries, which may move every singular value (Weyl)"},
      {"effective_rank", "effective rank",
       "exp of the Shannon entropy of sigma/sum(sigma), float64 singular values"},
      {"stable_rank", "stable rank", "sum(sigma^2)/sigma_max^2, float64 singular values"},
  };
}

std::string rank_ambiguity_rule() {
  return "a rank is flagged ambiguous when a singular value lies within a factor " +
         text::shortest_decimal(kRankAmbiguityFactor) +
         " of its rule's tolerance (above or below): moving the tolerance that much would "
         "change the count";
}

std::vector<RankStats> rank_statistics(const at::Tensor& reduced_or_not,
                                       const RankOptions& options) {
  // Matrices from a forward at --dtype bf16/fp16 are analysed as their fp32 copy, by the
  // float32 rules: LibTorch has no SVD at those precisions, and the rules' epsilon at 8
  // significant bits would put the tolerance above the largest singular value
  // (max(m, k)·2^-7 > 1 past 128 rows). Singular values under about 2^-8 of the largest are
  // then the forward's rounding, which the float32 rules count (docs/ARCHITECTURE.md).
  // On the CPU whatever device the matrices come from: they are small (a head's d×d buffer
  // or N×d output), and LAPACK's SVDs of them side by side beat cuSOLVER's one launch per
  // matrix (rank was 5–13× slower on an H200 than on 16 CPU threads, and RAVLT's ranks did
  // not finish in minutes: docs/BENCHMARKS.md).
  const at::Tensor matrices = runtime::full_precision(reduced_or_not).cpu();
  if (!matrices.defined() || (matrices.dim() != 2 && matrices.dim() != 3))
    throw std::invalid_argument(
        "rank_statistics: expected matrices (m, k) or a stack (n, m, k), got " +
        (matrices.defined() ? std::to_string(matrices.dim()) + "-d" : std::string("none")));
  if (options.atol < 0.0 || options.rtol < 0.0 || !std::isfinite(options.atol) ||
      !std::isfinite(options.rtol))
    throw std::invalid_argument(
        "rank_statistics: atol and rtol must be finite and >= 0, got atol=" +
        text::shortest_decimal(options.atol) + ", rtol=" + text::shortest_decimal(options.rtol));
  const at::ScalarType type = matrices.scalar_type();
  const double eps = epsilon_of(type);
  // The values were computed in float32 (or coarser): a float64 copy holds no more digits.
  const double eps_data = std::max(eps, epsilon_of(at::kFloat));
  const at::Tensor stack = matrices.dim() == 2 ? matrices.unsqueeze(0) : matrices;
  const int64_t m = stack.size(1), k = stack.size(2);
  // A real float32 stack is checked on its Gram diagonal (float32_stack_values).
  const bool checked_later = type == at::kFloat && std::min(m, k) > 0;
  if (!checked_later && stack.numel() > 0 && !at::isfinite(stack).all().item<bool>())
    throw std::invalid_argument("rank_statistics: the matrices hold NaN or Inf values");

  const bool is_double = c10::toRealValueType(type) == at::kDouble;
  const double rtol = options.rtol > 0.0 ? options.rtol : static_cast<double>(std::max(m, k)) * eps;
  const double noise = 2.0 * std::sqrt(static_cast<double>(std::max(m, k))) * eps_data;
  SingularValues values;
  std::vector<bool> own_native;  // matrices whose float32-rule values are their float64 ones
  if (type == at::kFloat && std::min(m, k) > 0) {
    // The float64 values first; a matrix's float32 SVD (torch's, for the float32 rule) only
    // where it could count differently: where a float64 value lies within
    // kRankAmbiguityFactor of the rule's tolerance, or the tolerance is below the float32
    // SVD's own error. LAPACK's singular values are off by a small multiple of ε₃₂·σ_max
    // (backward stable), far less than the (1 − 1/kRankAmbiguityFactor)·max(m, k)·ε₃₂·σ_max
    // it would take to carry a value across the default tolerance from outside that band.
    values.precise = float32_stack_values(stack);
    values.native = values.precise;
    own_native.assign(size_t(stack.size(0)), true);
    const double safe_rtol = static_cast<double>(std::max(m, k)) * eps;
    std::vector<int64_t> needed;
    for (int64_t i = 0; i < stack.size(0); ++i) {
      const Values precise = row_values(values.precise, i);
      const double sigma_max = precise.p[0];  // descending
      const double tolerance = options.atol > 0.0 ? options.atol : rtol * sigma_max;
      if (tolerance < safe_rtol * sigma_max || count_above(precise, tolerance).second) {
        needed.push_back(i);
        own_native[size_t(i)] = false;
      }
    }
    if (!needed.empty()) {
      values.native = values.precise.clone();
      const at::Tensor index = at::tensor(needed, at::kLong);
      values.native.index_copy_(0, index,
                                singular_values(stack.index_select(0, index), false).native);
    }
  } else {
    values = singular_values(stack);
  }
  const at::Tensor native = values.native.contiguous();
  const at::Tensor precise = is_double ? native : values.precise.contiguous();
  std::vector<RankStats> out;
  out.reserve(static_cast<size_t>(stack.size(0)));
  for (int64_t i = 0; i < stack.size(0); ++i) {
    // The statistics from the values in place; each matrix's own tensors only to hand out.
    const Values sigma = row_values(precise, i), sigma_native = row_values(native, i);
    const bool same = is_double || (!own_native.empty() && own_native[size_t(i)]);
    RankStats s;
    s.sigma = precise[i].clone();
    s.sigma_native = same ? s.sigma : native[i].clone();
    s.tolerance = options.atol > 0.0 ? options.atol : rtol * sigma_native.max();
    std::tie(s.rank, s.rank_ambiguous) = count_above(sigma_native, s.tolerance);
    s.precision_tolerance = noise * sigma.max();
    std::tie(s.precision_rank, s.precision_ambiguous) = count_above(sigma, s.precision_tolerance);
    spread_of(sigma, s);
    out.push_back(s);
  }
  return out;
}

RankStats rank_statistics_of_spectrum(const at::Tensor& sigma, int64_t m, int64_t k,
                                      at::ScalarType computed_in, const RankOptions& options) {
  const double eps = std::max(epsilon_of(computed_in), epsilon_of(at::kFloat));
  RankStats s;
  s.sigma = std::get<0>(sigma.to(at::kCPU, at::kDouble).sort(0, /*descending=*/true)).contiguous();
  s.sigma_native = s.sigma;
  if (s.sigma.numel() > 0 && !at::isfinite(s.sigma).all().item<bool>())
    throw std::invalid_argument("rank_statistics: the singular values hold NaN or Inf values");
  const double max = s.sigma.numel() > 0 ? s.sigma.max().item<double>() : 0.0;
  const double rtol = options.rtol > 0.0 ? options.rtol
                                         : static_cast<double>(std::max(m, k)) *
                                               epsilon_of(computed_in);
  s.tolerance = options.atol > 0.0 ? options.atol : rtol * max;
  const Values sigma_values{s.sigma.data_ptr<double>(), s.sigma.numel()};
  std::tie(s.rank, s.rank_ambiguous) = count_above(sigma_values, s.tolerance);
  s.precision_tolerance = 2.0 * std::sqrt(static_cast<double>(std::max(m, k))) * eps * max;
  std::tie(s.precision_rank, s.precision_ambiguous) =
      count_above(sigma_values, s.precision_tolerance);
  spread_of(sigma_values, s);
  return s;
}

std::vector<RankSubject> rank_subjects(const attention::AttentionTrace& trace, int64_t b) {
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("rank_subjects: image " + std::to_string(b) +
                                     " is out of range: the trace holds " +
                                     std::to_string(trace.batch));
  // The mechanism's own matrices (its trace declares them), around the output every
  // mechanism has.
  std::vector<RankSubject> out, after;
  for (auto& m : trace.rank_matrices(b))
    (m.after_output ? after : out).push_back({m.name, std::move(m.matrices)});
  out.push_back({"output", head_outputs(trace, b)});
  for (auto& m : after) out.push_back(std::move(m));
  return out;
}

}  // namespace attnlab::analysis
