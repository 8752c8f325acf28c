// Outlier tokens (see outliers.h): norms and thresholds in float64, the received
// attention from one product Aᵀ·1 per head.
#include "core/analysis/outliers.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

at::Tensor received_attention(const attention::AttentionTrace& trace, int64_t b) {
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("received attention: image " + std::to_string(b) +
                                     " of a batch of " + std::to_string(trace.batch));
  const int64_t n = trace.layout.tokens();
  at::Tensor received = at::empty({trace.heads, n}, at::kDouble);
  for (int64_t h = 0; h < trace.heads; ++h) {
    const at::Tensor ones = at::ones({n}, trace.group_of(h).q.options());
    received[h].copy_(trace.apply_transposed(b, h, ones).to(at::kCPU, at::kDouble) / double(n));
  }
  return received;
}

LayerOutliers outlier_tokens(const at::Tensor& tokens, const attention::AttentionTrace& trace,
                             int64_t b, double factor) {
  if (!(factor > 0.0) || !std::isfinite(factor))
    throw std::invalid_argument("outlier tokens: the factor must be > 0, got " +
                                std::to_string(factor));
  const int64_t n = trace.layout.tokens();
  if (tokens.dim() != 2 || tokens.size(0) != n)
    throw std::invalid_argument("outlier tokens: expected (" + std::to_string(n) +
                                ", C) tokens for " + trace.layout.describe());
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("outlier tokens: image " + std::to_string(b) +
                                     " of a batch of " + std::to_string(trace.batch));
  LayerOutliers out;
  out.norms = tokens.to(at::kCPU, at::kDouble).norm(2, 1);
  if (!at::isfinite(out.norms).all().item<bool>())
    throw std::invalid_argument("outlier tokens: the block output holds NaN or Inf values");
  // The lower median for an even count, as torch.median.
  out.median = out.norms.median().item<double>();
  out.max = out.norms.max().item<double>();
  out.threshold = factor * out.median;
  const auto* norm = out.norms.data_ptr<double>();
  for (int64_t j = 0; j < n; ++j)
    if (norm[j] > out.threshold) {
      out.outliers.push_back(j);
      out.grid_outliers += !trace.layout.is_prefix(j);
    }
  out.outlier_share = double(out.outliers.size()) / double(n);

  out.received = received_attention(trace, b);
  const int64_t prefix = trace.layout.num_prefix();
  const std::vector<int64_t> registers = trace.layout.register_tokens();
  for (int64_t h = 0; h < trace.heads; ++h) {
    const auto* p = out.received[h].data_ptr<double>();
    for (int64_t j : out.outliers) out.outlier_mass += p[j];
    for (int64_t j = 0; j < prefix; ++j) out.prefix_mass += p[j];
    for (int64_t j : registers) out.register_mass += p[j];
  }
  out.register_mass /= double(trace.heads);
  out.outlier_mass /= double(trace.heads);
  out.prefix_mass /= double(trace.heads);
  return out;
}

}  // namespace attnlab::analysis
