// One model's analyses over a stream of images: what `attnlab analyze`, `attnlab report`
// and the GUI's analysis jobs run. Each image's forward result (traces, and the layer
// outputs the spectra need) goes through every requested analysis at once; statistics
// become per-image Tables folded into running mean/std (analysis::TableAccumulator), maps
// become per-image Arrays handed to a sink as soon as they exist, spectra are summed. So
// memory does not grow with the number of images.
//
// The analyses themselves are registered in analysis_registry.h, one file each under
// app/session/analyses/ (`attnlab analyze --help` lists them). The session selects the
// layers, gives each analysis the layers whose traces offer what it needs, and keeps what
// the analyses hand back: it never names an analysis. Class-specific analyses (Grad-CAM,
// gradient rollout) need the model and the image, not only the traces: explain() runs them.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/compensated_sum.h"
#include "core/analysis/gradcam.h"
#include "core/analysis/rank.h"
#include "core/analysis/rollout.h"
#include "core/analysis/spectra.h"
#include "core/analysis/table.h"
#include "core/image/image_edits.h"
#include "models/backbone.h"

namespace attnlab::session {

struct AnalysisSettings {
  std::set<std::string> analyses;
  // Query position on the first selected layer's grid; y < 0 means the grid's centre.
  int64_t query_y = -1, query_x = -1;
  // Or a token index of the first selected layer (prefix tokens first: 0 = cls); >= 0 wins
  // over query_y/x. A prefix token is followed by name through the layers.
  int64_t query_token = -1;
  std::vector<int64_t> layers;  // indices into the traced layers (forward order); empty: all
  // Every analysis's own settings, as the analyses declare them (analysis_options.h):
  // options.real("outlier-factor"), ...
  OptionValues options;
  int64_t map_max_tokens = 1 << 16;  // refuse per-image maps above this many tokens

  // Images per forward pass in the CLI's image loop (analyze, report, analyze-series): a
  // batch goes through the model at once and each of its images through the analyses. The
  // results do not depend on it beyond float rounding (GEMMs of another size).
  int64_t images_per_forward = 1;

  // What-if edits (core/image/image_edits.h) applied to every image before the model sees
  // it, in the token units of its first layer (session/edited_input.h): the CLI's --edit.
  // Empty: the pictures as they are. The sidecar records them only when there are some, so
  // a run without edits writes the settings it always did.
  std::vector<image::EditOp> edits;

  // The forward options these analyses need (traces; layer outputs for spectra).
  models::ForwardOptions forward_options() const;
  nlohmann::json to_json() const;  // every setting, for the sidecar
};

// Typed views of options that more than the declaring analysis reads (declared in
// analyses/rollout.cpp, rank.cpp, gradcam.cpp): the rollout switches (rollout,
// gradrollout, the GUI's rollout map), the rank tolerance (rank, map_rank, the report's
// caption), the explained class (gradcam, gradrollout; -1: each image's top-1).
analysis::RolloutOptions rollout_options(const OptionValues& options);
analysis::RankOptions rank_options(const OptionValues& options);
int64_t class_to_explain(const OptionValues& options);

// Receives each per-image array (maps, rollout, anchor assignments) as it is computed.
using ArraySink = std::function<void(const analysis::Array&)>;

// What the caller of a session may ask of it while it runs (the GUI's Cancel and progress
// bar): `cancelled` is asked between the analyses and inside the long ones (faithfulness
// between batches, heads after each head); `progress` hears how far a long step is.
struct AnalysisControl {
  std::function<bool()> cancelled;
  std::function<void(int64_t done, int64_t total)> progress;
};

// Thrown out of add()/explain() once the control says cancelled: never a warning, the
// image's results are incomplete and the caller drops them.
class AnalysisCancelled : public std::runtime_error {
 public:
  AnalysisCancelled() : std::runtime_error("cancelled") {}
};

class AnalysisSession {
 public:
  AnalysisSession(AnalysisSettings settings, ArraySink sink, AnalysisControl control = {});

  // Adds image `b` of a forward result (run with settings.forward_options() on a batch of
  // images). `image_tag` names its arrays. Throws std::runtime_error when the model has no
  // attention layer or a requested layer index does not exist, std::invalid_argument when
  // b is outside the batch.
  void add(const std::string& image_tag, const models::ForwardResult& result, int64_t b = 0,
           const ImageSource& source = {});
  // After the last image: the analyses fitted on every image together emit their results
  // (AnalysisInfo::finish). Call once, before tables() and arrays(); later calls do nothing.
  void finish();

  // The class-specific explanations of one image (gradcam, gradrollout): each runs its own
  // forward with autograd on `model` for the preprocessed image (1, 3, H, W), on the
  // device the model is on. Call after add() for the same image. A failure (a layer too
  // large for the explicit form, an unknown target) becomes a warning, as in add().
  void explain(const std::string& image_tag, models::Backbone& model, const at::Tensor& image);
  bool explains() const;

