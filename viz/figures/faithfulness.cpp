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

CaptionedFigure faithfulness_curves_figure(const analysis::Table& curves,
                                           const FaithfulnessFigureOptions& options) {
  const std::string who = "faithfulness curves figure";
  const Columns cols(curves, who);
  for (const char* c : {"model", "map", "fraction", "deletion", "insertion"}) cols.index(c);
  if (curves.rows.empty()) throw std::invalid_argument(who + ": no curve");
  std::vector<std::string> models, kinds;
  // (model, map, curve) -> fraction -> (sum, count)
  std::map<std::tuple<std::string, std::string, int>, std::map<double, std::pair<double, int>>> mean;
  for (const auto& row : curves.rows) {
    const std::string m = cols.text(row, "model"), k = cols.text(row, "map");
    remember(models, m);
    remember(kinds, k);
    const double x = cols.number(row, "fraction");
    for (int c = 0; c < 2; ++c) {
      const double v = cols.number(row, c == 0 ? "deletion" : "insertion");
      if (!std::isfinite(v)) continue;
      auto& cell = mean[{m, k, c}][x];
      cell.first += v;
      cell.second += 1;
    }
  }
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = 2;
  f.col_labels = {"deletion (most relevant first)", "insertion (most relevant first)"};
  for (const auto& m : models) {
    f.row_labels.push_back(m);
    for (int c = 0; c < 2; ++c) {
      Panel p;
      p.x.label = "share of cells changed";
      p.y.label = "p(class)";
      p.x.min = 0;
      p.x.max = 1;
      p.y.min = 0;
      p.y.max = 1.05;
      p.grid = true;
      p.legend = c == 1 && &m == &models.front();
      for (size_t k = 0; k < kinds.size(); ++k) {
        const auto it = mean.find({m, kinds[k], c});
        if (it == mean.end()) continue;
        LineSeries s;
        s.color = cycle_color(int(k));
        s.label = kinds[k];
        s.dashed = kinds[k] == "random" || kinds[k] == "centre";  // the baselines
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
  return {f,
          "Deletion and insertion curves: the target class's probability as the cells of each "
          "map are replaced by the baseline (deletion) or restored into it (insertion), most "
          "relevant first, mean over the images; dashed: the random and centre-prior "
          "baselines. A faithful map falls fast under deletion and rises fast under insertion."};
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
