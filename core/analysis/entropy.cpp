// Attention entropy (see entropy.h): rows from the trace a chunk of queries at a time, in
// float64, summed per head and divided by the number of queries.
#include "core/analysis/entropy.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

at::Tensor row_entropy(const at::Tensor& rows, bool* signed_rows) {
  const at::Tensor r = rows.to(at::kDouble);
  if (signed_rows && (r < 0).any().item<bool>()) *signed_rows = true;
  const at::Tensor a = r.abs();
  const at::Tensor total = a.sum(-1, /*keepdim=*/true);
  // A row of zeros has no distribution: its entropy is taken as 0 (never NaN).
  const at::Tensor p = a / total.clamp_min(std::numeric_limits<double>::min());
  return -at::xlogy(p, p).sum(-1);
}

AttentionEntropy attention_entropy(const attention::AttentionTrace& trace, int64_t b,
                                   int64_t chunk_rows) {
  if (chunk_rows < 1)
    throw std::invalid_argument("attention_entropy: chunk_rows must be >= 1, got " +
                                std::to_string(chunk_rows));
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("attention entropy: image " + std::to_string(b) +
                                     " of a batch of " + std::to_string(trace.batch));
  const int64_t n = trace.layout.tokens();
  AttentionEntropy out;
  out.entropy = at::zeros({trace.heads}, at::kDouble);
  out.normalised = at::zeros({trace.heads}, at::kDouble);
  out.support = at::zeros({trace.heads}, at::kDouble);
  for (int64_t h = 0; h < trace.heads; ++h) {
    const int64_t keys = trace.group_of(h).keys.size();
    out.keys.push_back(keys);
    double entropy = 0.0, support = 0.0;
    for (int64_t q0 = 0; q0 < n; q0 += chunk_rows) {
      const at::Tensor queries = at::arange(q0, std::min(n, q0 + chunk_rows), at::kLong);
      const at::Tensor hs = row_entropy(trace.rows(b, h, queries), &out.signed_rows);
      entropy += hs.sum().item<double>();
      support += hs.exp().sum().item<double>();
    }
    out.entropy[h] = entropy / double(n);
    out.support[h] = support / double(n);
    out.normalised[h] = keys > 1 ? entropy / double(n) / std::log(double(keys)) : 0.0;
  }
  return out;
}

}  // namespace attnlab::analysis