  int64_t images() const { return images_; }
  const AnalysisSettings& settings() const { return settings_; }
  // Mean/std tables over the images added so far, in a fixed order.
  std::vector<analysis::Table> tables() const;
  // Image-averaged arrays: spectra (log amplitude and radial profile), singular values.
  std::vector<analysis::Array> arrays() const;
  // The layers analysed: index, path, mechanism, layout (filled by the first add()).
  nlohmann::json layers_json() const { return layers_json_; }
  // Analyses that could not run on some layer (e.g. an explicit rollout above its token
  // limit, spectra of a layer without a recorded output), each message once.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Requested analyses that did not apply to this model (no layer offers what they need),
  // one line each saying why. Not warnings: nothing went wrong.
  const std::vector<std::string>& skipped() const { return skipped_; }

  // What analysis steps hand their results to (analysis_registry.h):
  // a per-image array, to the sink;
  void emit(const analysis::Array& array) { sink_(array); }
  // a per-image table, folded into the running mean/std of its name;
  void accumulate(const analysis::Table& per_image);
  // a tensor averaged over the images into an array `name`;
  void add_sum(const std::string& name, const std::string& caption,
               const std::vector<std::string>& axes, const at::Tensor& value);
  // the running sum of the spectra of one layer's features (add analysis::spectrum_parts
  // of (1, H, W, C) to it), averaged over the images into two arrays, the key with part
  // "log_amplitude" and with part "radial"; the reference stays valid for the session's
  // life, and different keys' sums may be added to from different threads;
  analysis::SpectrumAccumulator& spectrum_sum(const analysis::ResultKey& key);
  // a problem on some layer or image (each message once);
  void warn(const std::string& message);
  // whether to stop (a long step asks between its parts), the same as an AnalysisCancelled
  // throw, and how far a long step is.
  bool cancelled() const { return control_.cancelled && control_.cancelled(); }
  void throw_if_cancelled() const {
    if (cancelled()) throw AnalysisCancelled();
  }
  void progress(int64_t done, int64_t total) const {
    if (control_.progress) control_.progress(done, total);
  }
  // A run split into shards (`--shard I/N`, attnlab merge; session_state.cpp).
  // save_state writes what a merge adds together: each mean/std table's running state
  // (counts, means, squared deviations: TableAccumulator::absorb combines them), the
  // compensated sums and spectra as float64 .npy files in `dir`, the image count, layers,
  // warnings and skipped analyses; absorb_state adds a saved state to this session (call
  // in the shards' order, then finish()). An analysis fitted on all images at once
  // (AnalysisInfo::finish) saves and absorbs what it keeps through its save_shard/
  // absorb_shard, and a shard's session (for_shard) leaves its fit to the merge; one
  // without them cannot be split: unshardable() names those.
  void for_shard() { for_shard_ = true; }
  nlohmann::json save_state(const std::string& dir);
  void absorb_state(const nlohmann::json& state, const std::string& dir);
  static std::vector<std::string> unshardable(const std::set<std::string>& analyses);

  // What a step keeps across the images of this session's model (the faithfulness step's
  // re-initialised copies of the model, built once), one slot per key.
  std::shared_ptr<void>& step_cache(const std::string& key) { return step_cache_[key]; }

 private:
  std::vector<SessionLayer> select_layers(const models::ForwardResult& result) const;
  // Runs one analysis; a TraceQueryError (a query or size the traces refuse), an
  // AttentionError (the explicit form's token limit) or a ModelError (a class or target
  // the model does not have) becomes a warning instead of failing the image.
  void guarded(const std::string& analysis, const std::function<void()>& body);
  void skip(const std::string& message);

  AnalysisSettings settings_;
  ArraySink sink_;
  AnalysisControl control_;
  std::map<std::string, std::shared_ptr<void>> step_cache_;
  int64_t images_ = 0;
  bool finished_ = false;
  nlohmann::json layers_json_;
  std::vector<std::string> warnings_, skipped_;
  std::vector<std::string> table_order_;
  std::map<std::string, analysis::TableAccumulator> tables_;
  bool for_shard_ = false;
  struct Sum {
    std::string caption;
    std::vector<std::string> axes;
    analysis::CompensatedSum total;  // float64 CPU, independent of the images' order
    int64_t count = 0;
  };
  std::vector<std::string> sum_order_;
  std::map<std::string, Sum> sums_;
  std::map<std::string, analysis::SpectrumAccumulator> spectra_;  // by formatted key
  std::vector<analysis::ResultKey> spectra_order_;
};

// An Array from a CPU/GPU tensor (copied to float32 CPU).
analysis::Array to_array(const at::Tensor& t, std::string name, std::vector<std::string> axes,
                         std::string caption = "");

}  // namespace attnlab::session
