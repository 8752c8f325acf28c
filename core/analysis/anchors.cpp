// Anchor assignments of an AnchorFormer layer (SPEC §1.6, anchors.h): which anchor each
// token belongs to (hard and soft), how much each anchor is used, how sure each token's
// assignment is (entropy), and whether tokens with the same anchor form spatial regions
// (coherence over the token grid). Everything is read from the trace's "anchor.A"; the
// small per-image statistics are computed on the CPU, in double where they are sums.
#include "core/analysis/anchors.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace attnlab::analysis {
namespace {

// Coherence of the hard labels of the grid tokens (prefix tokens dropped), labels (N,).
double grid_coherence(const at::Tensor& labels, const attention::TokenLayout& layout) {
  return spatial_coherence(
      labels.slice(0, layout.num_prefix()).reshape({layout.height, layout.width}));
}

double grid_chance(const at::Tensor& labels, const attention::TokenLayout& layout) {
  return shuffled_coherence(
      labels.slice(0, layout.num_prefix()).reshape({layout.height, layout.width}));
}

}  // namespace

double shuffled_coherence(const at::Tensor& grid) {
  const int64_t n = grid.numel();
  if (n < 2) return 1.0;
  const at::Tensor counts = at::bincount(grid.flatten().cpu()).to(at::kDouble);
  return (counts * (counts - 1)).sum().item<double>() / static_cast<double>(n * (n - 1));
}

double spatial_coherence(const at::Tensor& grid) {
  if (!grid.defined() || grid.dim() != 2)
    throw std::invalid_argument("spatial_coherence: expected a 2-d grid (H, W) of labels, got " +
                                (grid.defined() ? std::to_string(grid.dim()) + "-d" : "none"));
  const int64_t h = grid.size(0), w = grid.size(1);
  const int64_t pairs = h * std::max<int64_t>(w - 1, 0) + std::max<int64_t>(h - 1, 0) * w;
  if (pairs == 0) return 1.0;  // no adjacent pair: nothing disagrees
  const at::Tensor g = grid.cpu();
  const int64_t same =
      (g.slice(1, 1) == g.slice(1, 0, w - 1)).sum().item<int64_t>() +  // horizontal pairs
      (g.slice(0, 1) == g.slice(0, 0, h - 1)).sum().item<int64_t>();   // vertical pairs
  return static_cast<double>(same) / static_cast<double>(pairs);
}

AnchorAssignment anchor_assignment(const attention::AttentionTrace& trace, int64_t b) {
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("anchor_assignment: image " + std::to_string(b) +
                                     " is out of range: the trace holds " +
                                     std::to_string(trace.batch));
  const at::Tensor& all = trace.internal("anchor.A");  // TraceQueryError when absent
  const attention::TokenLayout& layout = trace.layout;
  if (all.dim() != 4 || all.size(0) != trace.batch || all.size(2) != layout.tokens())
    throw attention::TraceQueryError(
        "anchor_assignment: anchor.A must be (B, h, N, M) with B = " + std::to_string(trace.batch) +
        " and N = " + std::to_string(layout.tokens()) + " (" + layout.describe() + "), got " +
        std::to_string(all.dim()) + "-d of " + std::to_string(all.numel()) + " entries");

  AnchorAssignment r;
  r.soft = all[b].to(at::kCPU, at::kFloat).contiguous();  // (h, N, M)
  const at::Tensor a = r.soft.to(at::kDouble);
  const double n = static_cast<double>(a.size(1));
  r.hard = r.soft.argmax(-1);                    // (h, N)
  r.usage = a.sum(1) / n;                        // (h, M): Δ_m / N
  r.entropy = -at::special_xlogy(a, a).sum(-1);  // (h, N); 0·log 0 = 0
  r.coherence = at::empty({a.size(0)}, at::kDouble);
  r.coherence_chance = at::empty({a.size(0)}, at::kDouble);
  for (int64_t h = 0; h < a.size(0); ++h) {
    r.coherence[h] = grid_coherence(r.hard[h], layout);
    r.coherence_chance[h] = grid_chance(r.hard[h], layout);
  }

  // The head-mean of A: one assignment for the layer (the argmax of the fused soft rows).
  const at::Tensor fused = a.mean(0);  // (N, M)
  r.fused_hard = fused.argmax(-1);
  r.fused_usage = fused.sum(0) / n;
  r.fused_coherence = grid_coherence(r.fused_hard, layout);
  r.fused_coherence_chance = grid_chance(r.fused_hard, layout);
  return r;
}

}  // namespace attnlab::analysis
