// The logit lens and the linear probes on the model side: every block's output read out as
// the model reads its last block's (Backbone::readout_logits, readout_features). The lens
// (nostalgebraist, "interpreting GPT: the logit lens", 2020) applies the model's own tail —
// final norm, pooling, head — to each block: for cls-pooled ViTs (DeiT, AnchorDeiT,
// Castling) the class token, for distilled ones both heads on the cls and dist tokens
// averaged, for mean-pooled ViTs (fc_norm) and Swin/LITv2/RAVLT the mean of the grid's
// tokens; the hierarchical families' earlier stages lie before a downsampling (a new basis,
// mostly another width) and are skipped, saying so. core/analysis/logit_lens.h turns the
// rows into statistics; the probes (core/analysis/linear_probe.h) train on the features
// instead, for every block, also of models without a classifier (DINO, DINOv2, CLIP).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/backbone.h"

namespace attnlab::models {

// What lens_logits and block_readout_features need of a forward: every block's output
// (record_block_outputs: no attention maps, no traced forwards) and the blocks in forward
// order (record_block_inputs, which keeps no extra tensor: a block's input is the previous
// block's output). A forward with record_outputs and traces (the session's) serves too.
ForwardOptions lens_forward_options();

// The blocks a forward ran, in order: its recorded block inputs' paths, else the blocks
// around its traced attention layers. Throws ModelError when it recorded neither, or did
// not record a block's output.
std::vector<std::string> forward_blocks(const ForwardResult& result);

struct LensLogits {
  std::vector<std::string> blocks;  // the blocks read out, in forward order
  std::vector<int64_t> depth;       // each one's index among all the forward's blocks
  int64_t total_blocks = 0;         // blocks the forward ran
  // (L, K) at the model's dtype on the CPU: row l = the tail applied to blocks[l]'s output;
  // the last row is the model's own logits (checked: see lens_logits).
  at::Tensor logits;
  std::vector<std::string> skipped;  // earlier stages' blocks, each with its width
};

// Image b of a forward run with lens_forward_options() (or with record_outputs and traces).
// Throws ModelError for a model without a classifier (an embedding), a family that does not
// read blocks out, a b outside the batch, and a last row that does not reproduce the
// forward's logits for image b (beyond 1e-2 of their largest magnitude: rounding of
// reduced-precision GEMMs of another batch size stays far below; a tail that differs from
// the forward's does not).
LensLogits lens_logits(Backbone& model, const ForwardResult& result, int64_t b);

struct BlockFeatures {
  std::string block;
  int64_t depth = 0;    // index among the forward's blocks
  at::Tensor features;  // (B, F) float64 on the CPU: readout_features of its output
};

// Every block's readout features for the whole batch, in forward order: the probes' input.
// Throws ModelError where the family does not read blocks out.
std::vector<BlockFeatures> block_readout_features(Backbone& model, const ForwardResult& result);

}  // namespace attnlab::models
