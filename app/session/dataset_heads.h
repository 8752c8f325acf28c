// Dataset-level head statistics (issue 70 goal 5; `attnlab embed --heads`): for every image,
// layer and head how sharply the head attends (core/analysis/head_sharpness.h: the mean
// normalised entropy over queries, and the grid query whose row is sharpest), kept as three
// (N, L, H) arrays beside the embeddings, and the extremes table drawn from them: per layer
// and head the k images where it attends most sharply and most broadly — the
// "top-activating" examples a dictionary-feature browser shows per feature.
//   head_entropy.npy            (N, L, H) float32  mean H / ln K over the queries
//   head_sharpest_patch.npy     (N, L, H) int64    grid index y·W + x of the sharpest row
//   head_sharpest_entropy.npy   (N, L, H) float32  that row's H / ln K
//   head_output_rank.npy        (N, L, H) float32  effective rank exp(H(σ/Σσ)) of the head's
//                                                  output (tokens × head dim; core/analysis/
//                                                  rank.h): how many directions it spans
//   heads.json                  the layers: path, mechanism, head_count, grid height and width
//   head_extremes.csv           layer,path,head,kind,rank,row,image,entropy,patch_y,patch_x
// Layers with fewer heads than the most (the hierarchical families' early stages) are padded
// with NaN and −1.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "models/backbone.h"

namespace attnlab::session {

inline constexpr const char* kHeadEntropyNpy = "head_entropy.npy";
inline constexpr const char* kHeadPatchNpy = "head_sharpest_patch.npy";
inline constexpr const char* kHeadPatchEntropyNpy = "head_sharpest_entropy.npy";
inline constexpr const char* kHeadRankNpy = "head_output_rank.npy";
inline constexpr const char* kHeadsJson = "heads.json";
inline constexpr const char* kHeadExtremesCsv = "head_extremes.csv";

class HeadStatsCollector {
 public:
  // Image b of a forward's traces (every attention layer, in order). The first image fixes
  // the layers; a later one with other layers is a std::runtime_error.
  void add(const std::vector<models::LayerTrace>& traces, int64_t b);
  int64_t images() const { return images_; }
  // The four arrays and heads.json into `dir`.
  void write(const std::string& dir) const;

 private:
  nlohmann::json layers_ = nlohmann::json::array();
  int64_t max_heads_ = 0;
  int64_t images_ = 0;
  std::vector<float> mean_, patch_value_, rank_;
  std::vector<int64_t> patch_;
};

struct HeadExtreme {
  int64_t layer = 0, head = 0, rank = 0, row = 0;
  std::string path, kind;  // kind: "sharpest" or "broadest"
  double entropy = 0;
  int64_t patch_y = -1, patch_x = -1;
};

// From `dir`'s arrays and heads.json: per layer and head the k rows of lowest mean entropy
// ("sharpest", lowest first) and the k of highest ("broadest", highest first); ties go to the
// earlier row. Throws std::runtime_error naming a missing or inconsistent file.
std::vector<HeadExtreme> head_extremes(const std::string& dir, int64_t k);

// head_extremes as head_extremes.csv in `dir`, with the rows' image names (images.csv).
// Returns the rows written.
int64_t write_head_extremes(const std::string& dir, int64_t k);

// A sharded run's head arrays concatenated in the folders' order and heads.json checked
// equal across them (the single run's files), then head_extremes.csv. No-op when the first
// folder has no heads.json.
void concatenate_head_stats(const std::vector<std::string>& dirs, const std::string& out_dir,
                            int64_t k);

}  // namespace attnlab::session
