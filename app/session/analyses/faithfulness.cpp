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
// Its figures (report, series, GUI tab): faithfulness_figures.cpp.
#include <ATen/ATen.h>

#include <optional>

#include "app/session/analyses/step_helpers.h"
#include "app/session/faithfulness_maps.h"
#include "core/analysis/faithfulness.h"
#include "core/io/text.h"
#include "models/faithfulness_run.h"

namespace attnlab::session {
namespace {

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
  info.in_image_analysis_if = small_enough_for_gui;  // 5 kinds × 63 forwards: the zoo's
  return info;
}

}  // namespace attnlab::session
