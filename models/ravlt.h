// RAVLT (SPEC §2.3, arch "ravlt"): its config, the backbone factory the registry calls,
// and the configs of the released sizes (ravlt_t/s/b/l) whose state-dict layouts are the
// shared manifests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

struct RavltConfig {
  std::vector<int64_t> embed_dims, depths, num_heads;  // one entry per stage
  double mlp_ratio = 3.5;                              // FFN hidden = int(mlp_ratio · C)
  int64_t projection = 1024;                           // channels of the head's 1×1 conv
  int64_t num_classes = 1000;
  // Per stage: "rala" or "softmax" (the registered "softmax_rope"; "softmax_rope" is
  // accepted too).
  std::vector<std::string> stage_attention;
  bool layerscale = true;                   // gamma_1 / gamma_2 per block
  std::vector<int64_t> input_hw{224, 224};  // informational: the convs run at any H, W
};

// Reads and checks the keys above; throws ModelError naming the key and the problem.
RavltConfig parse_ravlt_config(const Json& config);

// The config (JSON, arch "ravlt") of a released size: "ravlt_t", "ravlt_s", "ravlt_b",
// "ravlt_l". Throws ModelError for any other name.
Json ravlt_official_config(const std::string& name);
std::vector<std::string> ravlt_official_names();

std::shared_ptr<Backbone> make_ravlt(const Json& config);

}  // namespace attnlab::models
