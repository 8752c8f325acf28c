// A resolution sweep (issue 26): the same statistics of one model at a list of input sizes.
// The model is resolved once per size as `--img-size S` would (a ViT's position embedding
// resampled, the preprocessing cropping to S), the images go through the analyses at each
// size, and every table becomes "<table>_sizes" with the size as its x ("size_index",
// "input", "img_size"). Used by `analyze-sizes` and `report --img-sizes`.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/session/checkpoint_series.h"
#include "app/session/results.h"

namespace attnlab::cli {

// "224,288,384" → square sizes; two or more. Throws UsageError.
std::vector<int64_t> parse_img_sizes(const std::string& text);

// The analyses a sweep measures by default: every series analysis whose statistic is one
// of a model's images (AnalysisInfo::over_sizes), comma-separated.
std::string size_sweep_analyses();

struct SizeSweep {
  session::SeriesResults results;  // "<table>_sizes" tables; name "<tag>_sizes", x img_size
  // "sizes": tokens of the first and last traced layer and seconds per image at each size.
  analysis::Table costs;
  nlohmann::json per_size = nlohmann::json::array();  // layers, seconds, images per size
  std::vector<std::string> warnings;
  bool any_failed = false;  // some image failed at some size
  // A shard's sessions, one per size (AnalysisSession::save_state), with keep_state.
  nlohmann::json states = nlohmann::json::array();
};

// A sweep from its shards (analyze-sizes' and report's merge): per size, each shard's saved
// session ({"dir", "seconds", "session"} in `states`, its files under `root`) absorbed in
// the shards' order, then the sweep's tables as analyse_sizes builds them.
struct SweepShard {
  std::string root;       // the folder the states' "dir"s are in
  nlohmann::json states;  // SizeSweep::states of that shard
};
SizeSweep merge_sweep(const session::AnalysisSettings& settings, const std::vector<int64_t>& sizes,
                      const std::string& tag, const std::vector<SweepShard>& shards);

// Runs the sweep of `request` (its img_size is replaced by each size) with progress on
// stderr; with a `state_dir`, a shard's: each size's session state saved under it
// (size<i>/) and in `states`. Throws std::runtime_error when no image can be analysed at a size,
// and what choose_request / load_ready_model throw for a size the model cannot take.
SizeSweep analyse_sizes(const session::ModelRequest& request, const std::string& tag,
                        const std::vector<int64_t>& sizes, const std::vector<ImageInput>& images,
                        const session::AnalysisSettings& settings,
                        const runtime::ComputeTarget& target, const std::string& state_dir = "");

}  // namespace attnlab::cli
