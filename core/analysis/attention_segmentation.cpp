// Attention masks (see attention_segmentation.h): per row one descending sort and a running
// sum of the entries above each tie group, in float64.
#include "core/analysis/attention_segmentation.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

at::Tensor mass_threshold_mask(const at::Tensor& maps, double tau) {
  if (!(tau > 0.0 && tau <= 1.0))
    throw std::invalid_argument("mass threshold mask: tau must be in (0, 1], got " +
                                std::to_string(tau));
  if (!maps.defined() || maps.dim() == 0 || maps.size(-1) == 0)
    throw std::invalid_argument("mass threshold mask: expected maps (..., N) with N >= 1");
  const int64_t n = maps.size(-1);
  const at::Tensor rows = maps.to(at::kCPU, at::kDouble).reshape({-1, n}).contiguous();
  if (!at::isfinite(rows).all().item<bool>())
    throw std::invalid_argument("mass threshold mask: the maps hold NaN or Inf values");
  if ((rows < 0.0).any().item<bool>())
    throw std::invalid_argument("mass threshold mask: the maps hold negative weights");
  at::Tensor keep = at::zeros(rows.sizes(), at::kBool);
  if (rows.size(0) == 0) return keep.reshape(maps.sizes());
  if (tau == 1.0) return (rows > 0.0).reshape(maps.sizes());

  const auto [sorted, order] = at::sort(rows, /*dim=*/1, /*descending=*/true);
  const auto* v = sorted.data_ptr<double>();
  const auto* idx = order.data_ptr<int64_t>();
  auto* out = keep.data_ptr<bool>();
  for (int64_t r = 0; r < rows.size(0); ++r) {
    const double* row = v + r * n;
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += row[k];
    if (!(sum > 0.0)) continue;  // a row of zeros keeps nothing
    // The rounding of the N-term running sums and of tau·sum, (N + 1)·2⁻⁵³·sum at most:
    // a mass within it of tau·sum counts as holding tau.
    const double bound = tau * sum - double(n + 1) * 0x1p-53 * sum;
    double above = 0;        // mass of the entries before k in descending order
    double group_above = 0;  // the same at the first entry of k's tie group
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || row[k] != row[k - 1]) group_above = above;
      // The largest entries have nothing above them: kept for any tau > 0, however small.
      if (row[k] > 0.0 && (group_above == 0.0 || group_above < bound))
        out[r * n + idx[r * n + k]] = true;
      above += row[k];
    }
  }
  return keep.reshape(maps.sizes());
}

double jaccard(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.scalar_type() != at::kBool || b.scalar_type() != at::kBool)
    throw std::invalid_argument("jaccard: expected two bool masks");
  if (!a.sizes().equals(b.sizes()))
    throw std::invalid_argument("jaccard: the masks differ in shape");
  const at::Tensor x = a.cpu(), y = b.cpu();
  const int64_t both = at::logical_and(x, y).sum().item<int64_t>();
  const int64_t either = at::logical_or(x, y).sum().item<int64_t>();
  if (either == 0) return 1.0;  // both empty: they agree there is no object
  return double(both) / double(either);
}

at::Tensor upsample_token_mask(const at::Tensor& mask, int64_t out_h, int64_t out_w) {
  if (!mask.defined() || mask.dim() != 2 || mask.scalar_type() != at::kBool)
    throw std::invalid_argument("upsample token mask: expected an (h, w) bool mask");
  const int64_t h = mask.size(0), w = mask.size(1);
  if (h < 1 || w < 1) throw std::invalid_argument("upsample token mask: the mask is empty");
  if (out_h < 1 || out_w < 1)
    throw std::invalid_argument("upsample token mask: the output size must be >= 1, got " +
                                std::to_string(out_h) + "×" + std::to_string(out_w));
  at::Tensor ys = at::empty({out_h}, at::kLong), xs = at::empty({out_w}, at::kLong);
  auto* py = ys.data_ptr<int64_t>();
  auto* px = xs.data_ptr<int64_t>();
  for (int64_t y = 0; y < out_h; ++y) py[y] = y * h / out_h;
  for (int64_t x = 0; x < out_w; ++x) px[x] = x * w / out_w;
  return mask.cpu().index_select(0, ys).index_select(1, xs);
}

}  // namespace attnlab::analysis
