// maps's figures (see maps.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/attention_maps.h"
#include "viz/figures/model_compare.h"

namespace attnlab::session {
namespace {

using KeyedArray = std::pair<analysis::ResultKey, const analysis::Array*>;

// The maps of one image of one model: the query's per-head maps by layer, the prefix
// tokens' own rows, and the last layer's head fusion.
struct ImageMaps {
  std::vector<KeyedArray> query_heads;  // layer order
  std::vector<KeyedArray> prefix_heads;
  std::optional<KeyedArray> last_fused;
};

ImageMaps image_maps(const ModelResults& m, const std::string& image) {
  ImageMaps out;
  for (const auto& [key, a] : m.arrays_of("maps", image)) {
    // Query maps come with a head fusion ("fused"); a prefix token's own row does not.
    analysis::ResultKey fused = key;
    fused.part = "fused";
    if (key.part == "heads" && m.array(fused))
      out.query_heads.emplace_back(key, a);
    else if (key.part == "heads")
      out.prefix_heads.emplace_back(key, a);
    else if (key.part == "fused" && (!out.last_fused || out.last_fused->first.layer <= key.layer))
      out.last_fused = KeyedArray(key, a);
  }
  const auto by_layer = [](const KeyedArray& x, const KeyedArray& y) {
    return x.first.layer < y.first.layer;
  };
  std::stable_sort(out.query_heads.begin(), out.query_heads.end(), by_layer);
  return out;
}

// The entry of `layer` among a model's query maps (layer order), or nullptr.
const KeyedArray* find_layer(const std::vector<KeyedArray>& maps, int64_t layer) {
  for (const auto& k : maps)
    if (k.first.layer == layer) return &k;
  return nullptr;
}

void model_figures(std::vector<FigureJob>& jobs, const ModelResults& m, const FigureOptions& o) {
  for (const auto& im : m.images) {
    const ImageMaps maps = image_maps(m, im.tag);
    const std::string suffix = "__" + m.name + "__" + im.tag;
    const viz::RgbaImage* picture = &im.picture;
    int ref_rows = 0, ref_cols = 0;
    if (!maps.query_heads.empty()) {
      const auto& first = *maps.query_heads.front().second;
      ref_rows = int(first.shape[1]);
      ref_cols = int(first.shape[2]);
      const KeyedArray last = maps.query_heads.back();
      const viz::MapQuery q = figure_query(last.first.query, ref_rows, ref_cols);
      // The view's layer (FigureOptions::view), by default the last with maps.
      std::optional<KeyedArray> shown = last;
      const int64_t wanted = o.view.layer < 0 ? -1 : o.view.layer_in(int(m.layers.size()));
      if (wanted >= 0) {
        const KeyedArray* found = find_layer(maps.query_heads, wanted);
        shown = found ? std::optional<KeyedArray>(*found) : std::nullopt;
      }
      jobs.push_back({"head_maps", "head_maps" + suffix, [=, &m] {
                        if (!shown)
                          throw std::runtime_error("no maps in layer " + std::to_string(wanted) +
                                                   " (not analysed, or above the map limit)");
                        return viz::head_maps_figure(*picture, *shown->second, q, m.name,
                                                     layer_label(shown->first.layer), o.style);
                      }});
      std::vector<viz::LayerMaps> layers;
      for (const auto& [key, a] : maps.query_heads) layers.push_back({layer_label(key.layer), a});
      jobs.push_back({"layers_heads", "layers_heads" + suffix, [=, &m] {
                        return viz::layers_heads_figure(*picture, layers, q, m.name, o.style);
                      }});
    }
    for (const auto& [key, a] : maps.prefix_heads) {
      const viz::MapQuery q = figure_query(key.query, ref_rows, ref_cols);
      const analysis::Array* arr = a;
      const int64_t layer = key.layer;
      jobs.push_back({"prefix_maps", "prefix_maps__" + key.query + suffix, [=, &m] {
                        return viz::head_maps_figure(*picture, *arr, q, m.name, layer_label(layer),
                                                     o.style);
                      }});
    }
  }
}

// What model `m` shows of image `image` in the side-by-side figure under the view, with the
// query it answers (its tag); nullopt when it has no such map.
// The local-attention windows of traced layer `layer` (from the report's layer list), for
// the compare figure's outlines as the GUI draws them.
void set_windows(const ModelResults& m, int64_t layer, viz::ModelMap& map) {
  if (!m.layers.is_array()) return;
  for (const auto& l : m.layers)
    if (l.value("index", int64_t{-1}) == layer) {
      map.window = l.value("window", 0);
      map.window_w = l.value("window_w", 0);  // 0 (or a report from before it): square
      const int shift = l.value("window_shift", 0);
      map.window_shift = map.window > 1 ? shift % map.window : 0;
      return;
    }
}

std::optional<std::pair<viz::ModelMap, std::string>> compared_map(const ModelResults& m,
                                                                  const std::string& image,
                                                                  const MapView& view) {
  const ImageMaps found = image_maps(m, image);
  const auto shown = [&](const analysis::Array* a, int64_t index, int64_t layer,
                         const std::string& query) {
    viz::ModelMap map{m.name, a, index};
    set_windows(m, layer, map);
    return std::make_optional(std::make_pair(map, query));
  };
  if (view.rollout) {
    const auto rollouts = m.arrays_of("rollout", image);
    if (rollouts.empty()) return std::nullopt;
    // On the first traced layer's grid (the GUI outlines that layer's windows).
    const int64_t first =
        m.layers.is_array() && !m.layers.empty() ? m.layers.front().value("index", int64_t{0}) : 0;
    return shown(rollouts.front().second, 0, first, rollouts.front().first.query);
  }
  if (!found.last_fused || found.query_heads.empty()) return std::nullopt;
  if (view.layer < 0 && view.head < 0)  // the last layer's head fusion
    return shown(found.last_fused->second, view.fusion, found.last_fused->first.layer,
                 found.last_fused->first.query);
  const KeyedArray* heads =
      view.layer < 0 ? &found.query_heads.back()
                     : find_layer(found.query_heads, view.layer_in(int(m.layers.size())));
  if (!heads) return std::nullopt;
  if (view.head >= 0 && view.head < heads->second->shape[0])
    return shown(heads->second, view.head, heads->first.layer, heads->first.query);
  // No such head in this model (or none asked for): the head fusion, as the GUI shows.
  analysis::ResultKey key = heads->first;
  key.part = "fused";
  const analysis::Array* fused = m.array(key);
  if (!fused) return std::nullopt;
  return shown(fused, view.fusion, key.layer, key.query);
}

// The query `tag` on model m's first-layer grid for image `image` (figures mark it there).
viz::MapQuery first_grid_query(const ModelResults& m, const std::string& image,
                               const std::string& tag) {
  const ImageMaps found = image_maps(m, image);
  const analysis::Array* first =
      found.query_heads.empty() ? nullptr : found.query_heads.front().second;
  return figure_query(tag, first ? int(first->shape[1]) : 0, first ? int(first->shape[2]) : 0);
}

// The GUI's single view: each model's map under the view (layer, head or fusion, query or
// rollout), one panel with its colorbar and its range in the header.
void map_figures(std::vector<FigureJob>& jobs, const ModelResults& m, const FigureOptions& o) {
  for (const auto& im : m.images) {
    const auto shown = compared_map(m, im.tag, o.view);
    if (!shown) continue;
    const viz::MapQuery q = first_grid_query(m, im.tag, shown->second);
    const viz::ModelMap map = shown->first;
    const viz::RgbaImage* picture = &im.picture;
    viz::CompareOptions co;
    co.input_panel = false;
    jobs.push_back({"map", "map__" + m.name + "__" + im.tag, [=] {
                      return viz::model_compare_figure(*picture, {map}, q, o.view.title(q.label),
                                                       o.style, co);
                    }});
  }
}

void compare_figures(std::vector<FigureJob>& jobs, const std::vector<ModelResults>& models,
                     const FigureOptions& o) {
  if (models.size() < 2) return;
  for (const auto& im : models.front().images) {
    std::vector<viz::ModelMap> maps;
    std::vector<int> position(models.size(), -1);  // each model's panel among the maps
    viz::MapQuery q;
    for (size_t mi = 0; mi < models.size(); ++mi) {
      const ModelResults& m = models[mi];
      const auto shown = compared_map(m, im.tag, o.view);
      if (!shown) continue;
      position[mi] = int(maps.size());
      if (maps.empty()) q = first_grid_query(m, im.tag, shown->second);  // the first model's
      maps.push_back(shown->first);
      const ResultImage* own = m.image(im.tag);  // each model's own input (its size)
      maps.back().picture = own ? &own->picture : nullptr;
    }
    if (maps.size() < 2) continue;
    const viz::RgbaImage* picture = &im.picture;
    viz::CompareOptions co;
    co.scale = o.compare_scale;
    std::string no_difference;  // why the asked-for difference cannot be drawn
    if (const auto& d = o.compare_difference) {
      const auto at = [&](int i) {
        return i >= 0 && i < int(models.size()) ? position[size_t(i)] : -1;
      };
      if (at(d->first) < 0 || at(d->second) < 0)
        no_difference = "--compare-difference " + std::to_string(d->first) + "," +
                        std::to_string(d->second) + ": no such model with a map of " + im.tag;
      else
        co.difference = std::make_pair(at(d->first), at(d->second));
    }
    jobs.push_back({"compare", "compare__" + im.tag, [=] {
                      if (!no_difference.empty()) throw std::invalid_argument(no_difference);
                      return viz::model_compare_figure(*picture, maps, q, o.view.title(q.label),
                                                       o.style, co);
                    }});
  }
}

}  // namespace

void maps_figures(AnalysisInfo& info) {
  info.figure_kinds = {
      {"head_maps", "Per-head attention maps of the query (last layer)"},
      {"prefix_maps", "Attention of the prefix tokens (CLS), per head (last layer)"},
      {"layers_heads", "Every layer and head"},
      {"compare", "Models side by side"},
      {"map", "The map of the view, one per model (the GUI's single view)", true}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models) model_figures(jobs, m, in.options);
    for (const auto& m : in.models) map_figures(jobs, m, in.options);
    compare_figures(jobs, in.models, in.options);
  };
}

}  // namespace attnlab::session
