// Feature PCA to RGB (see feature_pca.h): two float64 eigendecompositions of C×C
// covariances (pooled over every fitted token, then over the foreground ones); every
// image, fitted or not, is coloured by one function from the basis alone, so a fit's own
// images and apply_feature_pca on them are the same computation.
#include "core/analysis/feature_pca.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace attnlab::analysis {
namespace {

// A grid as (H·W, C) float64 on the CPU, checked. c < 0: any C (> 0).
at::Tensor fpca_tokens(const at::Tensor& grid, int64_t c, const std::string& what) {
  if (!grid.defined() || grid.dim() != 3)
    throw std::invalid_argument("feature PCA: " + what + " must be an (H, W, C) token grid");
  if (grid.size(0) == 0 || grid.size(1) == 0 || grid.size(2) == 0)
    throw std::invalid_argument("feature PCA: " + what + " has no tokens or no channels");
  if (c >= 0 && grid.size(2) != c)
    throw std::invalid_argument("feature PCA: " + what + " has " + std::to_string(grid.size(2)) +
                                " channels, expected " + std::to_string(c));
  at::Tensor x = grid.to(at::kCPU, at::kDouble).reshape({-1, grid.size(2)}).contiguous();
  if (!at::isfinite(x).all().item<bool>())
    throw std::invalid_argument("feature PCA: " + what + " holds NaN or Inf values");
  return x;
}

// The deterministic sign: the loading of largest |value| positive; among loadings within a
// relative 1e-9 of it (ties up to eigh's rounding, ~1e-15 here), the lowest index decides.
at::Tensor fpca_signed(const at::Tensor& v) {
  const at::Tensor a = v.abs();
  const double largest = a.max().item<double>();
  const auto* p = a.data_ptr<double>();
  int64_t pick = 0;
  while (p[pick] < largest * (1.0 - 1e-9)) ++pick;
  return v[pick].item<double>() < 0.0 ? -v : v.clone();
}

// (p − lo) / (hi − lo) clamped to [0, 1]; 0 when hi == lo.
at::Tensor fpca_scaled(const at::Tensor& p, double lo, double hi) {
  if (!(hi > lo)) return at::zeros_like(p);
  return ((p - lo) / (hi - lo)).clamp(0.0, 1.0);
}

// Population covariance (C×C) of the rows of x about `mean`.
at::Tensor fpca_covariance(const at::Tensor& x, const at::Tensor& mean) {
  const at::Tensor centred = x - mean;
  return at::matmul(centred.t(), centred) / double(x.size(0));
}

// The oriented first component's projection of each token (N,).
at::Tensor fpca_first_projection(const FeaturePcaBasis& b, const at::Tensor& x) {
  return at::matmul(x - b.fg_mean, b.fg_direction);
}

// The three colour projections of each token (N, 3).
at::Tensor fpca_colour_projection(const FeaturePcaBasis& b, const at::Tensor& x) {
  return at::matmul(x - b.mean, b.components.t());
}

// The scaled first component and the mask of each token, from the basis's step (a).
std::pair<at::Tensor, at::Tensor> fpca_mask(const FeaturePcaBasis& b, const at::Tensor& x) {
  at::Tensor first = fpca_scaled(fpca_first_projection(b, x), b.fg_min, b.fg_max);
  at::Tensor mask =
      b.options.foreground ? first > b.options.threshold : at::ones({x.size(0)}, at::kBool);
  return {first, mask};
}

FeaturePcaImage fpca_colour(const FeaturePcaBasis& b, const at::Tensor& x, int64_t h, int64_t w) {
  auto [first, mask] = fpca_mask(b, x);
  const at::Tensor proj = fpca_colour_projection(b, x);
  at::Tensor rgb = at::zeros({x.size(0), 3}, at::kDouble);
  const auto* lo = b.component_min.data_ptr<double>();
  const auto* hi = b.component_max.data_ptr<double>();
  for (int64_t k = 0; k < 3; ++k)
    rgb.select(1, k).copy_(fpca_scaled(proj.select(1, k), lo[k], hi[k]));
  rgb.masked_fill_(mask.logical_not().unsqueeze(1), 0.0);
  return {rgb.reshape({h, w, 3}), mask.reshape({h, w}), first.reshape({h, w})};
}

}  // namespace

