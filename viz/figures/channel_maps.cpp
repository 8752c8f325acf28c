// The channel-map figure: a layers × heads grid of d×d heat maps.
#include "viz/figures/channel_maps.h"

#include "core/analysis/result_key.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace {

const char* kWho = "channel map figure";

}  // namespace

CaptionedFigure channel_map_figure(const std::vector<analysis::Array>& image_arrays,
                                   const std::string& image_tag,
                                   const ChannelMapFigureOptions& options) {
  std::string tag = image_tag;
  std::vector<std::pair<int64_t, const analysis::Array*>> maps;  // by layer
  for (const auto& a : image_arrays) {
    const auto key = analysis::parse_result_key(a.name);  // channel_maps__<image>__L<ll>__map
    if (!key || key->analysis != "channel_maps" || key->part != "map") continue;
    if (tag.empty()) tag = key->image;
    if (key->image != tag) continue;
    const auto& want = options.layers;
    if (!want.empty() && std::find(want.begin(), want.end(), key->layer) == want.end()) continue;
    require_axes(a, {"head", "out_channel", "in_channel"}, kWho);
    if (a.shape[1] != a.shape[2] || a.shape[0] < 1 || a.shape[1] < 1)
      throw std::invalid_argument(std::string(kWho) + ": \"" + a.name +
                                  "\" is not a stack of square maps");
    maps.emplace_back(key->layer, &a);
  }
  for (int64_t want : options.layers)
    if (std::none_of(maps.begin(), maps.end(), [&](const auto& m) { return m.first == want; }))
      throw std::invalid_argument(std::string(kWho) + ": no array \"channel_maps__" +
                                  (tag.empty() ? "<image>" : tag) + "__" + layer_tag(want) +
                                  "__map\"");
  if (maps.empty())
    throw std::invalid_argument(std::string(kWho) + ": no array \"channel_maps__" +
                                (tag.empty() ? "<image>" : tag) + "__L<ll>__map\"");
  std::sort(maps.begin(), maps.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });

  // One colour scale for every map: 0 (no weight) to the largest weight shown.
  int64_t heads = 0;
  double top = 0;
  for (const auto& [layer, a] : maps) {
    heads = std::max(heads, a->shape[0]);
    for (float v : a->data)
      if (std::isfinite(v)) top = std::max(top, double(v));
  }
  if (!(top > 0)) top = 1;

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = int(heads);
  for (int64_t h = 0; h < heads; ++h) f.col_labels.push_back("head " + std::to_string(h));
  std::string dims;
  for (const auto& [layer, a] : maps) {
    const int64_t n = a->shape[0], d = a->shape[1];
    f.row_labels.push_back("layer " + std::to_string(layer));
    if (dims.find("d = " + std::to_string(d)) == std::string::npos)
      dims += std::string(dims.empty() ? "" : ", ") + "d = " + std::to_string(d) +
              " (uniform 1/d = " + format_number(1.0 / double(d)) + ")";
    for (int64_t h = 0; h < heads; ++h) {
      Panel p;
      p.image = true;
      p.x.show = p.y.show = false;
      p.x.max = double(d);
      p.y.max = double(d);
      if (h < n) {  // a layer with fewer heads leaves its last cells empty
        HeatmapLayer heat;
        heat.rows = heat.cols = int(d);
        heat.values.assign(a->data.begin() + h * d * d, a->data.begin() + (h + 1) * d * d);
        heat.cmap = options.cmap;
        heat.vmin = 0;
        heat.vmax = top;
        heat.x1 = heat.y1 = double(d);
        p.items.emplace_back(std::move(heat));
      }
      f.panels.push_back(std::move(p));
    }
  }
  f.colorbar = ColorbarSpec{options.cmap, 0, top, "weight"};
  f.height_in = 1.3 * double(maps.size()) + 0.6;
  f.height_in = fitted_height_in(f);
  const std::string caption =
      "Channel-to-channel attention of image \"" + tag +
      "\": per layer (rows) and head (columns) the map A that mixes every token's value over "
      "its channels (row c: the weights output channel c gives to the value's channels; XCA: "
      "softmax of the cross-covariance q̂ᵀk̂·τ over the tokens; the token-to-token mixing "
      "is the identity), " +
      dims + "; one colour scale (" + colormap_name(options.cmap) + ", 0 to the largest weight " +
      format_number(top) + ") for all maps.";
  return {f, caption};
}

}  // namespace attnlab::viz
