// head_sharpness: row entropies a chunk of queries at a time (memory O(chunk·K)), in
// float64, normalised by ln K per head.
#include "core/analysis/head_sharpness.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/analysis/entropy.h"

namespace attnlab::analysis {

HeadSharpness head_sharpness(const attention::AttentionTrace& trace, int64_t b,
                             int64_t chunk_rows) {
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("head sharpness: image " + std::to_string(b) +
                                     " of a batch of " + std::to_string(trace.batch));
  if (chunk_rows < 1) throw std::invalid_argument("head sharpness: chunk_rows must be >= 1");
  const int64_t n = trace.layout.tokens(), p = trace.layout.num_prefix();
  if (trace.layout.grid_tokens() < 1)
    throw std::invalid_argument("head sharpness: the layer has no grid tokens (" +
                                trace.layout.describe() + ")");
  HeadSharpness out;
  out.mean = at::zeros({trace.heads}, at::kDouble);
  out.sharpest_query = at::full({trace.heads}, -1, at::kLong);
  out.sharpest_value = at::zeros({trace.heads}, at::kDouble);
  for (int64_t h = 0; h < trace.heads; ++h) {
    const int64_t keys = trace.group_of(h).keys.size();
    const double scale = keys > 1 ? 1.0 / std::log(double(keys)) : 0.0;
    double sum = 0.0, best = std::numeric_limits<double>::infinity();
    int64_t best_query = -1;
    for (int64_t q0 = 0; q0 < n; q0 += chunk_rows) {
      const int64_t q1 = std::min(n, q0 + chunk_rows);
      const at::Tensor hs = row_entropy(trace.rows(b, h, at::arange(q0, q1, at::kLong))) * scale;
      sum += hs.sum().item<double>();
      const at::Tensor row_values = hs.contiguous();
      const auto* v = row_values.data_ptr<double>();
      for (int64_t q = std::max(q0, p); q < q1; ++q)
        if (v[q - q0] < best) best = v[q - q0], best_query = q - p;
    }
    out.mean[h] = sum / double(n);
    out.sharpest_query[h] = best_query;
    out.sharpest_value[h] = best_query >= 0 ? best : 0.0;
  }
  return out;
}

}  // namespace attnlab::analysis
