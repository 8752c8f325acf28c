// `attnlab report` with the cka analysis and two or more models: linear CKA between the
// layers of every pair of models on the same images. The session analyses one model at a
// time, so this is a pass of its own: per image every model's forward (its own
// preprocessing), every traced layer's block output pooled by area onto the coarsest grid
// among all the models' layers, one joint HSIC_1 matrix over all their layers (core/
// analysis/cka.h), summed over the images. Memory: one image's features of every model.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "app/cli/analyze_common.h"
#include "app/session/cka_series.h"
#include "core/analysis/table.h"
#include "core/image/image_edits.h"
#include "viz/figures/cka.h"

namespace attnlab::cli {

// Up to this many models the figure shows every pair; beyond, the first model against each.
inline constexpr size_t kAllPairsUpTo = 4;

struct CrossModelCka {
  analysis::Table table;               // "cka_models": model_a, layer_a, model_b, layer_b, cka
  std::vector<viz::CkaPair> pairs;     // the pairs the figure shows (kAllPairsUpTo)
  int64_t images = 0;
  std::vector<std::string> failed;     // images left out (unreadable, or a model failed)
};

// The joint HSIC_1 matrix of every traced layer of every model (model by model, layers
// in forward order), summed over the images that worked for every model.
struct JointHsic {
  session::JointLayerHsic sum;  // its matrix summed over the images
  // The same sum, compensated (independent of the images' order: what a report shard saves
  // and a merge adds, core/analysis/compensated_sum.h); sum.hsic is its value.
  analysis::CompensatedSum total;
  int64_t images = 0;
  std::vector<std::string> failed;
};
// `label` names the pass in progress and error lines. `edits` (the run's --edit) are
// applied to every image before each model sees it, in that model's own token units, as
// the session's image loop does (analyse_images). Throws std::runtime_error when no image
// works for every model.
JointHsic joint_hsic(const std::vector<ModelChoice>& choices, const std::vector<ImageInput>& images,
                     const runtime::ComputeTarget& target, const std::string& label,
                     const std::vector<image::EditOp>& edits = {});

// The table and figure pairs of CKA between the models `tags` from their joint sum.
CrossModelCka cross_model_cka_of(const std::vector<std::string>& tags, const JointHsic& joint);

// Throws std::runtime_error when no image works for every model.
CrossModelCka cross_model_cka(const std::vector<ModelChoice>& choices,
                              const std::vector<ImageInput>& images,
                              const runtime::ComputeTarget& target,
                              const std::vector<image::EditOp>& edits = {});

}  // namespace attnlab::cli
