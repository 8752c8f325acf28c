// One model's analyses over a stream of images: what `attnlab analyze`, `attnlab report`
// and the GUI's analysis jobs run. Each image's forward result (traces, and the layer
// outputs the spectra need) goes through every requested analysis at once; statistics
// become per-image Tables folded into running mean/std (analysis::TableAccumulator), maps
// become per-image Arrays handed to a sink as soon as they exist, spectra are summed. So
// memory does not grow with the number of images.
//
// Analyses (names as on the command line):
//   maps      every head's row for the query in every selected layer (heads, H, W) + fused
//             mean/max/min; the query's weight on prefix tokens; the last layer's cls/dist
//             rows per head
//   rollout   the query row of the rollout (prefix token cls when the model has one, else
//             the query position in the last layer) over the first layer's grid
//   rank      singular values and ranks of every head's KV buffer / output features
//   spectra   HiLo Hi-Fi / Lo-Fi branch spectra; the attention output's spectrum elsewhere
//   anchors   anchor assignments (anchor layers only)
//   mask      Castling's auxiliary-mask sparsity (castling layers only)
//   locality  mean attention distance per head
//   gradcam   Grad-CAM of the explained class (top-1 or --class) at the default target
//             (last block's norm1 / last stage) or the one asked for, on its grid
//   gradrollout  gradient-weighted rollout of that class over the first layer's grid
//             (every layer through its explicit form; layers above 4096 tokens refused)
// The last two need the model and the image, not only the traces: explain() runs them.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/attention_maps.h"
#include "core/analysis/gradcam.h"
#include "core/analysis/rank.h"
#include "core/analysis/rollout.h"
#include "core/analysis/spectra.h"
#include "core/analysis/table.h"
#include "models/backbone.h"

namespace attnlab::models {

const std::vector<std::string>& analysis_names();  // in the order above
// Parses "maps,rank" (or "all"); throws std::invalid_argument naming unknown ones.
std::set<std::string> parse_analyses(const std::string& list);

struct AnalysisSettings {
  std::set<std::string> analyses;
  // Query position on the first selected layer's grid; y < 0 means the grid's centre.
  int64_t query_y = -1, query_x = -1;
  // Or a token index of the first selected layer (prefix tokens first: 0 = cls); >= 0 wins
  // over query_y/x. A prefix token is followed by name through the layers.
  int64_t query_token = -1;
  std::vector<int64_t> layers;  // indices into the traced layers (forward order); empty: all
  analysis::RolloutOptions rollout;
  analysis::RankOptions rank;
  double mask_threshold = -1.0;      // < 0: each castling layer's own threshold option
  int64_t map_max_tokens = 1 << 16;  // refuse per-image maps above this many tokens
  // Class-specific explanations: the class (-1: each image's top-1), Grad-CAM's target
  // module ("" = the model's default) and its switches.
  int64_t explain_class = -1;
  std::string gradcam_target;
  analysis::GradCamOptions gradcam;

  // The forward options these analyses need (traces; layer outputs for spectra).
  ForwardOptions forward_options() const;
  nlohmann::json to_json() const;  // every setting, for the sidecar
};

// Receives each per-image array (maps, rollout, anchor assignments) as it is computed.
using ArraySink = std::function<void(const analysis::Array&)>;

class AnalysisSession {
 public:
  AnalysisSession(AnalysisSettings settings, ArraySink sink);

  // Adds one image's forward result (batch 1, run with settings.forward_options()).
  // `image_tag` names its arrays. Throws std::runtime_error when the model has no
  // attention layer or a requested layer index does not exist.
  void add(const std::string& image_tag, const ForwardResult& result);

  // The class-specific explanations of one image (gradcam, gradrollout): each runs its own
  // forward with autograd on `model` for the preprocessed image (1, 3, H, W), on the
  // device the model is on. Call after add() for the same image. A failure (a layer too
  // large for the explicit form, an unknown target) becomes a warning, as in add().
  void explain(const std::string& image_tag, Backbone& model, const at::Tensor& image);
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

 private:
  struct Layer {
    int64_t index;
    std::string path;
    const attention::AttentionTrace* trace;
  };
  std::vector<Layer> select_layers(const ForwardResult& result) const;
  void add_maps(const std::string& tag, const std::vector<Layer>& layers);
  void add_rollout(const std::string& tag, const std::vector<Layer>& layers);
  void add_rank(const std::vector<Layer>& layers);
  void add_spectra(const std::vector<Layer>& layers, const ForwardResult& result);
  void add_anchors(const std::string& tag, const std::vector<Layer>& layers);
  void add_mask(const std::vector<Layer>& layers);
  void add_locality(const std::vector<Layer>& layers);
  void accumulate(const analysis::Table& per_image);
  void warn(const std::string& message);
  // Runs one analysis; a TraceQueryError (a query or size the traces refuse), an
  // AttentionError (the explicit form's token limit) or a ModelError (a class or target
  // the model does not have) becomes a warning instead of failing the image.
  void guarded(const std::string& analysis, const std::function<void()>& body);
  void add_sum(const std::string& name, const std::string& caption,
               const std::vector<std::string>& axes, const at::Tensor& value);

  AnalysisSettings settings_;
  ArraySink sink_;
  int64_t images_ = 0;
  nlohmann::json layers_json_;
  std::vector<std::string> warnings_;
  std::vector<std::string> table_order_;
  std::map<std::string, analysis::TableAccumulator> tables_;
  struct Sum {
    std::string caption;
    std::vector<std::string> axes;
    at::Tensor total;  // float64 CPU
    int64_t count = 0;
  };
  std::vector<std::string> sum_order_;
  std::map<std::string, Sum> sums_;
  std::map<std::string, analysis::SpectrumAccumulator> spectra_;
  std::vector<std::string> spectra_order_;
};

// The names the session gives its per-image arrays, for whoever looks them up (the GUI,
// the report): "L03", "q7-3", and the stem "maps__<image>__L03__q7-3" of a layer's
// "__heads" and "__fused" maps for a query ("cls" etc. for a prefix token).
std::string layer_tag(int64_t layer);
std::string grid_query_tag(int64_t y, int64_t x);
std::string map_array_stem(const std::string& image_tag, int64_t layer,
                           const std::string& query_tag);
// "anchors__<image>__L03": a layer's "__hard" and "__soft" anchor assignments.
std::string anchor_array_stem(const std::string& image_tag, int64_t layer);

// "gradcam__<image>" and "gradrollout__<image>": an image's explanation maps.
std::string explanation_array_name(const std::string& analysis, const std::string& image_tag);

// An Array from a CPU/GPU tensor (copied to float32 CPU).
analysis::Array to_array(const at::Tensor& t, std::string name, std::vector<std::string> axes,
                         std::string caption = "");

}  // namespace attnlab::models
