// What the Projector tab's worker jobs hand back to the main thread (worker_results.h holds
// them in its variant): an embed folder read, or a projection computed, each naming the
// plot it is for (the main one or the comparison) and the request it answers so that an
// answer to an older request is dropped; or the group's mean attention maps.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/jobs/group_maps.h"
#include "app/gui/projector/embed_folder.h"

namespace attnlab::gui {

enum class ProjectorPlot { Main, Compare };

struct ProjectorLoaded {
  ProjectorPlot plot = ProjectorPlot::Main;
  uint64_t request = 0;                     // ProjectorSide::load_request
  std::shared_ptr<const EmbedFolder> data;  // null when it failed
  std::string error;
};

struct ProjectorProjected {
  ProjectorPlot plot = ProjectorPlot::Main;
  uint64_t request = 0;   // ProjectorSide::project_request
  std::string method;     // "pca", "tsne", "umap" (session::parse_projection_method's)
  std::vector<float> xy;  // n × 2; empty when it failed
  std::string note;       // what was computed (explained variance, KL divergence, ...)
  nlohmann::json info;    // session::EmbeddingProjection::info
  std::string error;
  double seconds = 0.0;
};

// The selection's and the rest's mean attention maps (projector_groups.h).
struct ProjectorGroupMapsDone {
  uint64_t request = 0;  // ProjectorGroupMaps::request
  MeanAttentionMap group, rest;
  std::string error;
};

}  // namespace attnlab::gui
