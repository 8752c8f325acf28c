// Attention-map rank (see map_rank.h): maps and their lifts formed on the calling thread,
// then every SVD a small task on a single-threaded BLAS, side by side.
#include "core/analysis/map_rank.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/attention/map_factors.h"
#include "core/runtime/small_tasks.h"

namespace attnlab::analysis {

at::Tensor factored_singular_values(const at::Tensor& left, const at::Tensor& right) {
  if (left.dim() != 2 || right.dim() != 2 || left.size(1) != right.size(1))
    throw std::invalid_argument("factored_singular_values: expected factors (N, r) and (K, r)");
  const at::Tensor l = left.detach().to(at::kCPU, at::kDouble);
  const at::Tensor r = right.detach().to(at::kCPU, at::kDouble);
  if (!at::isfinite(l).all().item<bool>() || !at::isfinite(r).all().item<bool>())
    throw std::invalid_argument("attention-map rank: the map's factors hold NaN or Inf values");
  // L·Rᵀ = Q_L·(R_L·R_Rᵀ)·Q_Rᵀ with orthonormal columns in Q_L, Q_R: same singular values.
  const at::Tensor rl = std::get<1>(at::linalg_qr(l, "reduced"));
  const at::Tensor rr = std::get<1>(at::linalg_qr(r, "reduced"));
  return at::linalg_svdvals(at::matmul(rl, rr.t())).contiguous();
}

namespace {

// Evenly spaced channels of d, at most `count`.
std::vector<int64_t> spaced_channels(int64_t d, int64_t count) {
  std::vector<int64_t> out;
  const int64_t n = std::min(d, count);
  for (int64_t i = 0; i < n; ++i) out.push_back(i * d / n);
  return out;
}

// One SVD to run: the matrix (float64 CPU) and where its statistics go.
struct SvdJob {
  at::Tensor matrix;
  RankStats* out;
};

}  // namespace

std::vector<HeadMapRank> map_ranks(const attention::AttentionTrace& trace, int64_t b,
                                   const MapRankOptions& options) {
  if (options.max_explicit_tokens < 1 || options.lift_channels < 1)
    throw std::invalid_argument("map_ranks: max_explicit_tokens and lift_channels must be >= 1");
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("attention-map rank: image " + std::to_string(b) +
                                     " of a batch of " + std::to_string(trace.batch));
  const auto* factored = dynamic_cast<const attention::MapFactorSource*>(&trace);
  const auto* mixing = dynamic_cast<const attention::AddedMixingSource*>(&trace);
  // The trace's dtype, bf16/fp16 (--dtype) read by the float32 rules as rank_statistics
  // reads them (rank.cpp): the maps are formed in float64 here either way.
  const at::ScalarType dtype = trace.groups.empty()
                                   ? at::kFloat
                                   : at::promote_types(trace.groups[0].q.scalar_type(), at::kFloat);
  const int64_t n = trace.layout.tokens();

  std::vector<HeadMapRank> out(size_t(trace.heads));
  std::vector<SvdJob> jobs;
  for (int64_t h = 0; h < trace.heads; ++h) {
    HeadMapRank& r = out[size_t(h)];
    r.head = h;
    r.tokens = n;
    r.keys = trace.group_of(h).keys.size();
    const bool small = n <= options.max_explicit_tokens && r.keys <= options.max_explicit_tokens;
    const auto factors = factored ? factored->map_factors(b, h) : std::nullopt;
    at::Tensor a;  // the map in float64 on the CPU, when it is formed
    if (factors && factors->identity == 0.0) {
      r.form = "factored";
      r.bound = std::min({n, r.keys, factors->left.size(1)});
      r.stats = rank_statistics_of_spectrum(
          factored_singular_values(factors->left, factors->right), n, r.keys, dtype,
          options.rank);
    } else if (small) {
      r.form = "explicit";
      r.bound = std::min(n, r.keys);
      a = trace.matrix(b, h).detach().to(at::kCPU, at::kDouble);
      if (!at::isfinite(a).all().item<bool>())
        throw std::invalid_argument("attention-map rank: head " + std::to_string(h) + " of " +
                                    trace.mechanism + " holds NaN or Inf weights");
      jobs.push_back({a, &r.stats});
    } else {
      r.form = "skipped";
      r.bound = std::min(n, r.keys);
    }
    if (!mixing || !small || r.keys != n) continue;
    r.mixing_channels = spaced_channels(trace.head_dim, options.lift_channels);
    const std::vector<at::Tensor> lifts = mixing->added_mixing(h, r.mixing_channels);
    if (lifts.empty()) {
      r.mixing_channels.clear();
      continue;
    }
    r.mixing = mixing->added_mixing_name();
    if (!a.defined()) a = trace.matrix(b, h).detach().to(at::kCPU, at::kDouble);
    r.lifted.resize(lifts.size());
    for (size_t c = 0; c < lifts.size(); ++c) jobs.push_back({a + lifts[c], &r.lifted[c]});
  }
  // Every matrix is n×keys (or n×n), computed in the trace's dtype.
  runtime::for_each_small_task(int64_t(jobs.size()), [&](int64_t i) {
    const at::Tensor& m = jobs[size_t(i)].matrix;
    *jobs[size_t(i)].out = rank_statistics_of_spectrum(at::linalg_svdvals(m), m.size(0),
                                                       m.size(1), dtype, options.rank);
  });
  return out;
}

}  // namespace attnlab::analysis
