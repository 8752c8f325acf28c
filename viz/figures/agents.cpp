// The agents figure (declared in agents.h).
#include "viz/figures/agents.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "viz/figures/query_views.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "agent figure";

// values (rows x cols) over the whole picture of `panel` on [0, max], each cell a block
// (the agents' pooled cells, the key grid): overlay.h's map layer.
void add_heat(Panel& panel, const float* values, int rows, int cols, double alpha) {
  OverlayStyle style;
  style.alpha = alpha;
  style.upsample = Upsample::Nearest;
  const size_t n = size_t(rows) * size_t(cols);
  add_map_layer(panel, values, rows, cols, map_range(values, n, MapNormalisation::DivideByMax),
                style);
}

}  // namespace

CaptionedFigure agent_figure(const std::vector<analysis::Array>& image_arrays,
                             const std::string& image_tag, const RgbaImage& image,
                             const AgentFigureOptions& options) {
  std::string tag = image_tag;
  const ViewLayer v = view_layer(image_arrays, "agents", &tag, options.layer, kWho);
  const analysis::Array& maps = v.part("maps", kWho);
  const analysis::Array& weights = v.part("weights", kWho);
  require_axes(maps, {"agent", "y", "x"}, kWho);
  require_axes(weights, {"y", "x", "agent"}, kWho);
  const int agents = int(maps.shape[0]), rows = int(maps.shape[1]), cols = int(maps.shape[2]);
  const int side = int(std::lround(std::sqrt(double(agents))));
  if (side * side != agents || weights.shape[0] != rows || weights.shape[1] != cols ||
      weights.shape[2] != agents)
    throw std::invalid_argument(std::string(kWho) + ": the agents' maps and weights disagree");
  const GridCell q = view_query(options.query, rows, cols);
  const float* w = &weights.data[size_t((q.row * cols + q.col) * agents)];

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  // The query's weights over the agents, on the agents' pooled p x p cells.
  Panel over =
      view_picture(image, "query (" + std::to_string(q.row) + ", " + std::to_string(q.col) +
                              ") over the " + std::to_string(agents) + " agents");
  add_heat(over, w, side, side, 0.6);
  add_token_grid(over, side, side, Color{1, 1, 1, 0.6}, 0.5);
  add_query_marker(over, rows, cols, q.row, q.col);
  f.panels.push_back(over);
  // Its strongest agents, each with where it looks.
  std::vector<int> order(static_cast<size_t>(agents));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  const int top = std::clamp(options.top, 1, agents);
  for (int i = 0; i < top; ++i) {
    const int a = order[size_t(i)];
    Panel p =
        view_picture(image, "agent (" + std::to_string(a / side) + ", " + std::to_string(a % side) +
                                "): weight " + format_number(w[a], 2));
    add_heat(p, &maps.data[size_t(a) * size_t(rows * cols)], rows, cols, 0.65);
    // The agent's own pooled cell, outlined.
    RectOutline cell;
    cell.x0 = (a % side) * p.x.max / side;
    cell.x1 = (a % side + 1) * p.x.max / side;
    cell.y0 = (a / side) * p.y.max / side;
    cell.y1 = (a / side + 1) * p.y.max / side;
    cell.color = Color{1, 1, 1, 1};
    p.items.emplace_back(cell);
    add_query_marker(p, rows, cols, q.row, q.col);
    f.panels.push_back(p);
  }
  f.cols = int(f.panels.size());
  f.height_in = 3.0;
  fit_height_to_images(f);
  return {f, "Agent attention, layer " + std::to_string(v.layer) + " of image \"" + tag +
                 "\" (mean over heads): left, the query's (red square) weights over the " +
                 std::to_string(agents) + " agents, each drawn on its pooled " +
                 std::to_string(side) + "×" + std::to_string(side) +
                 " cell (the agents are the queries average-pooled there); then where the " +
                 std::to_string(top) +
                 " agents it weighs most look (each agent's softmax over the keys, its own "
                 "cell outlined). The query's attention is its weights times these maps, "
                 "summed over the agents. Each panel on its own scale [0, max]."};
}

}  // namespace attnlab::viz
