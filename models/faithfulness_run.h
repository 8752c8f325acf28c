// The model side of the faithfulness scoreboard (issue 27; the arithmetic is
// core/analysis/faithfulness.h): the perturbed images of one image and one relevance map
// go through the model in batches (plain forwards, no traces, no autograd), giving the
// deletion, insertion and positive/negative perturbation curves; and the model
// randomisation check rebuilds the model with its top blocks re-initialised.
//
// A cell of the map's grid covers the pixels the nearest-neighbour upsampling of the grid
// to the image gives it; "removing" a cell replaces those pixels with the baseline's, for
// every family alike (a ViT's patch token then sees the baseline's patch; a hierarchical
// model has no token to drop).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

enum class PerturbBaseline {
  Blur,  // the image blurred: Gaussian, σ = the longer side / 16, reflected at the borders
  Mean,  // each channel's mean over the image
  Zeros  // 0 in the model's input space (the preprocessing's mean colour)
};
// "blur", "mean", "zeros"; throws ModelError naming the choices for another name.
PerturbBaseline parse_perturb_baseline(const std::string& name);
const char* perturb_baseline_name(PerturbBaseline b);

// image (1, 3, H, W) preprocessed → the baseline (1, 3, H, W).
at::Tensor baseline_image(const at::Tensor& image, PerturbBaseline baseline);

struct PerturbationRequest {
  double step = 0.05;  // the fraction of cells changed per step
  int64_t batch = 32;  // perturbed images per forward
  uint64_t seed = 0;   // the order of equal cells (analysis::relevance_order)
};

struct PerturbationCurves {
  int64_t cells = 0;
  std::vector<int64_t> counts;  // cells changed after each step (0 first, all last)
  // Target class probability after each step: cells removed most relevant first
  // (deletion), cells put into the baseline most relevant first (insertion).
  std::vector<double> deletion, insertion;
  // 1 where the top-1 is the reference class after each step (0 otherwise): cells removed
  // most relevant first (positive) and least relevant first (negative).
  std::vector<double> positive, negative;
  double auc_deletion = 0, auc_insertion = 0, auc_positive = 0, auc_negative = 0;
};

// map: (h, w) on the grid the cells are taken from; `cls` the class whose probability the
// deletion and insertion curves follow, `reference` the class the perturbation curves
// compare the top-1 with (the label, or the unperturbed prediction). `cancelled`, when
// given, is asked between batches (ModelError "cancelled" when it says so).
PerturbationCurves perturbation_curves(Backbone& model, const at::Tensor& image,
                                       const at::Tensor& baseline, const at::Tensor& map,
                                       int64_t cls, int64_t reference,
                                       const PerturbationRequest& request = {},
                                       const std::function<bool()>& cancelled = {});

// A copy of `model` (rebuilt from its config, Backbone::config_text) whose blocks in
// `reinitialise` (state-dict paths, as ForwardResult::block_inputs names them) carry fresh
// random weights from `seed`, and every other parameter and buffer the trained model's.
// Throws ModelError for a model that does not know its config.
std::shared_ptr<Backbone> partly_reinitialised(Backbone& model,
                                               const std::vector<std::string>& reinitialise,
                                               uint64_t seed);

}  // namespace attnlab::models
