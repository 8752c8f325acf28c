// The routing figure (declared in routing.h).
#include "viz/figures/routing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figures/query_views.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "routing figure";

// A region's rectangle over the panel: the tokens of the grid whose label is `region`.
struct RegionBox {
  double x0, y0, x1, y1;
};

RegionBox region_box(const Panel& p, const analysis::Array& labels, int region) {
  const int rows = int(labels.shape[0]), cols = int(labels.shape[1]);
  int r0 = rows, r1 = -1, c0 = cols, c1 = -1;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (std::lround(labels.data[size_t(r * cols + c)]) == region) {
        r0 = std::min(r0, r), r1 = std::max(r1, r);
        c0 = std::min(c0, c), c1 = std::max(c1, c);
      }
  if (r1 < 0) return {0, 0, 0, 0};  // a region wholly in the padding
  return {c0 * p.x.max / cols, r0 * p.y.max / rows, (c1 + 1) * p.x.max / cols,
          (r1 + 1) * p.y.max / rows};
}

}  // namespace

CaptionedFigure routing_figure(const std::vector<analysis::Array>& image_arrays,
                               const std::string& image_tag, const RgbaImage& image,
                               const RoutingFigureOptions& options) {
  std::string tag = image_tag;
  const ViewLayer v = view_layer(image_arrays, "routing", &tag, options.layer, kWho);
  const analysis::Array& labels = v.part("region", kWho);
  const analysis::Array& route = v.part("route", kWho);
  require_axes(labels, {"y", "x"}, kWho);
  require_axes(route, {"region", "rank"}, kWho);
  const int rows = int(labels.shape[0]), cols = int(labels.shape[1]);
  const int regions = int(route.shape[0]), k = int(route.shape[1]);
  const int side = int(std::lround(std::sqrt(double(regions))));
  const GridCell q = view_query(options.query, rows, cols);
  const int own = int(std::lround(labels.data[size_t(q.row * cols + q.col)]));
  if (own < 0 || own >= regions)
    throw std::invalid_argument(std::string(kWho) + ": the query's region " + std::to_string(own) +
                                " is not one of " + std::to_string(regions));

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  Panel p = view_picture(image, "query (" + std::to_string(q.row) + ", " + std::to_string(q.col) +
                                    "): its region's " + std::to_string(k) + " routed regions");
  // The routed regions tinted (strongest most), numbered in routing order.
  HeatmapLayer tint;
  tint.rows = rows;
  tint.cols = cols;
  tint.values.assign(size_t(rows * cols), std::nanf(""));
  tint.cmap = Colormap::Viridis;
  tint.vmin = 0;
  tint.vmax = 1;
  tint.alpha = 0.55;
  tint.x1 = p.x.max;
  tint.y1 = p.y.max;
  for (int rank = 0; rank < k; ++rank) {
    const int r = int(std::lround(route.data[size_t(own * k + rank)]));
    for (size_t i = 0; i < tint.values.size(); ++i)
      if (std::lround(labels.data[i]) == r)
        tint.values[i] = float(1.0 - 0.6 * rank / std::max(k - 1, 1));
  }
  p.items.emplace_back(std::move(tint));
  add_token_grid(p, side, side, Color{1, 1, 1, 0.7}, 0.6);
  for (int rank = 0; rank < k; ++rank) {
    const RegionBox b = region_box(p, labels, int(std::lround(route.data[size_t(own * k + rank)])));
    if (b.x1 <= b.x0) continue;
    TextLabel t;
    t.x = (b.x0 + b.x1) / 2;
    t.y = (b.y0 + b.y1) / 2;
    t.text = std::to_string(rank + 1);
    t.color = kWhite;
    p.items.emplace_back(t);
  }
  const RegionBox mine = region_box(p, labels, own);
  RectOutline outline{mine.x0, mine.y0, mine.x1, mine.y1, Color{1.0, 0.15, 0.15, 1}, 1.6};
  p.items.emplace_back(outline);
  add_query_marker(p, rows, cols, q.row, q.col);
  f.panels.push_back(p);
  // How many regions route to each region.
  std::vector<float> routed_to(size_t(regions), 0.0f);
  for (float r : route.data) {
    const long i = std::lround(r);
    if (i >= 0 && i < regions) routed_to[size_t(i)] += 1;
  }
  Panel in = view_picture(image, "regions routing to each region");
  HeatmapLayer counts;
  counts.rows = rows;
  counts.cols = cols;
  counts.cmap = Colormap::Magma;
  float most = 1;
  for (float c : routed_to) most = std::max(most, c);
  for (float l : labels.data) {
    const long i = std::lround(l);
    counts.values.push_back(i >= 0 && i < regions ? routed_to[size_t(i)] : std::nanf(""));
  }
  counts.vmin = 0;
  counts.vmax = most;
  counts.alpha = 0.6;
  counts.x1 = in.x.max;
  counts.y1 = in.y.max;
  in.items.emplace_back(std::move(counts));
  add_token_grid(in, side, side, Color{1, 1, 1, 0.5}, 0.5);
  in.colorbar = ColorbarSpec{Colormap::Magma, 0, most, "regions routing here"};
  f.panels.push_back(in);
  f.cols = 2;
  f.height_in = 3.0;
  fit_height_to_images(f);
  return {f, "BiFormer's bi-level routing, layer " + std::to_string(v.layer) + " of image \"" +
                 tag +
                 "\": left, the query (red square) lies in the region outlined in red; "
                 "its queries attend only to the tokens of the " +
                 std::to_string(k) +
                 " regions numbered in routing order (1: the largest routing logit, tinted "
                 "most) among the " +
                 std::to_string(side) + "×" + std::to_string(side) +
                 " regions; right, how many regions route to each region."};
}

}  // namespace attnlab::viz
