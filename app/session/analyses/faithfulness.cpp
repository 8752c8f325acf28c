// faithfulness: how faithful each relevance map of the image is (issue 27; protocol in
// core/analysis/faithfulness.h and docs/ANALYSIS.md): the deletion, insertion and
// positive/negative perturbation curves of every map kind the model can make, with the
// blurred image as baseline and 5 % steps, the class the model predicts as target and
// reference. Per image and map kind the four areas ("faithfulness", averaged over the
// images), the curves step by step ("faithfulness_curves", averaged per step), and the
// model-randomisation check ("faithfulness_randomisation": each map's Spearman correlation
// with its map from copies of the model with the top block, top half and every block
// re-initialised, the copies built once per model). Figures: the curves, the scoreboard
// and the randomisation check across models.
#include <ATen/ATen.h>

#include <optional>

#include "app/session/analyses/step_helpers.h"
#include "app/session/faithfulness_maps.h"
#include "core/analysis/faithfulness.h"
#include "core/io/text.h"
#include "models/faithfulness_run.h"
#include "viz/figures/faithfulness.h"

namespace attnlab::session {
namespace {

static_assert(viz::kRandomisationFlagLine == analysis::kRandomisationFlag);
constexpr uint64_t kSeed = 1;  // the random map's and the re-initialisation's (as the command's)

// The model's re-initialised copies, kept by the session across its images.
struct CascadeCache {
  const models::Backbone* model = nullptr;
  std::vector<RandomisedCopy> copies;
};

void randomisation_check(ExplainStep& s, const PreparedImage& prepared,
                         const std::vector<ScoredMap>& scored) {
  std::shared_ptr<void>& slot = s.session.step_cache("faithfulness.cascade");
  auto cache = std::static_pointer_cast<CascadeCache>(slot);
  try {
    if (!cache || cache->model != &s.model) {
      cache = std::make_shared<CascadeCache>(
          CascadeCache{&s.model, randomisation_cascade(s.model, prepared.blocks, kSeed)});
      slot = cache;
    }
  } catch (const models::ModelError& e) {  // a model that does not know its config
    s.session.warn(std::string("faithfulness: randomisation check: ") + e.what());
    return;
  }
  analysis::Table t = make_table(
      "faithfulness_randomisation",
      "model randomisation, cascading from the top: Spearman correlation of each map with the "
      "same kind's map from the model with its top `blocks` re-initialised; a map that stays "
      "correlated (mean >= " +
          text::format_g(analysis::kRandomisationFlag) +
          ") with every block re-initialised ignores the weights",
      {"map", "blocks", "every_block", "spearman"}, 3);
  for (const RandomisationScore& r :
       randomisation_scores(cache->copies, scored, s.input, prepared, kSeed))
    t.add_row({r.kind, r.blocks, int64_t(r.every_block), r.spearman});
  s.session.accumulate(t);
}

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
      s.model, s.input, prepared, faithfulness_map_kinds(), prepared.predicted, base, {}, kSeed,
      [&](const std::string& kind, const std::string& why) {
        s.session.warn("faithfulness: " + kind + ": " + why);
      },
      [&] {  // asked between batches: a cancel leaves as AnalysisCancelled, as in heads
        s.session.throw_if_cancelled();
        return false;
      },
      [&](int64_t done, int64_t total) { s.session.progress(done, total); });
  for (const ScoredMap& m : scored) {
    const models::PerturbationCurves& c = m.curves;
    scores.add_row({m.kind, c.auc_deletion, c.auc_insertion, c.auc_positive, c.auc_negative});
    for (size_t i = 0; i < c.counts.size(); ++i)
      curves.add_row({m.kind, int64_t(i), double(c.counts[i]) / double(c.cells), c.deletion[i],
                      c.insertion[i], c.positive[i], c.negative[i]});
  }
  s.session.accumulate(scores);
  s.session.accumulate(curves);
  randomisation_check(s, prepared, scored);
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
  info.tables = {"faithfulness", "faithfulness_curves", "faithfulness_randomisation"};
  info.opt_in = true;  // 63 perturbed forwards per map kind and image
  info.explain = explain_faithfulness;
  info.needs_classes = true;
  info.figure_kinds = {{"faithfulness", "Faithfulness of the maps (deletion, insertion)"}};
  info.in_image_analysis_if = small_enough_for_gui;  // 5 kinds × 63 forwards: the zoo's
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
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/tab_table.cpp)
  return info;
}

}  // namespace attnlab::session
