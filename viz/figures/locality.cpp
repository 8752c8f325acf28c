// The locality figure: mean attention distance per head and layer, several models.
#include "viz/figures/locality.h"

#include "viz/figures/head_dots.h"

#include <algorithm>
#include <stdexcept>

namespace attnlab::viz {

CaptionedFigure locality_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                                const LocalityFigureOptions& options) {
  const std::string who = "locality figure";
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  // Signed attention rows (Castling's linear-angular kernel) make Σ a_ij·d_ij a signed
  // number, not a distance: such models are left out (and named) when others remain, so
  // that their hundreds of "patches" do not flatten everyone else's curves.
  std::vector<bool> signed_rows(models.size(), false);
  for (size_t m = 0; m < models.size(); ++m) {
    const analysis::Table& t = models[m].second;
    const auto it = std::find(t.columns.begin(), t.columns.end(), "mean_distance_mean");
    if (it == t.columns.end()) continue;  // head_dots names it
    const size_t c = size_t(it - t.columns.begin());
    for (const auto& row : t.rows)
      if (c < row.size() && row[c].numeric() && row[c].number() < 0) signed_rows[m] = true;
  }
  const bool leave_out = std::count(signed_rows.begin(), signed_rows.end(), false) > 0;
  std::vector<ModelTable> shown_models;
  std::vector<std::string> shown, left_out, negative;
  std::vector<int> colours;
  for (size_t m = 0; m < models.size(); ++m) {
    if (leave_out && signed_rows[m]) {
      left_out.push_back(models[m].first);
      continue;
    }
    shown_models.push_back(models[m]);
    colours.push_back(int(m));
    shown.push_back(models[m].first);
    if (signed_rows[m]) negative.push_back(models[m].first);
  }
  HeadDots dots = head_dots(shown_models, "mean_distance_mean",
                            "mean attention distance (patches)", who, colours);

  const Figure f = head_dots_figure(dots, options);
  std::string grid_text;
  for (size_t i = 0; i < dots.grids.size(); ++i) grid_text += (i ? ", " : "") + dots.grids[i];
  std::string caption =
      "Mean attention distance Σ_j a_ij·‖pos_i − pos_j‖ per head (dots, mean over images) and "
      "its mean over heads (line) against layer, for " +
      name_list(shown) +
      (grid_text.empty() ? std::string(", in patches")
                         : ", in patches of the " + grid_text + " token grid") +
      (shown.size() > 1 ? "; models are offset slightly along x within a layer" : "");
  if (!negative.empty()) {
    caption += "; negative distances (" + name_list(negative) +
               ") mean that mechanism's attention rows are not probability distributions";
  }
  if (!left_out.empty()) {
    caption += "; left out: " + name_list(left_out) +
               " (signed attention rows, so the weighted distance is not a distance; the "
               "values are in the statistics tables)";
  }
  caption += ".";
  return {f, caption};
}

}  // namespace attnlab::viz
