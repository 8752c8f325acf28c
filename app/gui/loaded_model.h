// A model the GUI has loaded: how it was chosen, the backbone with its config, and its
// class names (filled at the first analysis, when the number of classes is known). Only
// compute jobs on the worker's models lane touch it, one at a time.
#pragma once

#include <string>
#include <vector>

#include "app/session/model_source.h"

namespace attnlab::gui {

struct LoadedModel {
  session::ModelChoice choice;
  session::ReadyModel ready;
  std::vector<std::string> class_names;
};

}  // namespace attnlab::gui
