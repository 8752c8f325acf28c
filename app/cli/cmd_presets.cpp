// `attnlab presets`: every official model preset — what it is, its architecture, its
// evaluation preprocessing and where its weights come from.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "models/model_config.h"
#include "models/presets.h"

namespace attnlab::cli {

int cmd_presets(Args args, const GlobalOptions&) {
  if (!args.positionals().empty()) throw UsageError("presets takes no arguments");
  for (const auto& p : models::presets()) {
    std::printf("%s — %s\n", p.name.c_str(), p.description.c_str());
    std::printf("  arch: %s; preprocessing: %s\n  weights: %s\n",
                models::get_string(p.config, "arch", "model", "?").c_str(),
                p.preprocessing.describe().c_str(), p.weights.c_str());
  }
  return kExitOk;
}

}  // namespace attnlab::cli
