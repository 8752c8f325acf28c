// Anchor assignments (SPEC §1.6, AnchorFormer): from an anchor trace's A (softmax over the
// M anchors for every token): hard assignment argmax_m A[i, m], soft assignment A[i, :],
// anchor usage Δ_m / N, per-token assignment entropy −Σ_m A log A (nats), and spatial
// coherence — the share of 4-neighbour pairs of grid tokens with the same hard anchor
// (prefix tokens excluded). Per head, and for the head-mean of A ("fused").
#pragma once

#include <ATen/core/Tensor.h>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct AnchorAssignment {
  at::Tensor soft;              // (heads, N, M) float32 on CPU: A for image b
  at::Tensor hard;              // (heads, N) int64
  at::Tensor usage;             // (heads, M) Δ_m / N (sums to 1 per head)
  at::Tensor entropy;           // (heads, N) nats
  at::Tensor coherence;         // (heads,) float64
  at::Tensor coherence_chance;  // (heads,) float64: shuffled_coherence of the same labels
  // The same from the head-mean of A.
  at::Tensor fused_hard;   // (N,)
  at::Tensor fused_usage;  // (M,)
  double fused_coherence = 0.0;
  double fused_coherence_chance = 0.0;
};

// Throws TraceQueryError for a trace without "anchor.A".
AnchorAssignment anchor_assignment(const attention::AttentionTrace& trace, int64_t b);

// Share of horizontally or vertically adjacent cells of `grid` (H, W) with equal labels;
// 1 for grids with no adjacent pair.
double spatial_coherence(const at::Tensor& grid);

// The coherence the same labels would have on average if placed at random: over random
// permutations of the cells, the chance that two distinct cells share a label,
// Σ_m c_m (c_m − 1) / (n (n − 1)) with c_m the count of label m among n cells (1 when
// n < 2). The baseline against which spatial_coherence says "regions, not noise".
double shuffled_coherence(const at::Tensor& grid);

}  // namespace attnlab::analysis
