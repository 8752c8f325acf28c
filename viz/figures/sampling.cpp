// The sampling figure (declared in sampling.h).
#include "viz/figures/sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/colormap.h"
#include "viz/figures/query_views.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "sampling figure";

}  // namespace

CaptionedFigure sampling_figure(const std::vector<analysis::Array>& image_arrays,
                                const std::string& image_tag, const RgbaImage& image,
                                const SamplingFigureOptions& options) {
  std::string tag = image_tag;
  const ViewLayer v = view_layer(image_arrays, "sampling", &tag, options.layer, kWho);
  const analysis::Array& points = v.part("points", kWho);
  const analysis::Array& weights = v.part("weights", kWho);
  require_axes(points, {"group", "sample", "coord"}, kWho);
  require_axes(weights, {"group", "y", "x", "sample"}, kWho);
  const int groups = int(points.shape[0]), samples = int(points.shape[1]);
  const int rows = int(weights.shape[1]), cols = int(weights.shape[2]);
  if (points.shape[2] != 4 || weights.shape[0] != groups || weights.shape[3] != samples)
    throw std::invalid_argument(std::string(kWho) + ": the points and weights disagree");
  const GridCell q = view_query(options.query, rows, cols);

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  double top = 0;
  for (int g = 0; g < groups; ++g) {
    const float* w = &weights.data[size_t(((g * rows + q.row) * cols + q.col) * samples)];
    const float most = std::max(1e-12f, *std::max_element(w, w + samples));
    top = std::max(top, double(most));
    Panel p = view_picture(
        image, groups > 1 ? "group " + std::to_string(g)
                          : "query (" + std::to_string(q.row) + ", " + std::to_string(q.col) + ")");
    add_token_grid(p, rows, cols, Color{1, 1, 1, 0.2}, 0.3);
    // Lightest first, so the heavy samples are drawn on top.
    std::vector<int> order(static_cast<size_t>(samples));
    for (int s = 0; s < samples; ++s) order[size_t(s)] = s;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return w[a] < w[b]; });
    for (int s : order) {
      const float* c = &points.data[size_t((g * samples + s) * 4)];
      const auto [rx, ry] = cell_centre(p, rows, cols, c[0], c[1]);
      const auto [px, py] = cell_centre(p, rows, cols, c[2], c[3]);
      LineSeries arrow;
      arrow.x = {rx, px};
      arrow.y = {ry, py};
      arrow.color = Color{1, 1, 1, 0.75};
      arrow.width_pt = 0.5;
      p.items.emplace_back(arrow);
      Marker origin;
      origin.x = rx;
      origin.y = ry;
      origin.shape = Marker::Shape::Cross;
      origin.color = Color{1, 1, 1, 0.6};
      origin.outline = Color{0, 0, 0, 0};
      origin.size_pt = 2;
      p.items.emplace_back(origin);
      const float t = w[s] / most;
      const Rgba8 rgb = colormap_at(Colormap::Viridis, t);
      Marker dot;
      dot.x = px;
      dot.y = py;
      dot.shape = Marker::Shape::Circle;
      dot.color = Color{rgb.r / 255.0, rgb.g / 255.0, rgb.b / 255.0, 1};
      dot.outline = kBlack;
      dot.size_pt = 2.0 + 5.0 * std::sqrt(double(t));
      p.items.emplace_back(dot);
    }
    add_query_marker(p, rows, cols, q.row, q.col);
    f.panels.push_back(p);
  }
  f.cols = std::min(groups, 4);
  f.height_in = 3.0;
  f.colorbar = ColorbarSpec{Colormap::Viridis, 0, 1, "weight / its max"};
  fit_height_to_images(f);
  return {f, "DAT's deformable attention, layer " + std::to_string(v.layer) + " of image \"" + tag +
                 "\": each line runs from a reference point (cross) to where the offset "
                 "network moved it, the dot where the key and value were sampled (bilinearly) "
                 "from the picture's tokens; dots sized and coloured by the query's (red "
                 "square) weight on the sample, mean over the group's heads, relative to its "
                 "largest (" +
                 format_number(top, 2) + ")."};
}

}  // namespace attnlab::viz
