// The faithfulness curves and scoreboard (see faithfulness.h).
#include "viz/figures/faithfulness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace attnlab::viz {
namespace {

// Names in first-seen order.
void remember(std::vector<std::string>& names, const std::string& n) {
  if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
}

}  // namespace

namespace {

// (model, map) -> re-initialised top blocks -> mean Spearman (0 blocks: 1, the map itself).
using Cascades =
    std::map<std::pair<std::string, std::string>, std::map<double, std::pair<double, int>>>;

Cascades read_cascades(const analysis::Table& t) {
  const std::string who = "faithfulness randomisation";
  const Columns cols(t, who);
  const bool means =
      std::find(t.columns.begin(), t.columns.end(), "spearman_mean") != t.columns.end();
  const char* value = means ? "spearman_mean" : "spearman";
  for (const char* c : {"model", "map", "blocks", value}) cols.index(c);
  Cascades out;
  for (const auto& row : t.rows) {
    const double v = cols.number(row, value);
    if (!std::isfinite(v)) continue;
    auto& line = out[{cols.text(row, "model"), cols.text(row, "map")}];
    line[0] = {1.0, 1};
    auto& cell = line[cols.number(row, "blocks")];
    cell.first += v;
    cell.second += 1;
  }
  return out;
}

LineSeries kind_line(const std::vector<std::string>& kinds, size_t k) {
  LineSeries s;
  s.color = cycle_color(int(k));
  s.label = kinds[k];
  s.dashed = kinds[k] == "random" || kinds[k] == "centre";  // the baselines
  return s;
}

}  // namespace

CaptionedFigure faithfulness_curves_figure(const analysis::Table& curves,
                                           const FaithfulnessFigureOptions& options,
                                           const analysis::Table* randomisation) {
  const std::string who = "faithfulness curves figure";
  const Columns cols(curves, who);
  // Per-image points, or their means per step (`faithfulness --per-image off`).
  const bool means =
      std::find(curves.columns.begin(), curves.columns.end(), "fraction") == curves.columns.end();
  const std::string fraction = means ? "fraction_mean" : "fraction";
  const std::string deletion = means ? "deletion_mean" : "deletion";
  const std::string insertion = means ? "insertion_mean" : "insertion";
  for (const std::string& c :
       {std::string("model"), std::string("map"), fraction, deletion, insertion})
    cols.index(c);
  if (curves.rows.empty()) throw std::invalid_argument(who + ": no curve");
  std::vector<std::string> models, kinds;
  // (model, map, curve) -> fraction -> (sum, count)
  std::map<std::tuple<std::string, std::string, int>, std::map<double, std::pair<double, int>>> mean;
  for (const auto& row : curves.rows) {
    const std::string m = cols.text(row, "model"), k = cols.text(row, "map");
    remember(models, m);
    remember(kinds, k);
    const double x = cols.number(row, fraction);
    for (int c = 0; c < 2; ++c) {
      const double v = cols.number(row, c == 0 ? deletion : insertion);
      if (!std::isfinite(v)) continue;
      auto& cell = mean[{m, k, c}][x];
      cell.first += v;
      cell.second += 1;
    }
  }
  const Cascades cascades = randomisation ? read_cascades(*randomisation) : Cascades{};
  const int columns = cascades.empty() ? 2 : 3;
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = columns;
  f.col_labels = {"deletion (most relevant first)", "insertion (most relevant first)"};
  if (columns == 3) f.col_labels.push_back("randomisation (cascading)");
  for (const auto& m : models) {
    f.row_labels.push_back(m);
    for (int c = 0; c < columns; ++c) {
      Panel p;
      p.grid = true;
      p.legend = c == 1 && &m == &models.front();
      if (c == 2) {  // Spearman with the map of the model with its top blocks re-initialised
        p.x.label = "top blocks re-initialised";
        p.y.label = "Spearman with the map";
        p.y.min = -1;
        p.y.max = 1.05;
        double most = 1;
        for (size_t k = 0; k < kinds.size(); ++k) {
          const auto it = cascades.find({m, kinds[k]});
          if (it == cascades.end()) continue;
          LineSeries s = kind_line(kinds, k);
          s.markers = true;
          for (const auto& [x, sum] : it->second) {
            s.x.push_back(x);
            s.y.push_back(sum.first / sum.second);
            most = std::max(most, x);
          }
          p.items.push_back(s);
        }
        LineSeries flag;  // at or above it with every block re-initialised: flagged
        flag.x = {0, most};
        flag.y = {kRandomisationFlagLine, kRandomisationFlagLine};
        flag.color = Color{0.5, 0.5, 0.5, 1};
        flag.width_pt = 0.75;
        flag.dashed = true;
        p.items.push_back(flag);
        p.x.min = 0;
        p.x.max = most;
        f.panels.push_back(std::move(p));
        continue;
      }
      p.x.label = "share of cells changed";
      p.y.label = "p(class)";
      p.x.min = 0;
      p.x.max = 1;
      p.y.min = 0;
      p.y.max = 1.05;
      for (size_t k = 0; k < kinds.size(); ++k) {
        const auto it = mean.find({m, kinds[k], c});
        if (it == mean.end()) continue;
        LineSeries s = kind_line(kinds, k);
        for (const auto& [x, sum] : it->second) {
          s.x.push_back(x);
          s.y.push_back(sum.first / sum.second);
        }
        p.items.push_back(s);
      }
      f.panels.push_back(std::move(p));
    }
  }
  f.height_in = 1.9 * double(models.size()) + 0.4;
  std::string caption =
      "Deletion and insertion curves: the target class's probability as the cells of each "
      "map are replaced by the baseline (deletion) or restored into it (insertion), most "
      "relevant first, mean over the images; dashed: the random and centre-prior "
      "baselines. A faithful map falls fast under deletion and rises fast under insertion.";
  if (columns == 3)
    caption +=
        " Right: the Spearman correlation of each map with the map of the model whose "
        "top blocks carry fresh random weights (0: the trained model); a map still at "
        "or above the grey line with every block re-initialised ignores the weights.";
  return {f, caption};
}

