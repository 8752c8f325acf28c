// Effective receptive field (issue 26; Luo et al., NeurIPS 2016): how far an output token
// actually looks. The map is the contribution of every input pixel to one output token,
//   E(y, x) = Σ_rgb |∂(Σ_c z_t,c) / ∂I_rgb(y, x)|,
// averaged over images (models/erf_run.h computes it by autograd). This file summarises
// such a map around the token's centre (in pixels): its radial profile, and for each
// fraction t the smallest area and the smallest disc that hold t of the total
// contribution. Pure arithmetic on a map; no model.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace attnlab::analysis {

struct ErfArea {
  double fraction = 0;    // t, in (0, 1]
  int64_t pixels = 0;     // fewest pixels (largest contributions first) holding >= t
  double area_share = 0;  // pixels / (H·W)
  double side_px = 0;     // √pixels: the side of a square of that area
  double radius_px = 0;   // the smallest radius r (whole pixels) whose disc around the
                          // centre (distance rounded to the nearest pixel) holds >= t
};

struct ErfSummary {
  double total = 0;  // Σ E
  // By whole-pixel radius r = round(distance to the centre): the mean share of the total
  // per pixel at that radius (0 where no pixel lies), and the share within radius <= r.
  std::vector<double> profile, cumulative;
  std::vector<ErfArea> areas;  // one per fraction, in the order given
};

// map: (H, W), finite and >= 0, not all zero. centre_y/x in pixel coordinates (pixel
// (i, j) has its centre at (i, j)). fractions each in (0, 1]. Throws std::invalid_argument
// otherwise (naming what is wrong).
ErfSummary erf_summary(const at::Tensor& map, double centre_y, double centre_x,
                       const std::vector<double>& fractions);

// The centre in pixels of cell `index` of a grid of `cells` cells over `pixels` pixels:
// (index + 0.5) · pixels / cells − 0.5.
double cell_centre_px(int64_t index, int64_t cells, int64_t pixels);

}  // namespace attnlab::analysis
