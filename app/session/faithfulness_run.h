// The faithfulness scoreboard over models and images (`attnlab faithfulness`, and the
// Python module's Model.faithfulness): for every model, image and map kind, the deletion,
// insertion, positive and negative perturbation curves with their areas, and the model-
// randomisation check; accumulated into the command's tables. The caller brings the
// images (files, a labelled dataset, numpy arrays) on the model's device; this class owns
// what is done with each and how the tables are built, so both front ends write the same.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/session/faithfulness_maps.h"
#include "core/analysis/table.h"
#include "models/faithfulness_run.h"

namespace attnlab::session {

struct FaithfulnessSettings {
  std::vector<std::string> kinds;  // map kinds (parse_faithfulness_maps)
  bool kinds_named = false;        // asked for by name: a kind that does not apply is an error
  models::PerturbationRequest request;
  models::PerturbBaseline baseline = models::PerturbBaseline::Blur;
  bool randomise = true;  // the model-randomisation check
  bool labelled = false;  // labels come from the data, else the unperturbed prediction
  // The per-image tables (every image's areas, curve points and randomisation rows). Off
  // (`--per-image off`, for runs of many thousands of images): only the summaries, and the
  // curves as their mean per step, whose memory and shards do not grow with the images.
  bool per_image = true;
};

class FaithfulnessRun {
 public:
  // `note(text, error)`: a map kind that does not apply to a model, said once per model and
  // kind (an error when the kinds were named).
  using NoteSink = std::function<void(const std::string& text, bool error)>;
  FaithfulnessRun(FaithfulnessSettings settings, NoteSink note = {});

  // Each model: begin_model, then score() per image, then end_model.
  void begin_model(const std::string& tag);
  // Scores one image, (1, 3, H, W) on the model's device; `label` -1 without labels;
  // `index` the image's place in the run's list (it seeds the random maps). Throws what
  // the scoring throws; the tables are unchanged then.
  void score(models::Backbone& model, const at::Tensor& image, int64_t label,
             const std::string& tag, int64_t index, const std::function<bool()>& cancelled = {});
  void end_model(nlohmann::json description, double seconds);

  bool empty() const { return summary_.count() == 0; }
  bool any_error() const { return any_error_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // A run split into shards (`--shard I/N`, attnlab merge; faithfulness_state.cpp). With
  // keep_log, every scored image's rows are kept per model; save_state returns them with
  // each model's maps, blocks, notes and time. absorb_states adds the shards' states (in
  // the shards' order) model by model, each image's rows going through the same code as
  // score()'s: the merged tables are the single run's, bit for bit.
  void keep_log() { keep_log_ = true; }
  nlohmann::json save_state() const;
  void absorb_states(const std::vector<nlohmann::json>& shard_states);

  // faithfulness_images, faithfulness_curves, faithfulness (the summary) and, with the
  // randomisation check, faithfulness_randomisation and its _summary (flagged rows).
  // Without per_image: faithfulness_curves as the mean per step, the summary and the
  // randomisation summary.
  std::vector<analysis::Table> tables() const;
  // What the sidecar says of the run: its settings, and per model its maps, blocks, time.
  nlohmann::json sidecar() const;

 private:
  // One scored image's rows of faithfulness_images, _curves and _randomisation.
  struct ImageRows {
    std::vector<std::vector<analysis::Cell>> images, curves, random;
    bool randomised = false;  // the cascade ran (its summary counts the image)
  };
  static nlohmann::json image_rows_json(const ImageRows& rows);
  static ImageRows image_rows_from_json(const nlohmann::json& j);
  // Adds them to the tables and the summaries (score() and absorb_states()).
  void add_rows(const ImageRows& rows);
  analysis::Table curve_means_table() const;

  FaithfulnessSettings s_;
  NoteSink note_;
  bool keep_log_ = false;
  nlohmann::json log_ = nlohmann::json::array();  // per model: its images' rows (keep_log)
  nlohmann::json model_log_;                      // the model being scored
  analysis::Table images_, curves_, random_;
  analysis::TableAccumulator summary_, random_summary_;
  analysis::TableAccumulator curve_means_;  // without per_image: each curve's mean per step
  std::vector<std::string> notes_;
  std::map<std::string, int64_t> full_cascade_;  // per model: its block count
  nlohmann::json per_model_ = nlohmann::json::array();
  bool any_error_ = false;
  // The model being scored.
  std::string tag_;
  std::vector<std::string> blocks_, model_kinds_;
  // Its randomisation cascade, built once from the first image's blocks.
  std::vector<RandomisedCopy> cascade_;
};

}  // namespace attnlab::session