CaptionedFigure faithfulness_scoreboard_figure(const analysis::Table& summary,
                                               const FaithfulnessFigureOptions& options) {
  const std::string who = "faithfulness scoreboard figure";
  const Columns cols(summary, who);
  for (const char* c : {"model", "map", "auc_deletion_mean", "auc_insertion_mean"}) cols.index(c);
  if (summary.rows.empty()) throw std::invalid_argument(who + ": no score");
  std::vector<std::string> models, kinds;
  for (const auto& row : summary.rows) {
    remember(models, cols.text(row, "model"));
    remember(kinds, cols.text(row, "map"));
  }
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = 2;
  const struct {
    const char* column;
    const char* title;
    Colormap cmap;
  } parts[] = {{"auc_deletion_mean", "deletion AUC (lower is better)", Colormap::Viridis},
               {"auc_insertion_mean", "insertion AUC (higher is better)", Colormap::Viridis}};
  for (const auto& part : parts) {
    HeatmapLayer h;
    h.rows = int(models.size());
    h.cols = int(kinds.size());
    h.values.assign(models.size() * kinds.size(), NAN);
    h.cmap = part.cmap;
    h.vmin = 0;
    h.vmax = 1;
    h.x0 = h.y0 = -0.5;
    h.x1 = double(kinds.size()) - 0.5;
    h.y1 = double(models.size()) - 0.5;
    Panel p;
    p.title = part.title;
    p.image = true;
    p.x.min = p.y.min = -0.5;
    p.x.max = h.x1;
    p.y.max = h.y1;
    for (size_t k = 0; k < kinds.size(); ++k) {
      p.x.ticks.push_back(double(k));
      p.x.tick_labels.push_back(kinds[k]);
    }
    for (size_t m = 0; m < models.size(); ++m) {
      p.y.ticks.push_back(double(m));
      p.y.tick_labels.push_back(models[m]);
    }
    std::vector<TextLabel> labels;
    for (const auto& row : summary.rows) {
      const auto m = size_t(std::find(models.begin(), models.end(), cols.text(row, "model")) - models.begin());
      const auto k = size_t(std::find(kinds.begin(), kinds.end(), cols.text(row, "map")) - kinds.begin());
      const double v = cols.number(row, part.column);
      h.values[m * kinds.size() + k] = float(v);
      TextLabel t;
      t.x = double(k);
      t.y = double(m);
      t.text = std::isfinite(v) ? format_number(v, 2) : "-";
      t.color = v > 0.6 ? kBlack : kWhite;  // readable on viridis' dark and light ends
      labels.push_back(t);
    }
    p.items.emplace_back(std::move(h));
    for (auto& t : labels) p.items.emplace_back(std::move(t));
    f.panels.push_back(std::move(p));
  }
  f.colorbar = ColorbarSpec{Colormap::Viridis, 0, 1, "area under the curve"};
  f.height_in = 0.35 * double(models.size()) + 1.4;
  return {f,
          "Faithfulness scoreboard: the areas under the deletion and insertion curves of each "
          "map kind (columns) for each model (rows), mean over the images; the random map and "
          "the centre prior are the baselines a map has to beat."};
}

}  // namespace attnlab::viz
