// See erf.h.
#include "core/analysis/erf.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

double cell_centre_px(int64_t index, int64_t cells, int64_t pixels) {
  return (double(index) + 0.5) * double(pixels) / double(cells) - 0.5;
}

ErfSummary erf_summary(const at::Tensor& map, double centre_y, double centre_x,
                       const std::vector<double>& fractions) {
  if (map.dim() != 2 || map.numel() == 0)
    throw std::invalid_argument("erf: the map must be a non-empty (H, W) tensor");
  for (const double f : fractions)
    if (!(f > 0 && f <= 1))
      throw std::invalid_argument("erf: fraction " + std::to_string(f) + " is outside (0, 1]");
  const at::Tensor e = map.detach().to(at::kCPU, at::kDouble).contiguous();
  if (!at::isfinite(e).all().item<bool>())
    throw std::invalid_argument("erf: the map holds NaN or infinite values");
  if ((e < 0).any().item<bool>()) throw std::invalid_argument("erf: the map has negative values");
  ErfSummary s;
  s.total = e.sum().item<double>();
  if (!(s.total > 0))
    throw std::invalid_argument("erf: the map is zero everywhere (the token does not depend on "
                                "the input)");
  const int64_t h = e.size(0), w = e.size(1);

  // Radial profile by whole-pixel radius.
  const at::Tensor ys = at::arange(h, e.options()).sub(centre_y).pow(2).unsqueeze(1);
  const at::Tensor xs = at::arange(w, e.options()).sub(centre_x).pow(2).unsqueeze(0);
  const at::Tensor radius = (ys + xs).sqrt().round().to(at::kLong).flatten();
  const int64_t bins = radius.max().item<int64_t>() + 1;
  const at::Tensor flat = e.flatten() / s.total;
  const at::Tensor mass = at::zeros({bins}, e.options()).index_add_(0, radius, flat);
  const at::Tensor count = at::zeros({bins}, e.options()).index_add_(0, radius, at::ones_like(flat));
  const at::Tensor mean = at::where(count > 0, mass / count.clamp_min(1), at::zeros_like(mass));
  const at::Tensor cumulative = mass.cumsum(0);
  s.profile.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + bins);
  s.cumulative.assign(cumulative.data_ptr<double>(), cumulative.data_ptr<double>() + bins);

  // Areas: the largest contributions first.
  const at::Tensor sorted_cum = std::get<0>(flat.sort(0, /*descending=*/true)).cumsum(0);
  for (const double f : fractions) {
    ErfArea a;
    a.fraction = f;
    // Rounding: the cumulative sum of shares reaches 1 only up to ~1e-12.
    const double goal = f - 1e-12;
    a.pixels = std::min<int64_t>(flat.numel(), (sorted_cum < goal).sum().item<int64_t>() + 1);
    a.area_share = double(a.pixels) / double(flat.numel());
    a.side_px = std::sqrt(double(a.pixels));
    a.radius_px = double(std::min<int64_t>(bins - 1, (cumulative < goal).sum().item<int64_t>()));
    s.areas.push_back(a);
  }
  return s;
}

}  // namespace attnlab::analysis
