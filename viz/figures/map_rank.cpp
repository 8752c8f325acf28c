// The attention-map rank figure: rank / min(N, K) per head and layer, lifted maps beside.
#include "viz/figures/map_rank.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <variant>

namespace attnlab::viz {
namespace {

// A table of (layer, head, share) from `t`: `rank_column` / min(tokens, keys) per row;
// `mixing`, when the rows name one, is returned through it.
analysis::Table shares(const analysis::Table& t, const std::string& rank_column,
                       const std::string& who, std::string* mixing, std::string* bounds) {
  const Columns cols(t, who);
  analysis::Table out;
  out.name = t.name;
  out.columns = {"layer", "head", "share"};
  out.key_columns = 2;
  double bound_share = INFINITY;
  for (const auto& row : t.rows) {
    const double full = std::min(cols.number(row, "tokens_mean"), cols.number(row, "keys_mean"));
    const double rank = cols.number(row, rank_column);
    if (!(full > 0) || !std::isfinite(rank)) continue;
    out.add_row({cols.number(row, "layer"), cols.number(row, "head"), rank / full});
    if (mixing && cols.text(row, "mixing") != "") *mixing = cols.text(row, "mixing");
    if (bounds && cols.text(row, "form") == "factored")
      bound_share = std::min(bound_share, cols.number(row, "bound_mean") / full);
  }
  if (bounds && std::isfinite(bound_share)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", bound_share);
    *bounds = buf;
  }
  return out;
}

}  // namespace

CaptionedFigure map_rank_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const MapRankFigureOptions& options) {
  const std::string who = "map rank figure";
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  std::vector<ModelTable> series;
  std::vector<int> colours;
  std::vector<std::string> names, lifted, bounded, left_out;
  std::vector<size_t> lifted_series;  // indices into `series` of the lifted maps
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& [name, table] = models[m];
    std::string mixing, bound;
    analysis::Table own = shares(table, "rank_mean", who + " (" + name + ")", &mixing, &bound);
    // Every head skipped (a map too large to form): named in the caption instead.
    if (own.rows.empty()) {
      left_out.push_back(name);
      continue;
    }
    series.push_back({name, own});
    colours.push_back(int(m));
    names.push_back(name);
    if (!bound.empty()) bounded.push_back(name + " ≤ " + bound);
    if (mixing.empty()) continue;
    analysis::Table lift = shares(table, "lifted_rank_mean", who, nullptr, nullptr);
    if (lift.rows.empty()) continue;
    lifted_series.push_back(series.size());
    series.push_back({name + " + " + mixing, lift});
    colours.push_back(int(m));
    lifted.push_back(name + " + " + mixing);
  }
  if (series.empty())
    throw std::invalid_argument(who + ": no finite rank_mean in the tables (every head of " +
                                name_list(left_out) + " was skipped)");
  HeadDots dots = head_dots(series, "share", "map rank / min(N, K)", who, colours);
  // head_dots adds two items per series (dots, then the mean line): a lifted map is drawn in
  // its model's colour with a dashed line.
  for (size_t i : lifted_series) std::get<LineSeries>(dots.panel.items[2 * i + 1]).dashed = true;
  const Figure f = head_dots_figure(dots, options);
  std::string caption =
      "Numerical rank of each head's attention map A (N queries × K keys; singular values above "
      "max(N, K)·ε·σ_max) divided by min(N, K), per head (dots, mean over images) and its mean "
      "over heads (line) against layer, for " +
      name_list(names) + ". 1 is full rank";
  if (!bounded.empty())
    caption += "; factored maps cannot exceed their factor width r / min(N, K) (" +
               name_list(bounded) + ")";
  if (!lifted.empty())
    caption += "; " + name_list(lifted) +
               " (dashed): rank of A + W_c, the depthwise token mixing the layer adds beside A for channel "
               "c (a few channels per head, mean)";
  if (!left_out.empty())
    caption += "; left out: " + name_list(left_out) +
               " (maps too large to form; the statistics tables say so)";
  caption += ". Effective and stable ranks are in the statistics tables.";
  return {f, caption};
}

}  // namespace attnlab::viz
