// Patch retrieval (issue 70 goal 4): the k tokens of an index most similar to a query vector,
// by cosine similarity, across all N·T tokens (core/retrieval/token_index.h).
//
//   cosine(a, q) = a·q / (|a| |q|), and 0 when either norm is 0 (a zero-norm row scores 0;
//   a zero query scores 0 everywhere).
//
// Ordering is total and documented: score descending, then image ascending, then token
// ascending. Each row's score is computed by the same code whatever the chunking or the
// number of threads (float32 products summed in 8 fixed lanes, then the lanes in a fixed
// order; the division in double, rounded to float), so the result is identical run to run
// and thread count to thread count, ties included (identical vectors score identically).
// Accuracy: float32 sums of F products, so a score is within about (F + 2)·2^-24 of the
// exact cosine (|error of a·q| ≤ F·u·Σ|a_i q_i| ≤ F·u·|a||q|, plus the norms' errors).
// Rows whose score is not a number (NaN or infinite values in the file) are never returned.
//
// The scan runs in chunks of rows: between chunks the calling thread reports progress and
// polls for cancellation; further threads (options.threads) take chunks of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/retrieval/token_index.h"

namespace attnlab::retrieval {

struct Match {
  int64_t image = 0;  // row of the index's first axis
  int64_t token = 0;  // 0 ≤ token < T (row-major grid position for a tokens index)
  float score = 0;    // cosine similarity
};

struct SearchOptions {
  // Skip every token of this image (the query's own image): -1 keeps all.
  int64_t exclude_image = -1;
  // Search only images [images_begin, images_end) (images_end < 0: to the last).
  int64_t images_begin = 0, images_end = -1;
  // Rows (tokens) per chunk: the unit of progress, cancellation and threading.
  int64_t chunk_rows = 16384;
  // Threads scanning chunks, the caller's included: 0 = all cores (at most 16).
  int threads = 0;
  // Called on the calling thread after each chunk it finishes: rows scanned so far (by
  // every thread) and the total.
  std::function<void(int64_t done, int64_t total)> on_progress;
  // Polled on the calling thread between chunks: true stops the search (Cancelled).
  std::function<bool()> cancelled;
};

// Thrown when SearchOptions::cancelled answered true.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("retrieval interrupted") {}
};

// The min(k, candidate rows) best matches, in the order above. std::invalid_argument when
// the query's width is not F, the query is not finite, k < 1, chunk_rows < 1, or the image
// range or exclude_image is outside [0, N).
std::vector<Match> top_k_similar(const TokenIndex& index, const std::vector<float>& query,
                                 int64_t k, const SearchOptions& options = {});

// True when a ranks before b (score descending, then image, then token ascending).
inline bool ranks_before(const Match& a, const Match& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.image != b.image) return a.image < b.image;
  return a.token < b.token;
}

// The cosine of one row with the query, computed exactly as top_k_similar does.
float cosine_of_row(const TokenIndex& index, int64_t row, const std::vector<float>& query);

}  // namespace attnlab::retrieval
