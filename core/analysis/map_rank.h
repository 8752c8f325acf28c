// Rank of the attention map itself (issue 26; FLatten's Fig. 5): per head, the singular
// values of the implicit N×K map A the mechanism mixes with, and the rank statistics of
// core/analysis/rank.h on them (numerical rank under the float32 rule, precision rank,
// effective and stable rank; tolerances returned).
//
// Two ways to the singular values, never an N×N matrix where the map is factored:
//   factored  the trace offers A = L·Rᵀ (attention/map_factors.h; linear family, FLatten,
//             EfficientViT, Efficient, Hydra, RALA, AnchorFormer): σ(A) = σ(R_L·R_Rᵀ) from
//             the QR factors L = Q_L·R_L, R = Q_R·R_R, O((N + K)·r²) in float64; the rank
//             cannot exceed r (the head dim d, or M anchors), which is the `bound`.
//   explicit  every other map (softmax, Swin, SRA, HiLo, XCA's identity rows, and Castling,
//             whose 0.5·I term makes A full): the N×K rows in float64 and one SVD, up to
//             max_explicit_tokens tokens and keys; beyond, the head is "skipped".
// Lifted: when the layer adds a token mixing of v beside A (FLatten's dwc, RALA's LePE,
// Castling's dconv: out_c = A·v_c + W_c·v_c), the same statistics of A + W_c for a few
// channels c of the head, evenly spaced (the depthwise kernels differ per channel), up to
// the same size limit. A + W_c is how far the branch lifts the rank A alone is bound to.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/analysis/rank.h"
#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct MapRankOptions {
  RankOptions rank;  // the float32 rule's tolerance (default: max(N, K)·ε·σ_max)
  // Explicit maps and lifted maps are formed and SVD'd only up to this many tokens and keys
  // (a 1024×1024 float64 SVD takes about a second on one core).
  int64_t max_explicit_tokens = 1024;
  int64_t lift_channels = 4;  // channels of the added mixing per head, evenly spaced
};

struct HeadMapRank {
  int64_t head = 0, tokens = 0, keys = 0;
  std::string form;   // "factored", "explicit" or "skipped"
  int64_t bound = 0;  // rank the form allows: r for factored maps, min(N, K) otherwise
  RankStats stats;    // of A (default-constructed when skipped)
  // The layer's added mixing ("" when none, or when it could not be formed).
  std::string mixing;
  std::vector<int64_t> mixing_channels;
  std::vector<RankStats> lifted;  // of A + W_c, one per entry of mixing_channels
};

// σ of left·rightᵀ from the factors (N, r) and (K, r): float64 CPU, descending, length
// min(N, K, r).
at::Tensor factored_singular_values(const at::Tensor& left, const at::Tensor& right);

// Every head of image b. Throws attention::TraceQueryError for an image outside the batch
// and std::invalid_argument for non-finite maps or options < 1.
std::vector<HeadMapRank> map_ranks(const attention::AttentionTrace& trace, int64_t b,
                                   const MapRankOptions& options = {});

}  // namespace attnlab::analysis
