// What the Projector tab's worker jobs hand back to the main thread (worker_results.h holds
// them in its variant): an embed folder read, or a projection computed, each naming the
// request it answers so that an answer to an older request is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/projector/embed_folder.h"

namespace attnlab::gui {

enum class ProjectionMethod { Pca, Tsne, Umap };

struct ProjectorLoaded {
  uint64_t request = 0;                     // ProjectorState::load_request
  std::shared_ptr<const EmbedFolder> data;  // null when it failed
  std::string error;
};

struct ProjectorProjected {
  uint64_t request = 0;  // ProjectorState::project_request
  ProjectionMethod method = ProjectionMethod::Pca;
  std::vector<float> xy;  // n × 2; empty when it failed
  std::string note;       // what was computed (explained variance, KL divergence, ...)
  std::string error;
  double seconds = 0.0;
};

}  // namespace attnlab::gui
