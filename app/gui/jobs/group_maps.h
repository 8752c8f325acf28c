// The mean attention map of a group of images (the Projector's selection against the
// rest, issue 70): each image through the model with its attention traced, the map the
// Maps tab shows by default — the last traced layer, the mean over its heads, of the
// rollout's default query (session::rollout_query: the cls token where the last layer has
// one, else the first grid's centre cell mapped to the last grid) — averaged over the
// images. Worker side: no GL, no ImGui.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab::gui {

struct LoadedModel;

struct MeanAttentionMap {
  std::vector<float> map;  // rows × cols, row-major; empty when no image could be read
  int rows = 0, cols = 0;
  int images = 0;                   // the images averaged
  std::vector<std::string> failed;  // "file: why" for those left out
  std::string query;                // "cls", "centre" ...: the query token's tag
  std::string layer;                // the last traced layer's path
};

// The mean map over `files` (each read, preprocessed as the model wants, one forward with
// traces). `progress(done)` after each image; `cancelled()` polled between images (true:
// the function returns what it has). An image of another grid than the first's is left out.
MeanAttentionMap mean_attention_map(LoadedModel& model, const std::vector<std::string>& files,
                                    const std::function<bool()>& cancelled = {},
                                    const std::function<void(int64_t)>& progress = {});

}  // namespace attnlab::gui
