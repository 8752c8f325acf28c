// Linear CKA (see cka.h): Grams with zero diagonals, then each pair's HSIC_1 from three
// reductions (Σ K̃⊙L̃, the sums, and the row sums' dot product): O(L²·n²) after the Grams.
#include "core/analysis/cka.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {
namespace {

struct CenteredGram {
  at::Tensor k;         // n×n with a zero diagonal
  at::Tensor row_sums;  // K̃·1
  double sum = 0;       // 1ᵀK̃1
};

CenteredGram zero_diagonal(const at::Tensor& gram) {
  CenteredGram g;
  g.k = gram.to(at::kCPU, at::kDouble).clone();
  g.k.fill_diagonal_(0.0);
  g.row_sums = g.k.sum(1);
  g.sum = g.row_sums.sum().item<double>();
  return g;
}

double hsic_of(const CenteredGram& a, const CenteredGram& b, int64_t n) {
  const double nd = double(n);
  const double trace = (a.k * b.k).sum().item<double>();  // tr(K̃L̃), both symmetric
  const double cross = at::dot(a.row_sums, b.row_sums).item<double>();
  return (trace + a.sum * b.sum / ((nd - 1) * (nd - 2)) - 2.0 / (nd - 2) * cross) /
         (nd * (nd - 3));
}

}  // namespace

double hsic_unbiased(const at::Tensor& k, const at::Tensor& l) {
  if (k.dim() != 2 || k.size(0) != k.size(1) || !k.sizes().equals(l.sizes()))
    throw std::invalid_argument("hsic_unbiased: expected two n×n Grams of one size");
  if (k.size(0) < 4)
    throw std::invalid_argument("hsic_unbiased: needs n >= 4 examples, got " +
                                std::to_string(k.size(0)));
  return hsic_of(zero_diagonal(k), zero_diagonal(l), k.size(0));
}

at::Tensor hsic_matrix(const std::vector<at::Tensor>& features) {
  if (features.empty()) throw std::invalid_argument("hsic_matrix: no features");
  const int64_t n = features[0].size(0);
  if (n < 4)
    throw std::invalid_argument("hsic_matrix: needs n >= 4 examples, got " + std::to_string(n));
  std::vector<CenteredGram> grams;
  for (const auto& x : features) {
    if (x.dim() != 2 || x.size(0) != n)
      throw std::invalid_argument("hsic_matrix: every layer needs (" + std::to_string(n) +
                                  ", C) features");
    const at::Tensor xd = x.to(at::kCPU, at::kDouble);
    if (!at::isfinite(xd).all().item<bool>())
      throw std::invalid_argument("hsic_matrix: the features hold NaN or Inf values");
    // Centred over the examples (HSIC_1 does not change: it is translation invariant for
    // the linear kernel), and a layer that is constant up to rounding set to exactly 0, so
    // that its HSIC is 0 and its CKA NaN rather than a ratio of rounding errors.
    at::Tensor centred = xd - xd.mean(0, /*keepdim=*/true);
    const double scale = xd.abs().max().item<double>();
    if (centred.abs().max().item<double>() <= 1e-12 * scale) centred.zero_();
    grams.push_back(zero_diagonal(at::matmul(centred, centred.t())));
  }
  const int64_t layers = int64_t(grams.size());
  at::Tensor h = at::empty({layers, layers}, at::kDouble);
  for (int64_t a = 0; a < layers; ++a)
    for (int64_t b = a; b < layers; ++b) {
      const double v = hsic_of(grams[size_t(a)], grams[size_t(b)], n);
      h[a][b] = v;
      h[b][a] = v;
    }
  return h;
}

at::Tensor cka_from_hsic(const at::Tensor& hsic) {
  const at::Tensor h = hsic.to(at::kCPU, at::kDouble);
  const at::Tensor d = h.diagonal();
  const at::Tensor scale = at::sqrt(at::outer(d, d));
  const at::Tensor valid = at::outer(d > 0, d > 0);
  return at::where(valid, h / scale, at::full_like(h, std::numeric_limits<double>::quiet_NaN()));
}

std::vector<at::Tensor> common_grid_features(const std::vector<at::Tensor>& tokens,
                                             const std::vector<attention::TokenLayout>& layouts) {
  if (tokens.size() != layouts.size() || tokens.empty())
    throw std::invalid_argument("common_grid_features: one layout per layer's tokens");
  size_t coarsest = 0;
  for (size_t i = 0; i < layouts.size(); ++i) {
    if (tokens[i].dim() != 2 || tokens[i].size(0) != layouts[i].tokens())
      throw std::invalid_argument("common_grid_features: layer " + std::to_string(i) +
                                  " holds no (" + std::to_string(layouts[i].tokens()) +
                                  ", C) tokens");
    if (layouts[i].height * layouts[i].width <
        layouts[coarsest].height * layouts[coarsest].width)
      coarsest = i;
  }
  const int64_t h = layouts[coarsest].height, w = layouts[coarsest].width;
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& l = layouts[i];
    const at::Tensor grid = tokens[i].to(at::kCPU, at::kDouble).slice(0, l.num_prefix());
    if (l.height == h && l.width == w) {
      out.push_back(grid);
      continue;
    }
    const at::Tensor image = grid.t().reshape({1, grid.size(1), l.height, l.width});
    out.push_back(at::adaptive_avg_pool2d(image, {h, w}).reshape({grid.size(1), h * w}).t());
  }
  return out;
}

}  // namespace attnlab::analysis
