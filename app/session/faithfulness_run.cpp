// FaithfulnessRun: see faithfulness_run.h. The protocol is docs/ANALYSIS.md's
// "Faithfulness"; the curves and the cascade are faithfulness_maps.h's.
#include "app/session/faithfulness_run.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/faithfulness.h"
#include "core/io/text.h"

namespace attnlab::session {

FaithfulnessRun::FaithfulnessRun(FaithfulnessSettings settings, NoteSink note)
    : s_(std::move(settings)), note_(std::move(note)) {
  images_ = make_table(
      "faithfulness_images",
      "per image and map kind: areas under the deletion and insertion curves (target class "
      "probability; deletion low, insertion high is faithful) and the positive and negative "
      "perturbation curves (top-1 = reference; positive low, negative high is faithful)",
      {"model", "map", "image", "class", "reference", "auc_deletion", "auc_insertion",
       "auc_positive", "auc_negative"},
      5);
  curves_ = make_table("faithfulness_curves",
                       "each curve at each step: the share of cells changed and the value",
                       {"model", "map", "image", "step", "fraction", "deletion", "insertion",
                        "positive", "negative"},
                       5);
  random_ = make_table(
      "faithfulness_randomisation",
      "model randomisation (cascading from the top): Spearman correlation of the map with the "
      "map of the model whose last `blocks` blocks carry fresh random weights",
      {"model", "map", "image", "blocks", "spearman"}, 4);
}

void FaithfulnessRun::begin_model(const std::string& tag) {
  tag_ = tag;
  model_log_ = {
      {"model", tag}, {"images", nlohmann::json::array()}, {"notes", nlohmann::json::array()}};
  blocks_.clear();
  model_kinds_.clear();
  cascade_.clear();
}

void FaithfulnessRun::score(models::Backbone& model, const at::Tensor& image, int64_t label,
                            const std::string& tag, int64_t index,
                            const std::function<bool()>& cancelled) {
  const PreparedImage prepared = prepare_image(model, image);
  const int64_t predicted = prepared.predicted;
  const int64_t reference = label >= 0 ? label : predicted;
  if (s_.randomise && cascade_.empty()) {
    blocks_ = prepared.blocks;
    full_cascade_[tag_] = int64_t(blocks_.size());
    cascade_ = randomisation_cascade(model, blocks_, s_.request.seed);
  }
  const uint64_t map_seed = s_.request.seed * 1000003u + uint64_t(index);
  const auto scored = score_maps(
      model, image, prepared, s_.kinds, reference, models::baseline_image(image, s_.baseline),
      s_.request, map_seed,
      [&](const std::string& kind, const std::string& why) {  // a kind that does not apply
        const std::string note = tag_ + ": " + kind + ": " + why;
        if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) {
          notes_.push_back(note);
          if (keep_log_) model_log_["notes"].push_back(note);
          if (note_) note_(note, s_.kinds_named);
        }
        any_error_ = any_error_ || s_.kinds_named;
      },
      cancelled);
  std::vector<RandomisationScore> randomised;
  if (!cascade_.empty())
    randomised = randomisation_scores(cascade_, scored, image, prepared, map_seed);
  // Every score is in hand: the tables grow only now, so a failed image leaves them as they were.
  ImageRows rows;
  for (const ScoredMap& sm : scored) {
    const models::PerturbationCurves& c = sm.curves;
    if (std::find(model_kinds_.begin(), model_kinds_.end(), sm.kind) == model_kinds_.end())
      model_kinds_.push_back(sm.kind);
    rows.images.push_back({tag_, sm.kind, tag, predicted, reference, c.auc_deletion,
                           c.auc_insertion, c.auc_positive, c.auc_negative});
    for (size_t s = 0; s < c.counts.size(); ++s)
      rows.curves.push_back({tag_, sm.kind, tag, int64_t(s), double(c.counts[s]) / double(c.cells),
                             c.deletion[s], c.insertion[s], c.positive[s], c.negative[s]});
  }
  rows.randomised = !cascade_.empty();
  if (!cascade_.empty())
    for (const RandomisationScore& r : randomised)
      rows.random.push_back({tag_, r.kind, tag, r.blocks, r.spearman});
  add_rows(rows);
  if (keep_log_ && s_.per_image) model_log_["images"].push_back(image_rows_json(rows));
}

