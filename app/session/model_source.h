// Which model to run and how to load it, shared by the CLI and the GUI: a preset name
// gives the config and the paper's preprocessing (weights from a checkpoint, or random
// with random_init, which is said loudly); a checkpoint file gives the weights, its
// config from a config file, a preset or its own safetensors metadata. Everything needed
// to describe the run is kept for the sidecar: config, preprocessing, checkpoint path and
// SHA-256. No command-line parsing here: the CLI fills a ModelRequest from its options.
#pragma once

#include <nlohmann/json.hpp>

#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/image/preprocess.h"
#include "core/runtime/precision.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"

namespace attnlab::session {

// A contradictory or incomplete request (the CLI reports it as a usage error). The
// message names the options as the command line spells them.
struct ModelChoiceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the user asked for (the CLI's --model, --preset, --config, --checkpoint, --key,
// --random-init).
struct ModelRequest {
  std::string model;  // a preset name or a checkpoint file
  std::string preset;
  std::string config_path;
  std::string checkpoint;
  std::string key;
  bool random_init = false;
  std::string class_names_path;   // a names file (predictions.h: read_class_names); "": none
  std::vector<int64_t> img_size;  // {H, W} to run at (--img-size); empty: the model's own
  std::string pos_interpolation = "bicubic";  // a ViT's pos_embed resampling at img_size
  // Token merging (--merge R): ToMe's r tokens merged away in every block, as the config
  // key tome_r (models/token_merging.h; the ViT family only); -1: as the config says.
  int64_t merge = -1;
  // A model that reads text (CLIP, models/image_text.h) given class names becomes a
  // zero-shot classifier of them (models/zero_shot_head.h), each class's prompts made of
  // these templates ("{}" where the name goes); empty: CLIP's "a photo of a {}.".
  std::vector<std::string> prompt_templates;
  // Text prompts (--text, --text-file): the classes of such a model, each used as written
  // (the template "{}"); not with class_names_path.
  std::vector<std::string> prompts;
  // The run writes the checkpoint's SHA-256 (a sidecar): hash the file from the moment it
  // is named, so the hash runs beside the parsing instead of beside the forward passes.
  bool hash_checkpoint = false;
};

struct ModelChoice {
  std::string model_arg;   // what --model said
  std::string preset;      // preset name when one was used
  std::string checkpoint;  // weights file ("" with random init)
  std::string key;         // container key
  bool random_init = false;
  nlohmann::json config;
  image::Preprocessing preprocessing;
  std::string tag;  // for file names: preset or checkpoint stem
  // The user's class names (read when the model is chosen, so a bad file fails before
  // anything is written); empty: the config's, else the bundled lists.
  std::vector<std::string> class_names;
  std::string class_names_path;
  std::vector<std::string> prompt_templates;  // ModelRequest's; empty: the default
  // How a checkpoint with no config was recognised (checkpoint_recognition.h: the preset,
  // or the config read from its shapes and what was assumed); "" when it was not needed.
  std::string recognition;
  std::vector<int64_t> input_size;  // {H, W} when --img-size changed it
  // The checkpoint's tensors as recognition read them (null when it did not need to): the
  // first load_chosen_model of this checkpoint takes them instead of parsing the file a
  // second time, and leaves the pointer empty of tensors (copies of this choice share it;
  // a later load reads the file).
  std::shared_ptr<models::CheckpointWeights> read_weights;
  // ModelRequest::hash_checkpoint, and the hash of `checkpoint` it started (taken over by
  // load_chosen_model; with_checkpoint starts the next file's).
  bool hash_checkpoint = false;
  std::shared_future<std::string> checkpoint_sha256;
};

// The class names of a loaded model with `classes` classes: the user's file (which must
// name exactly that many; std::runtime_error otherwise), else the config's, else the
// bundled lists (predictions.h: class_names); empty when nothing names them.
std::vector<std::string> model_class_names(const ModelChoice& choice, const nlohmann::json& config,
                                           int64_t classes);

// A checkpoint's model config: config_path, else preset, else its safetensors metadata,
// else recognised from its keys and shapes (models/checkpoint_recognition.h; `key` picks
// the container entry). Throws ModelChoiceError for contradictory options and
// models::RecognitionError when nothing says or shows what the model is.
struct CheckpointConfig {
  nlohmann::json config;
  std::string preset;       // the preset given or recognised exactly; "" otherwise
  std::string recognition;  // Recognition::summary() when recognised; "" otherwise
  std::shared_ptr<models::CheckpointWeights> weights;  // when recognition read them
};
CheckpointConfig checkpoint_config(const std::string& checkpoint, const std::string& preset,
                                   const std::string& config_path, const std::string& key = "");
nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path, const std::string& key = "");

// Text prompts from one text: the pieces between `separator`s that are not blank, each
// without a trailing CR (a --text-file's lines, the GUI's prompt box, its script's '|').
std::vector<std::string> split_prompts(const std::string& text, char separator);

// Resolves a request. Throws ModelChoiceError for contradictory or missing parts.
ModelChoice choose_model(const ModelRequest& request);
// One entry of a model list (`report --models`, the GUI's open model): a checkpoint file
// (`preset` names its architecture when the file does not), or a model config .json file,
// which gives that model with untrained weights (random init; its tag ends in _random).
ModelChoice model_entry_choice(const std::string& entry, const std::string& preset = "");
// The request model_entry_choice resolves, for callers that add options to it (the GUI's
// per-model input size and class names).
ModelRequest model_entry_request(const std::string& entry, const std::string& preset = "");
// For a series: the same choice, but the checkpoint comes from each file.
ModelChoice with_checkpoint(ModelChoice base, const std::string& checkpoint);

struct ReadyModel {
  std::shared_ptr<models::Backbone> model;
  nlohmann::json config;    // as fitted to the weights
  nlohmann::json describe;  // arch, config, preset, checkpoint (sha256: see description())
  // Problems with the weights to say loudly (also in describe["warnings"]): tensors holding
  // NaN or Inf, whose outputs will not be finite.
  std::vector<std::string> warnings;
  // What loading made of the weights beyond them, one line each (also describe["notes"]):
  // a zero-shot head from the class names.
  std::vector<std::string> notes;
  // The checkpoint's SHA-256, hashed on a thread of its own at the lowest priority from
  // the moment the model was chosen (ModelRequest::hash_checkpoint) or else loaded.
  std::shared_future<std::string> checkpoint_sha256;

  // `describe` with the checkpoint's sha256 filled in (waits for the hash): for sidecars.
  nlohmann::json description() const;
};
// Builds and loads the model (eval mode) on `target.device`, its weights at target.dtype
// (runtime::select_target has checked this LibTorch runs that precision there). The
// non-finite check reads the weights as stored, before any cast. A model that reads text,
// given class names, gets its zero-shot head (ReadyModel::notes says so).
ReadyModel load_chosen_model(const ModelChoice& choice, const runtime::ComputeTarget& target);

}  // namespace attnlab::session
