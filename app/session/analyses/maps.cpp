// maps: every head's attention row for the query in every selected layer, over the
// layer's grid (heads, H, W), with the mean/max/min head fusion; the query's weight on the
// prefix tokens; the last layer's prefix-token rows (CLS attention) per head. Figures:
// per-head maps of the last layer (or the view's: FigureOptions::view, report --layer),
// every layer and head, the prefix tokens' maps, and the models side by side (the last
// layer's head mean, or the view's layer, head or head fusion, or each model's rollout).
// Its figures (report, series, GUI tab): maps_figures.cpp.
#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "app/session/analyses/step_helpers.h"
#include "core/runtime/small_tasks.h"

namespace attnlab::session {
namespace {

void add_maps(ImageStep& s) {
  const Query q = resolve_query(s.settings, s.layers.front().trace->layout);
  analysis::Table prefix = make_table(
      "maps_prefix",
      "weight that the query token puts on each prefix token, per layer and head (query " + q.tag +
          ", a cell of the first layer's grid is mapped to each layer by area)",
      {"layer", "path", "head", "prefix", "weight"}, 4);
  // Which layers have a map, and of which token (warnings in layer order, here).
  std::vector<std::pair<const SessionLayer*, int64_t>> mapped;
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    if (lay.tokens() > s.settings.map_max_tokens) {
      s.session.warn("maps: layer " + std::to_string(l.index) + " has " +
                     std::to_string(lay.tokens()) + " tokens, above the map limit");
      continue;
    }
    const int64_t token = q.token_in(lay);
    if (token < 0) {
      s.session.warn("maps: layer " + std::to_string(l.index) + " has no " + q.prefix + " token");
      continue;
    }
    mapped.emplace_back(&l, token);
  }
  // The layers' maps side by side (a few small ops per head: runtime/small_tasks.h), then
  // emitted in layer order.
  std::vector<LayerQueryMaps> maps(mapped.size());
  runtime::for_each_small_task(int64_t(mapped.size()), [&](int64_t i) {
    maps[size_t(i)] =
        layer_query_maps(*mapped[size_t(i)].first->trace, s.b, mapped[size_t(i)].second);
  });
  for (size_t i = 0; i < mapped.size(); ++i) {
    const SessionLayer& l = *mapped[i].first;
    const auto& lay = l.trace->layout;
    const analysis::QueryMap& m = maps[i].map;
    analysis::ResultKey key{"maps", s.image, l.index, q.tag, "", "heads"};
    s.session.emit(to_array(m.grid, analysis::format_result_key(key), {"head", "y", "x"},
                            "attention of the query over the " + grid_text(lay) + " grid of " +
                                l.path + ", one map per head"));
    key.part = "fused";
    s.session.emit(to_array(maps[i].fused, analysis::format_result_key(key), {"fusion", "y", "x"},
                            "head fusion of the query's maps in " + l.path + ": mean, max, min"));
    const float* weights = m.prefix.data_ptr<float>();  // (heads, prefix) float32, contiguous
    for (int64_t h = 0; h < m.prefix.size(0); ++h)
      for (int64_t p = 0; p < m.prefix.size(1); ++p)
        prefix.add_row(
            {l.index, l.path, h, lay.prefix[size_t(p)], double(weights[h * m.prefix.size(1) + p])});
  }
  s.session.accumulate(prefix);
  // The prefix tokens' own rows (CLS attention) in the last selected layer.
  const SessionLayer& last = s.layers.back();
  for (const auto& name : last.trace->layout.prefix) {
    if (name == q.prefix) continue;  // already written as the query's own maps
    const analysis::QueryMap m = analysis::prefix_token_map(*last.trace, s.b, name);
    const analysis::ResultKey key{"maps", s.image, last.index, name, "", "heads"};
    s.session.emit(to_array(m.grid, analysis::format_result_key(key), {"head", "y", "x"},
                            "attention of the " + name + " token over the " +
                                grid_text(last.trace->layout) + " grid of " + last.path +
                                ", per head"));
  }
}

}  // namespace

AnalysisInfo maps_analysis() {
  AnalysisInfo info;
  info.name = "maps";
  info.summary =
      "every head's attention row for the query in every selected layer, head fusions, the "
      "query's weight on prefix tokens, the last layer's CLS rows";
  info.tables = {"maps_prefix"};
  info.arrays = {"maps__<image>__L<ll>__<query>__heads|fused"};
  info.add = add_maps;
  info.describe = [](const AnalysisSettings&) {
    return nlohmann::json{
        {"query_mapping", "a grid cell of the first layer maps to the cell containing its centre"},
        {"lofi_maps", "pooled keys' weights shared equally by the s x s tokens they pool"}};
  };
  return info;
}

}  // namespace attnlab::session
