// The relevance maps the faithfulness scoreboard scores (issue 27), each on the grid whose
// cells are perturbed: the first attention layer's (the patch grid of a ViT; LITv2's first
// HiLo stage; RAVLT's stage 1). Maps made on another grid (Grad-CAM on the last stage) are
// resampled onto it by area (analysis::resample_map).
//   cls          the last layer's attention row of the class token, mean over heads
//   rollout      attention rollout (default switches) of the class token, or for a model
//                without one the mean of the last layer's rows (its classifier pools them)
//   gradcam      Grad-CAM at the default target (models/gradcam_run.h)
//   gradrollout  gradient-weighted rollout (models/grad_rollout_run.h)
//   random       uniform noise, seeded per image (a baseline)
//   centre       a centre prior: minus the distance to the image centre (a baseline)
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/token_layout.h"
#include "models/backbone.h"
#include "models/faithfulness_run.h"

namespace attnlab::session {

const std::vector<std::string>& faithfulness_map_kinds();
// "cls,rollout,gradcam"; throws std::invalid_argument naming the known kinds.
std::vector<std::string> parse_faithfulness_maps(const std::string& list);

// One image prepared for scoring its maps: one traced forward (keeping each block's input)
// gives the prediction, the grid the cells are taken from (the first traced layer's grid
// part), the model's blocks (for the randomisation cascade) and the traces the cls and
// rollout maps read.
struct PreparedImage {
  models::ForwardResult forward;
  int64_t predicted = 0;
  attention::TokenLayout grid;
  std::vector<std::string> blocks;  // in forward order
};
// Throws std::invalid_argument for a model with no attention layer.
PreparedImage prepare_image(models::Backbone& model, const at::Tensor& image);

// The map of `kind` for `image` (1, 3, H, W) and class `cls` on `grid` (h, w) float32.
// `seed` seeds the random map; `traced`, when given, is this model's traced forward of this
// image (the cls and rollout maps read it instead of running one). Throws
// std::invalid_argument for a kind that does not apply to the model (cls without a class
// token), naming what to use instead.
at::Tensor faithfulness_map(models::Backbone& model, const at::Tensor& image,
                            const std::string& kind, int64_t cls,
                            const attention::TokenLayout& grid, uint64_t seed,
                            const models::ForwardResult* traced = nullptr);

struct ScoredMap {
  std::string kind;
  at::Tensor map;  // on the prepared grid
  models::PerturbationCurves curves;
};
// Every kind of `kinds` the model can make, its map scored against `baseline` with the
// predicted class as target and `reference` for the perturbation curves (what the
// `attnlab faithfulness` command and the registry's analysis share). A kind the model
// cannot make is passed to `skipped` with the reason and left out. `cancelled`, when given,
// is asked between batches of perturbed images (models::perturbation_curves); `on_kind`
// hears (kinds done, kinds) after each kind.
std::vector<ScoredMap> score_maps(
    models::Backbone& model, const at::Tensor& image, const PreparedImage& prepared,
    const std::vector<std::string>& kinds, int64_t reference, const at::Tensor& baseline,
    const models::PerturbationRequest& request, uint64_t seed,
    const std::function<void(const std::string& kind, const std::string& why)>& skipped,
    const std::function<bool()>& cancelled = {},
    const std::function<void(int64_t done, int64_t total)>& on_kind = {});

// The model-randomisation check (Adebayo et al.): copies of the model with its top block,
// its top half and every block re-initialised (cascading from the top, seeded), and the
// Spearman correlation of each map with the same kind's map from each copy. A map that
// stays correlated (>= analysis::kRandomisationFlag) with every block re-initialised
// ignores the weights and is flagged.
struct RandomisedCopy {
  int64_t blocks = 0;  // top blocks re-initialised
  std::shared_ptr<models::Backbone> model;
};
// 1, half and all of `blocks` (duplicates removed).
std::vector<int64_t> cascade_levels(int64_t blocks);
// `blocks`: PreparedImage::blocks. Throws models::ModelError for a model that does not
// know its config (models::partly_reinitialised).
std::vector<RandomisedCopy> randomisation_cascade(models::Backbone& model,
                                                  const std::vector<std::string>& blocks,
                                                  uint64_t seed);
struct RandomisationScore {
  std::string kind;
  int64_t blocks = 0;
  bool every_block = false;  // the last level: all blocks re-initialised
  double spearman = 0;
};
// Each scored map against its kind's map (same class, grid and seed) from each copy.
std::vector<RandomisationScore> randomisation_scores(const std::vector<RandomisedCopy>& cascade,
                                                     const std::vector<ScoredMap>& scored,
                                                     const at::Tensor& image,
                                                     const PreparedImage& prepared, uint64_t seed);

}  // namespace attnlab::session
