// faithfulness's figures (see faithfulness.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <optional>
#include <stdexcept>
#include <utility>

#include "app/session/analyses/step_figures.h"

#include "core/analysis/faithfulness.h"
#include "viz/figures/faithfulness.h"

namespace attnlab::session {
namespace {

static_assert(viz::kRandomisationFlagLine == analysis::kRandomisationFlag);

// The models' accumulated tables as the figures read them: a "model" column first and the
// means under the per-image names ("auc_deletion_mean" stays, "deletion_mean" → "deletion").
analysis::Table across_models(const std::vector<std::pair<std::string, analysis::Table>>& tables,
                              bool curves) {
  analysis::Table out;
  for (const auto& [model, t] : tables) {
    if (out.columns.empty()) {
      out.name = t.name;
      out.columns.push_back("model");
      for (const auto& c : t.columns) {
        const bool mean = c.size() > 5 && c.compare(c.size() - 5, 5, "_mean") == 0;
        out.columns.push_back(curves && mean ? c.substr(0, c.size() - 5) : c);
      }
      out.key_columns = t.key_columns + 1;
    }
    for (const auto& row : t.rows) {
      std::vector<analysis::Cell> r{analysis::Cell(model)};
      r.insert(r.end(), row.begin(), row.end());
      out.rows.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

void faithfulness_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"faithfulness", "Faithfulness of the maps (deletion, insertion)"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    const auto scores = model_tables(in.models, "faithfulness");
    const auto curves = model_tables(in.models, "faithfulness_curves");
    if (scores.empty()) return;
    const analysis::Table s = across_models(scores, false), c = across_models(curves, true);
    // The randomisation check of the models that know their config (all the registry's).
    const auto checks = model_tables(in.models, "faithfulness_randomisation");
    const std::optional<analysis::Table> r =
        checks.empty() ? std::nullopt : std::optional(across_models(checks, false));
    jobs.push_back({"faithfulness", "faithfulness_scoreboard",
                    [s] { return viz::faithfulness_scoreboard_figure(s); }});
    jobs.push_back({"faithfulness", "faithfulness_curves",
                    [c, r] { return viz::faithfulness_curves_figure(c, {}, r ? &*r : nullptr); }});
  };
  info.tab = AnalysisTab{
      "faithfulness",
      "Faithful",
      false,
      false,
      [](const TabInputs& in) {
        const ModelResults& m = in.models.front();
        const analysis::Table* t = m.table("faithfulness_curves");
        const analysis::Table* r = m.table("faithfulness_randomisation");
        if (!t)
          throw std::invalid_argument(
              "the GUI scores the maps of models with at most " + std::to_string(kGuiHeadTokens) +
              " head-tokens (heads x tokens); for this model run attnlab faithfulness or report "
              "--analyses faithfulness");
        const std::optional<analysis::Table> checks =
            r ? std::optional(across_models({{m.name, *r}}, false)) : std::nullopt;
        return viz::faithfulness_curves_figure(across_models({{m.name, *t}}, true), {},
                                               checks ? &*checks : nullptr);
      },
      "Each map's deletion and insertion curves on this image, and its correlation with "
      "the map of the model with its top blocks re-initialised (flagged at or above the "
      "grey line with every block re-initialised); attnlab faithfulness adds labels."};
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
