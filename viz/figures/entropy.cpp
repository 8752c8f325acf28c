// The attention-entropy figure: normalised row entropy per head and layer, several models.
#include "viz/figures/entropy.h"

#include <algorithm>
#include <cmath>

#include "viz/figures/head_dots.h"

namespace attnlab::viz {

CaptionedFigure entropy_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                               const EntropyFigureOptions& options) {
  const std::string who = "entropy figure";
  HeadDots dots = head_dots(models, "normalised_entropy_mean", "row entropy / ln K", who);
  // Models whose rows held negative weights (entropies of |row| / Σ|row|).
  std::vector<std::string> names, signed_models;
  for (const auto& [name, table] : models) {
    names.push_back(name);
    const auto it = std::find(table.columns.begin(), table.columns.end(), "signed_rows_mean");
    if (it == table.columns.end()) continue;
    const size_t c = size_t(it - table.columns.begin());
    const bool any = std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
      return c < row.size() && row[c].numeric() && row[c].number() > 0;
    });
    if (any) signed_models.push_back(name);
  }
  const Figure f = head_dots_figure(dots, options);
  std::string caption =
      "Attention entropy H = −Σ_j p_ij·ln p_ij of each query's row over the head's K keys, "
      "divided by ln K (1: uniform over all keys, 0: all weight on one key), per head (dots, "
      "mean over every query and image) and its mean over heads (line) against layer, for " +
      name_list(names) +
      (models.size() > 1 ? "; models are offset slightly along x within a layer" : "");
  if (!signed_models.empty())
    caption += "; " + name_list(signed_models) +
               ": rows with negative weights, entropy of |row| / Σ|row|";
  caption += ". exp(H), the effective number of keys, is in the statistics tables.";
  return {f, caption};
}

}  // namespace attnlab::viz
