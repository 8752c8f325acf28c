// The model options of the commands: `--model PRESET|CHECKPOINT [--preset P]
// [--config JSON] [--checkpoint FILE] [--key K] [--random-init] [--class-names FILE]
// [--img-size H[,W] [--pos-interpolation bicubic|bicubic_antialias]] [--merge R]`, read into a
// session::ModelRequest and resolved by the session library (app/session/model_source.h);
// a contradictory or incomplete set is a UsageError (exit code 2).
#pragma once

#include "app/cli/cli_common.h"
#include "app/session/model_source.h"
#include "core/data/image_dataset.h"

namespace attnlab::cli {

using session::ModelChoice;
using session::ReadyModel;
using session::with_checkpoint;

// --text (repeatable), --text-file FILE (one prompt per line) and --prompt-template
// (repeatable): a whole CLIP's words (session::ModelRequest::prompts, prompt_templates),
// for every command that takes a model and for the report.
void take_text_options(Args& args, std::vector<std::string>& prompts,
                       std::vector<std::string>& templates);

// "384" → {384, 384}; "224,320" or "224x320" → {224, 320}. UsageError otherwise.
std::vector<int64_t> parse_img_size(const std::string& text);
// --merge R (token merging: config key tome_r) as R >= 0, or -1 when absent; also read by
// infer, which takes its model from --config/--checkpoint itself. UsageError otherwise.
int64_t take_merge(Args& args);
// The options above as a request, not yet resolved (a resolution sweep resolves it once
// per input size).
session::ModelRequest take_model_request(Args& args, bool hash_checkpoint = false);
// Takes the options above from `args`. Throws UsageError for contradictory or missing ones.
// hash_checkpoint: the command writes the checkpoint's SHA-256 (ModelRequest).
ModelChoice take_model_choice(Args& args, bool hash_checkpoint = false);
// session::config_for_checkpoint, its errors as UsageError.
nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path, const std::string& key = "");
// session::choose_model of a filled request, its errors as UsageError (a recognised
// checkpoint is said on stderr, as by take_model_choice).
ModelChoice choose_request(const session::ModelRequest& request);
// session::load_chosen_model, its warnings (non-finite weights) said on stderr.
ReadyModel load_ready_model(const ModelChoice& choice, const runtime::ComputeTarget& target);
// A labelled set's class count against the model's (num_classes): std::runtime_error
// naming `spec` when the set has more classes than the model predicts.
void check_dataset_classes(const std::string& spec, int64_t dataset_classes,
                           const ReadyModel& ready);
// An in-memory labelled set (fashion-mnist:...) for the model: read at its img_size, its
// images' size and classes checked; std::runtime_error naming the mismatch otherwise.
data::ImageDataset load_dataset_for(const std::string& spec, const ReadyModel& ready);
// session::model_entry_choice, its errors as UsageError.
ModelChoice model_entry_choice(const std::string& entry, const std::string& preset = "");

}  // namespace attnlab::cli