void FaithfulnessRun::add_rows(const ImageRows& rows) {
  if (!s_.per_image) {
    // The image's curves, step by step, into their running means.
    analysis::Table c = make_table(
        "faithfulness_curves", "",
        {"model", "map", "step", "fraction", "deletion", "insertion", "positive", "negative"}, 3);
    for (const auto& row : rows.curves)
      c.add_row({row[0], row[1], row[3], row[4], row[5], row[6], row[7], row[8]});
    curve_means_.add(c);
  }
  for (const auto& row : rows.images) {
    if (s_.per_image) images_.add_row(row);
    analysis::Table one = make_table(
        "faithfulness", "",
        {"model", "map", "auc_deletion", "auc_insertion", "auc_positive", "auc_negative"}, 2);
    one.add_row({row[0], row[1], row[5], row[6], row[7], row[8]});
    summary_.add(one);
  }
  if (s_.per_image)
    for (const auto& row : rows.curves) curves_.add_row(row);
  if (!rows.randomised) return;
  analysis::Table r1 =
      make_table("faithfulness_randomisation", "", {"model", "map", "blocks", "spearman"}, 3);
  for (const auto& row : rows.random) {
    if (s_.per_image) random_.add_row(row);
    r1.add_row({row[0], row[1], row[3], row[4]});
  }
  random_summary_.add(r1);
}

void FaithfulnessRun::end_model(nlohmann::json description, double seconds) {
  per_model_.push_back({{"model", tag_},
                        {"maps", model_kinds_},
                        {"blocks", blocks_},
                        {"seconds", seconds},
                        {"description", std::move(description)}});
  if (keep_log_) {
    nlohmann::json entry = std::move(model_log_);
    entry["summary"] = per_model_.back();
    const auto full = full_cascade_.find(tag_);
    entry["full_cascade"] =
        full == full_cascade_.end() ? nlohmann::json() : nlohmann::json(full->second);
    log_.push_back(std::move(entry));
  }
  cascade_.clear();
}

analysis::Table FaithfulnessRun::curve_means_table() const {
  analysis::Table t = curve_means_.result();
  t.name = "faithfulness_curves";
  t.caption =
      "each curve's mean and std over the images at each step (--per-image off): the share "
      "of cells changed and the value";
  return t;
}

std::vector<analysis::Table> FaithfulnessRun::tables() const {
  analysis::Table summary = summary_.result();
  summary.name = "faithfulness";
  summary.caption =
      "faithfulness per model and map kind, mean and std over the images: areas under the "
      "deletion (low is faithful), insertion (high), positive (low) and negative (high) "
      "perturbation curves";
  std::vector<analysis::Table> out = {images_, curves_, summary};
  if (!s_.per_image) out = {curve_means_table(), summary};
  if (!s_.randomise || random_summary_.count() == 0) return out;
  if (s_.per_image) out.push_back(random_);
  analysis::Table rs = random_summary_.result();
  rs.name = "faithfulness_randomisation_summary";
  rs.caption =
      "model randomisation: mean Spearman correlation with the trained model's map "
      "per number of re-initialised top blocks; flagged when it stays >= " +
      text::format_g(analysis::kRandomisationFlag) + " with every block re-initialised";
  rs.columns.push_back("flagged");
  const size_t model_col = rs.column("model"), blocks_col = rs.column("blocks"),
               mean_col = rs.column("spearman_mean");
  for (auto& row : rs.rows) {  // only the full cascade (every block re-initialised) flags
    const auto full = full_cascade_.find(row[model_col].str());
    const bool all_blocks =
        full != full_cascade_.end() && int64_t(row[blocks_col].number()) == full->second;
    row.push_back(int64_t(all_blocks && row[mean_col].number() >= analysis::kRandomisationFlag));
  }
  out.push_back(std::move(rs));
  return out;
}

nlohmann::json FaithfulnessRun::sidecar() const {
  return {{"command", "faithfulness"},
          {"maps", s_.kinds},
          {"step", s_.request.step},
          {"baseline", models::perturb_baseline_name(s_.baseline)},
          {"batch", s_.request.batch},
          {"seed", s_.request.seed},
          {"labels",
           s_.labelled ? "from the dataset" : "none: agreement with the unperturbed prediction"},
          {"randomisation", s_.randomise},
          {"per_image", s_.per_image},
          {"models", per_model_},
          {"notes", notes_}};
}

}  // namespace attnlab::session
