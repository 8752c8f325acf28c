// The model options of the commands: `--model PRESET|CHECKPOINT [--preset P]
// [--config JSON] [--checkpoint FILE] [--key K] [--random-init]`, read into a
// session::ModelRequest and resolved by the session library (app/session/model_source.h);
// a contradictory or incomplete set is a UsageError (exit code 2).
#pragma once

#include "app/cli/cli_common.h"
#include "app/session/model_source.h"

namespace attnlab::cli {

using session::load_chosen_model;
using session::ModelChoice;
using session::ReadyModel;
using session::with_checkpoint;

// Takes the options above from `args`. Throws UsageError for contradictory or missing ones.
ModelChoice take_model_choice(Args& args);
// session::config_for_checkpoint, its errors as UsageError.
nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path);
// session::model_entry_choice, its errors as UsageError.
ModelChoice model_entry_choice(const std::string& entry, const std::string& preset = "");

}  // namespace attnlab::cli
