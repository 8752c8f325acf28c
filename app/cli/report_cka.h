// `attnlab report` with the cka analysis and two or more models: linear CKA between the
// layers of every pair of models on the same images. The session analyses one model at a
// time, so this is a pass of its own: per image every model's forward (its own
// preprocessing), every traced layer's block output pooled by area onto the coarsest grid
// among all the models' layers, one joint HSIC_1 matrix over all their layers (core/
// analysis/cka.h), summed over the images. Memory: one image's features of every model.
#pragma once

#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "core/analysis/table.h"
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

// Throws std::runtime_error when no image works for every model.
CrossModelCka cross_model_cka(const std::vector<ModelChoice>& choices,
                              const std::vector<ImageInput>& images, const c10::Device& device);

}  // namespace attnlab::cli
