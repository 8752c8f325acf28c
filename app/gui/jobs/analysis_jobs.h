// The GUI's compute, run on the ComputeWorker (never on the main thread): load a model,
// analyse one image with it (forward with traces, the registry's image analyses, top-5),
// and answer a query click from the traces already recorded with the core analysis
// functions (no new forward pass and no analysis session, so a click on a 4096-token
// image costs O(layers * tokens * d), not a forward).
// Results are immutable snapshots; the main thread only reads their plain parts
// (pictures, Tables/Arrays, text), the traces go back to the worker for the next query.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/session/analysis_options.h"
#include "app/session/predictions.h"
#include "core/analysis/table.h"
#include "core/image/image_edits.h"
#include "viz/rgba_image.h"

namespace at {
class Tensor;
}
namespace attnlab::models {
struct ForwardResult;
}

namespace attnlab::gui {

struct LoadedModel;  // the backbone, its preprocessing and config (worker side)

// What the user set for one model beside its file, as the CLI's --preset, --img-size and
// --class-names: the architecture of a checkpoint that does not say it, the input size to
// run at, and a class-names file.
struct ModelOptions {
  std::string preset;
  std::vector<int64_t> img_size;  // {H, W}; empty: the model's own size
  std::string class_names_path;   // one name per line or a JSON list/map; "": the model's own
  int64_t merge = -1;             // token merging (ToMe) r per block, as --merge; -1: none
  // A whole CLIP's text prompts, as --text: its classes, each prompt's map (the prompts tab).
  std::vector<std::string> prompts;
  std::string device = "cpu";  // where it runs, as --device names it (the device picker)
  std::string dtype = "fp32";  // the forward's precision, as --dtype names it (the picker)
};

struct ModelInfo {
  std::string name;         // file stem or preset
  std::string describe;     // one line: architecture, mechanism, parameters, preprocessing
  std::string command_arg;  // what `attnlab report --models` takes to load it again
  std::string mechanism;    // the attention it runs (models::config_mechanism; "": none)
  bool mergeable = false;   // a ViT-family arch (vit, tome_vit): token merging applies
  bool reads_text = false;  // a whole CLIP (models/image_text.h): it takes text prompts
  // How attnlab decided what a config-less checkpoint is (session::ModelChoice::recognition:
  // the preset, or the config read from its shapes and what was assumed); "" when the file
  // or the user said it.
  std::string recognition;
  std::string preprocessing;        // image::Preprocessing::describe(): how its picture is made
  std::vector<int64_t> input_size;  // {H, W} of its input; empty when the image decides
  ModelOptions options;             // what it was loaded with
  int64_t classes = 0;              // the classes it predicts (0: not known before an analysis)
};

struct LayerInfo {
  int index = 0;  // position among the traced layers
  std::string path, mechanism;
  int rows = 0, cols = 0, heads = 0, stage = 0;
  int window = 0;        // side of the local attention windows on this grid (HiLo), 0: none
  int window_shift = 0;  // where their tiling starts on both axes (Swin's shifted windows)
  int window_w = 0;      // their width when not square (Swin's Wh×Ww: window = Wh); 0: window
  std::vector<std::string> prefix;  // prefix token names ("cls", "dist")
};

using session::Prediction;

// The tag the GUI gives the image it analyses (its arrays' ResultKey::image).
constexpr const char* kImageTag = "img";

// One model on one image: the picture it saw, its layers, its top-5, and the statistics
// of every analysis on this image (for the analysis tabs and the export).
struct ImageAnalysis {
  viz::RgbaImage picture;  // the preprocessed input, as 8-bit RGB
  std::vector<LayerInfo> layers;
  std::vector<Prediction> top5;          // empty when the output is an embedding
  std::vector<std::string> class_names;  // the model's, when a few (a CLIP's prompts); else empty
  int64_t embedding = 0;                 // the embedding's size when the output is one (DINO, CLIP)
  std::vector<analysis::Table> tables;
  std::vector<analysis::Array> arrays;  // spectra, singular values, anchors (image arrays)
  double seconds = 0;
  std::string options_key;  // image_options_key() of the options it was computed with
  std::string edits_key;    // image::edits_text() of the what-if edits of its picture
  // The traces and the preprocessed image, for the worker's next query or explanation:
  // typed handles the main thread only passes along (it never includes their headers).
  std::shared_ptr<const models::ForwardResult> forward;
  std::shared_ptr<const at::Tensor> input;
};

// The query of a map: a grid cell of the first layer, or a prefix token by name.
struct MapQuery {
  int row = -1, col = -1;            // -1: the grid's centre
  int grid_rows = 0, grid_cols = 0;  // the grid row/col were picked on (0: the model's own)
  std::string prefix;                // non-empty: this prefix token ("cls")
  std::string tag() const;           // "q7-3", "cls", "centre"
};

// The rollout switches of `options` (those the rollout analysis declares: --fusion
// --residual --discard --no-renormalize) as a tag: part of the rollout's cache key.
std::string rollout_tag(const session::OptionValues& options);
// The values of the options the image analyses read (outlier factor, mask threshold,
// rank tolerance, ...): an analysis computed with other values is computed again.
std::string image_options_key(const session::OptionValues& options);

// Every layer's per-head maps of one query and the head fusions: one attention row per
// layer and head, so fast even for thousands of tokens.
struct QueryMaps {
  MapQuery query;
  std::vector<analysis::Array> heads;  // per traced layer: [heads, rows, cols] (empty Array
                                       // where the layer has no such token)
  std::vector<analysis::Array> fused;  // per traced layer: [3, rows, cols] mean, max, min
  // Patch similarity (MapKind::Similarity): per traced layer the cosine of the
  // query's `facet` features with every grid token's, [rows, cols] (empty Array where the
  // mechanism keeps no such facet per token: `similarity_notes` says why).
  std::string facet;
  std::vector<analysis::Array> similarity;
  std::vector<std::string> similarity_notes;
  double seconds = 0;  // to answer it from the traces
};

// The rollout of one query: a vector carried back through every layer's attention, so
// it costs a pass over each layer's keys per head; computed only when it is shown.
struct QueryRollout {
  MapQuery query;
  // The query the rollout is of: the cls token for the default query where the last layer
  // has one (session::rollout_query), else `query` on the first layer's grid.
  MapQuery answered;
  analysis::Array map;  // [rows, cols] of the first layer's grid (empty: see note)
  std::string note;     // why there is none
  double seconds = 0;
};

// Builds and loads a model from a checkpoint, model folder or config (as `--model` of the
// CLI) with `options`. With an input size or a class-names file it also runs the model
// once on a blank picture, so a size the model cannot take or a names file that does not
// name its classes fails here, before the model replaces another. Throws with a readable
// message (models::RecognitionError lists the nearest presets of an unrecognised file).
std::shared_ptr<LoadedModel> load_model(const std::string& model_arg, ModelInfo* info,
                                        const ModelOptions& options = {});

// Loads `image_path`, applies the what-if `edits` to the picture the model sees
// (session::edited_input), runs the model with traces and every analysis. Throws on
// failure. `cancelled` (the job's Cancel) is asked between the analyses and inside the
// long ones (faithfulness, heads), which then throw session::AnalysisCancelled; `progress`
// hears how far the long ones are.
std::shared_ptr<const ImageAnalysis> analyse_image(
    LoadedModel& model, const std::string& image_path, const session::OptionValues& options = {},
    const std::vector<image::EditOp>& edits = {}, const std::function<bool()>& cancelled = {},
    const std::function<void(int64_t done, int64_t total)>& progress = {});

// AnchorFormer: the soft assignment over the anchors of layout token `token` (prefix
// tokens first) in traced layer `layer`, of `head` or the mean over heads (head < 0);
// empty when that layer has no anchors.
std::vector<float> anchor_distribution(const ImageAnalysis& a, int layer, int token, int head);

// The maps of `query` from an analysis's traces. Throws on failure.
// `facet` ("tokens", "queries", "keys", "values"): what the similarity maps compare.
std::shared_ptr<const QueryMaps> query_maps(const ImageAnalysis& a, const MapQuery& query,
                                            const std::string& facet = "tokens");
// The rollout of `query` from the same traces with the rollout switches of `options` (the
// defaults are `attnlab analyze`'s). Throws on failure.
std::shared_ptr<const QueryRollout> query_rollout(const ImageAnalysis& a, const MapQuery& query,
                                                  const session::OptionValues& options);

}  // namespace attnlab::gui
