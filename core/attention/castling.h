// Castling-ViT's auxiliary-mask statistics (SPEC §1.3): how many entries of the
// training-only softmax S = softmax(q·d^-0.5 kᵀ) lie above the mask threshold ε, per head
// and overall — the quantity Castling's Fig. 6 tracks over training checkpoints.
//
// The counts are recomputed from the raw q, k a "castling" trace keeps, a chunk of query
// rows at a time, so they need no keep_scores trace (and no N×N tensor) and work on eval
// traces as well as training ones. The mechanism itself is in castling.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention/attention_trace.h"

namespace attnlab::attention {

struct MaskStatistics {
  double threshold = 0.0;               // ε the counts were taken with (S > ε)
  int64_t entries_per_head = 0;         // B·N·N softmax entries each head has
  std::vector<int64_t> above_per_head;  // entries with S > ε, summed over the images
  int64_t above_total = 0;              // sum over heads

  double fraction(int64_t head) const {
    return entries_per_head > 0
               ? static_cast<double>(above_per_head.at(static_cast<size_t>(head))) /
                     static_cast<double>(entries_per_head)
               : 0.0;
  }
  double overall_fraction() const {
    const auto all = entries_per_head * static_cast<int64_t>(above_per_head.size());
    return all > 0 ? static_cast<double>(above_total) / static_cast<double>(all) : 0.0;
  }
};

// Query rows per chunk: peak memory is heads × chunk_rows × N scores of one image.
constexpr int64_t kDefaultMaskChunkRows = 256;

// Count S > threshold for every head of every image of a castling trace (of image `image`
// of the batch alone when image >= 0). Throws TraceQueryError for a trace of another
// mechanism, chunk_rows < 1 or an image outside the batch.
MaskStatistics castling_mask_statistics(const AttentionTrace& trace, double threshold,
                                        int64_t chunk_rows = kDefaultMaskChunkRows,
                                        int64_t image = -1);

// The "threshold" option of the layer that produced a castling trace, and whether its
// masked softmax branch was part of the output (the layer was in training mode).
// Both throw TraceQueryError for a trace of another mechanism.
double castling_threshold(const AttentionTrace& trace);
bool castling_sparse_branch_active(const AttentionTrace& trace);

}  // namespace attnlab::attention
