// Linear CKA across the checkpoints of a training series (issue 26, "CKA to the final
// checkpoint"): one image's forwards of several models (checkpoints) give one joint HSIC_1
// matrix over all their traced layers (every layer's block output pooled onto the
// coarsest grid among them; core/analysis/cka.h); summed over images, each checkpoint's
// layer l is compared with layer l of the last one. The CLI's series pass and cross-model
// report sum it over an image set, the GUI's series view over its one image.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/analysis/table.h"
#include "models/backbone.h"

namespace attnlab::session {

struct JointLayerHsic {
  at::Tensor hsic;                           // (Σ L_m, Σ L_m) float64 on the CPU
  std::vector<std::vector<int64_t>> layers;  // traced-layer indices per model
  // The row of model m's layer l.
  int64_t row(size_t m, size_t l) const;
};

// forwards: one image each (batch index 0), run with traces and recorded outputs. Throws
// std::runtime_error when the coarsest grid has fewer than 4 cells.
JointLayerHsic joint_layer_hsic(const std::vector<const models::ForwardResult*>& forwards);

// One "cka_final" table per model (layer, cka): CKA of its layer l with layer l of the last
// model, from `sum` (a JointLayerHsic's matrix summed over `images` images).
std::vector<analysis::Table> cka_final_tables(const JointLayerHsic& sum, int64_t images);

}  // namespace attnlab::session
