// faithfulness: how faithful each relevance map of the image is (issue 27; protocol in
// core/analysis/faithfulness.h and docs/ANALYSIS.md): the deletion, insertion and
// positive/negative perturbation curves of every map kind the model can make, with the
// blurred image as baseline and 5 % steps, the class the model predicts as target and
// reference. Per image and map kind the four areas ("faithfulness", averaged over the
// images), and the curves step by step ("faithfulness_curves", averaged per step). The
// model-randomisation check needs the model's config to rebuild it, so it is the
// `attnlab faithfulness` command's. Figures: the curves and the scoreboard across models.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "app/session/faithfulness_maps.h"
#include "models/faithfulness_run.h"
#include "viz/figures/faithfulness.h"

namespace attnlab::session {
namespace {

void explain_faithfulness(ExplainStep& s) {
  const PreparedImage prepared = prepare_image(s.model, s.input);
  const at::Tensor base = models::baseline_image(s.input, models::PerturbBaseline::Blur);
  analysis::Table scores = make_table(
      "faithfulness",
      "faithfulness of each map kind: areas under the deletion (low is faithful), insertion "
      "(high), positive (low) and negative (high) perturbation curves; blurred baseline, 5 % "
      "steps over the first attention layer's grid, the predicted class as target",
      {"map", "auc_deletion", "auc_insertion", "auc_positive", "auc_negative"}, 1);
  analysis::Table curves = make_table(
      "faithfulness_curves", "each map kind's curves at each step: the share of cells changed",
      {"map", "step", "fraction", "deletion", "insertion", "positive", "negative"}, 2);
  const auto scored = score_maps(
      s.model, s.input, prepared, faithfulness_map_kinds(), prepared.predicted, base, {}, 1,
      [&](const std::string& kind, const std::string& why) {
        s.session.warn("faithfulness: " + kind + ": " + why);
      });
  for (const ScoredMap& m : scored) {
    const models::PerturbationCurves& c = m.curves;
    scores.add_row({m.kind, c.auc_deletion, c.auc_insertion, c.auc_positive, c.auc_negative});
    for (size_t i = 0; i < c.counts.size(); ++i)
      curves.add_row({m.kind, int64_t(i), double(c.counts[i]) / double(c.cells), c.deletion[i],
                      c.insertion[i], c.positive[i], c.negative[i]});
  }
  s.session.accumulate(scores);
  s.session.accumulate(curves);
}

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

AnalysisInfo faithfulness_analysis() {
  AnalysisInfo info;
  info.name = "faithfulness";
  info.summary =
      "faithfulness of each map kind (cls, rollout, Grad-CAM, gradient rollout, random, "
      "centre): deletion/insertion and positive/negative perturbation areas";
  info.tables = {"faithfulness", "faithfulness_curves"};
  info.opt_in = true;  // 63 perturbed forwards per map kind and image
  info.explain = explain_faithfulness;
  info.figure_kinds = {{"faithfulness", "Faithfulness of the maps (deletion, insertion)"}};
  info.in_image_analysis_if = small_enough_for_gui;  // 5 kinds × 63 forwards: the zoo's
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    const auto scores = model_tables(in.models, "faithfulness");
    const auto curves = model_tables(in.models, "faithfulness_curves");
    if (scores.empty()) return;
    const analysis::Table s = across_models(scores, false), c = across_models(curves, true);
    jobs.push_back({"faithfulness", "faithfulness_scoreboard",
                    [s] { return viz::faithfulness_scoreboard_figure(s); }});
    jobs.push_back({"faithfulness", "faithfulness_curves",
                    [c] { return viz::faithfulness_curves_figure(c); }});
  };
  info.tab = AnalysisTab{
      "faithfulness",
      "Faithful",
      false,
      false,
      [](const TabInputs& in) {
        const ModelResults& m = in.models.front();
        const analysis::Table* t = m.table("faithfulness_curves");
        if (!t)
          throw std::invalid_argument(
              "the GUI scores the maps of models with at most " + std::to_string(kGuiHeadTokens) +
              " head-tokens (heads x tokens); for this model run attnlab faithfulness or report "
              "--analyses faithfulness");
        return viz::faithfulness_curves_figure(across_models({{m.name, *t}}, true));
      },
      "Each map's deletion and insertion curves on this image; attnlab faithfulness adds "
      "labels and the randomisation check."};
  return info;
}

}  // namespace attnlab::session
