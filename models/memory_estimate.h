// The peak memory of one forward pass, estimated before it runs, and the check against
// the process's memory budget (core/runtime/memory_budget.h) that Backbone::run makes, so
// that a forward which cannot fit (an --img-size giving 10⁵ tokens to softmax attention:
// hundreds of GB of scores) is refused with a message instead of exhausting the machine.
//
// The estimate adds, at the model's precision:
//   weights     every parameter and buffer;
//   input       the images, twice (the stem's unfolded copy);
//   kept        what outlives its layer: with traces, each layer's Q, K, V and output
//               (4·B·N·C) plus Castling's N×N scores when asked to keep them; with
//               recorded outputs, each block's outputs (3·B·N·C) and a softmax layer's
//               probabilities;
//   transient   the largest single layer's working set: 24·B·N·C of activations (qkv 3C,
//               the MLP's hidden before and after its activation, the residual, norms,
//               convolutions; calibrated on measured peaks) plus, at an attention layer,
//               twice its score matrices (attention::score_elements: before and after the
//               softmax).
// It is meant to tell a 2 GB forward from a 200 GB one, not to be exact: it errs on the
// high side (tests/models/memory_estimate_test.cpp compares it with measured peaks).
// A forward with gradients (training, Grad-CAM) keeps more than this for its backward.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/backbone.h"

namespace attnlab::models {

struct ForwardMemory {
  double weights = 0, input = 0, kept = 0, transient = 0;  // bytes
  std::string largest_layer;  // "layers.0.blocks.1.attn (56×56 grid, stage 0, softmax)"
  double largest_scores = 0;  // bytes of that layer's score matrices (both copies)
  double total() const { return weights + input + kept + transient; }
  // "weights 22 MB, kept 0 B, largest layer blocks.0.attn (…): 19 GB of which 18 GB scores"
  std::string describe() const;
};

// For `batch` images of height × width through `model` with `options`.
ForwardMemory estimate_forward_memory(const Backbone& model, int64_t batch, int64_t height,
                                      int64_t width, const ForwardOptions& options);

// Refused: the estimate is over the budget. A ModelError, so every command and the GUI
// report it as they report a model that cannot run.
struct MemoryBudgetError : ModelError {
  using ModelError::ModelError;
};

// Throws MemoryBudgetError naming the estimate, the budget and what to change when the
// forward of `images` (B, 3, H, W) on the CPU is estimated over the budget. Models on
// another device are checked only against a budget set explicitly (--max-memory), as the
// default is a share of RAM.
void check_forward_memory(const Backbone& model, const at::Tensor& images,
                          const ForwardOptions& options);

}  // namespace attnlab::models
