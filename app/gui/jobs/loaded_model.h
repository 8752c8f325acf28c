// A model the GUI has loaded: how it was chosen, the backbone with its config, and its
// class names (filled at the first analysis, when the number of classes is known). Only
// compute jobs on the worker's models lane touch it, one at a time.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "app/session/model_source.h"

namespace attnlab::gui {

struct LoadedModel {
  session::ModelChoice choice;
  session::ReadyModel ready;
  std::vector<std::string> class_names;
  // Where the model runs: its inputs go there, its traces stay there (results leave it
  // only as the analyses' host tables and arrays, and where they are drawn).
  c10::Device device{c10::kCPU};
};

}  // namespace attnlab::gui
