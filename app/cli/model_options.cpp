// take_model_choice; see model_options.h.
#include "app/cli/model_options.h"

namespace attnlab::cli {

ModelChoice take_model_choice(Args& args) {
  session::ModelRequest r;
  r.model = args.take_option("--model");
  r.preset = args.take_option("--preset");
  r.config_path = args.take_option("--config");
  r.checkpoint = args.take_option("--checkpoint");
  r.key = args.take_option("--key");
  r.random_init = args.take_flag("--random-init");
  r.class_names_path = args.take_option("--class-names");
  try {
    return session::choose_model(r);
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path) {
  try {
    return session::config_for_checkpoint(checkpoint, preset, config_path);
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

ModelChoice model_entry_choice(const std::string& entry, const std::string& preset) {
  try {
    return session::model_entry_choice(entry, preset);
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace attnlab::cli