FeaturePcaFit fit_feature_pca(const std::vector<at::Tensor>& grids,
                              const FeaturePcaOptions& options) {
  if (!(options.threshold >= 0.0 && options.threshold <= 1.0))
    throw std::invalid_argument("feature PCA: the threshold must be in [0, 1], got " +
                                std::to_string(options.threshold));
  if (grids.empty()) throw std::invalid_argument("feature PCA: no token grids");
  std::vector<at::Tensor> flat;
  int64_t c = -1;
  for (size_t i = 0; i < grids.size(); ++i) {
    flat.push_back(fpca_tokens(grids[i], c, "grid " + std::to_string(i)));
    c = flat.back().size(1);
  }
  FeaturePcaFit fit;
  FeaturePcaBasis& b = fit.basis;
  b.options = options;

  // (a) One component over all tokens, its deterministic sign, then the border rule.
  const at::Tensor all = at::cat(flat, 0);
  b.fg_mean = all.mean(0);
  const at::Tensor first_vecs = std::get<1>(at::linalg_eigh(fpca_covariance(all, b.fg_mean)));
  b.fg_direction = fpca_signed(first_vecs.select(1, c - 1));
  std::vector<at::Tensor> proj;
  for (const auto& x : flat) proj.push_back(fpca_first_projection(b, x));
  const at::Tensor pooled = at::cat(proj, 0);
  b.fg_min = pooled.min().item<double>();
  b.fg_max = pooled.max().item<double>();
  double border_sum = 0, interior_sum = 0;
  int64_t border_count = 0, interior_count = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    const int64_t h = grids[i].size(0), w = grids[i].size(1);
    const at::Tensor s = fpca_scaled(proj[i], b.fg_min, b.fg_max).reshape({h, w});
    double inner = 0;
    if (h > 2 && w > 2) {
      inner = s.slice(0, 1, h - 1).slice(1, 1, w - 1).sum().item<double>();
      interior_count += (h - 2) * (w - 2);
    }
    interior_sum += inner;
    border_sum += s.sum().item<double>() - inner;
    border_count += h * w - (h > 2 && w > 2 ? (h - 2) * (w - 2) : 0);
  }
  if (interior_count > 0 &&
      border_sum / double(border_count) > interior_sum / double(interior_count)) {
    b.fg_direction = -b.fg_direction;
    std::swap(b.fg_min, b.fg_max);
    b.fg_min = -b.fg_min;
    b.fg_max = -b.fg_max;
    b.fg_flipped = true;
  }

  // (b) Three components over the foreground tokens.
  std::vector<at::Tensor> masks, fg_tokens;
  for (const auto& x : flat) {
    masks.push_back(fpca_mask(b, x).second);
    fg_tokens.push_back(x.index({masks.back()}));
  }
  const at::Tensor fg = at::cat(fg_tokens, 0);
  if (fg.size(0) == 0)
    throw std::invalid_argument(
        "feature PCA: no foreground token: no scaled first component is above the threshold " +
        std::to_string(options.threshold) + "; try a lower threshold (or foreground = false)");
  b.mean = fg.mean(0);
  const at::Tensor cov = fpca_covariance(fg, b.mean);
  const double total = cov.diagonal().sum().item<double>();
  auto [values, vectors] = at::linalg_eigh(cov);
  const double largest = values[c - 1].item<double>();
  b.components = at::zeros({3, c}, at::kDouble);
  b.explained = at::zeros({3}, at::kDouble);
  for (int64_t k = 0; k < 3 && k < c; ++k) {
    const double value = values[c - 1 - k].item<double>();
    // At most 1e-10·λ_max: rounding, or too weak to colour (see feature_pca.h).
    if (!(largest > 0.0) || !(value > largest * 1e-10)) break;
    b.components[k].copy_(fpca_signed(vectors.select(1, c - 1 - k)));
    b.explained[k] = total > 0.0 ? value / total : 0.0;
  }
  const at::Tensor fg_proj = fpca_colour_projection(b, fg);
  b.component_min = std::get<0>(fg_proj.min(0));
  b.component_max = std::get<0>(fg_proj.max(0));

  for (size_t i = 0; i < flat.size(); ++i)
    fit.images.push_back(fpca_colour(b, flat[i], grids[i].size(0), grids[i].size(1)));
  return fit;
}

FeaturePcaImage apply_feature_pca(const FeaturePcaBasis& basis, const at::Tensor& grid) {
  if (!basis.components.defined() || !basis.fg_direction.defined())
    throw std::invalid_argument("feature PCA: the basis is not fitted");
  const at::Tensor x = fpca_tokens(grid, basis.mean.size(0), "the grid");
  return fpca_colour(basis, x, grid.size(0), grid.size(1));
}

}  // namespace attnlab::analysis
