// Attention entropy per head (issue 26): how spread each query's attention row is. For a
// row p over the head's K keys, H = −Σ_j p_j·ln p_j (0·ln 0 = 0), in nats; H / ln K is 1 for
// a uniform row and 0 for a one-hot one, and exp(H) is the row's effective support (the
// number of keys a uniform row of that entropy would spread over). Per head, each is the
// mean over every query token of the layer (prefix tokens included).
//
// Rows are the mechanism's own implicit rows in the head's key space (HiLo's Lo-Fi heads:
// over the pooled keys, K of them), a chunk of queries at a time: memory O(chunk·K), never
// N×N. Signed rows (Castling's linear-angular kernel, whose rows may hold negative weights)
// are not distributions: their entropy is that of |row| / Σ|row|, and the result says so.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct AttentionEntropy {
  at::Tensor entropy;     // (heads,) float64 CPU, nats
  at::Tensor normalised;  // (heads,) entropy / ln K (0 when K = 1)
  at::Tensor support;     // (heads,) mean over queries of exp(H)
  std::vector<int64_t> keys;  // K per head
  // Some row of the layer held a negative weight: the entropies are those of |row|/Σ|row|.
  bool signed_rows = false;
};

// The entropy of each row of `rows` (n, K), float64 (n,), of |row| / Σ|row| (a row of
// zeros: 0). `signed_rows`, when given, is set when any weight is negative.
at::Tensor row_entropy(const at::Tensor& rows, bool* signed_rows = nullptr);

// Every head of image b of the trace. Throws std::invalid_argument for chunk_rows < 1 and
// attention::TraceQueryError for an image outside the batch.
AttentionEntropy attention_entropy(const attention::AttentionTrace& trace, int64_t b,
                                   int64_t chunk_rows = 256);

}  // namespace attnlab::analysis
