// One batch's embeddings at any block (issue 70, `attnlab embed`): the block's output pooled
// as the model's head pools it (its readout features: the class token, the class and
// distillation tokens side by side, or the mean of the grid tokens — before the final
// norm, so every block is read the same way), its class token, the mean of its grid tokens
// (prefix tokens — cls, dist, registers — left out), or every grid token (for patch
// retrieval). Beside them the model's own logits, for predictions. One forward per batch
// with lens_forward_options() (every block's output kept, no attention traces).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/attention/token_layout.h"
#include "models/backbone.h"

namespace attnlab::models {

enum class EmbeddingPool { head, cls, mean, tokens };

// "head", "cls", "mean", "tokens"; std::invalid_argument naming the word otherwise.
EmbeddingPool parse_embedding_pool(const std::string& text);
std::string embedding_pool_name(EmbeddingPool pool);

struct EmbeddingBatch {
  std::vector<std::string> blocks;  // every block the forward ran, in order
  std::string block;                // the block read (blocks[layer])
  int64_t layer = 0;                // its index among them
  // (B, F) float32 on the CPU; with EmbeddingPool::tokens (B, H·W, F), grid row-major.
  at::Tensor features;
  attention::TokenLayout layout;  // the block output's tokens (tokens pool: its grid)
  at::Tensor logits;              // the forward's (B, K) on the CPU, float32
  OutputKind output_kind = OutputKind::classes;
  std::vector<LayerTrace> traces;  // every attention layer's, with trace_attention
};

// `images` (B, 3, H, W) preprocessed for the model, on its device. `layer` indexes the
// forward's blocks (negative: from the end, −1 = the last). Throws ModelError for a layer
// outside the model, a pool the block's tokens cannot give (no class token, merged tokens
// of ToMe, a family that does not read blocks out), naming the block.
// With `trace_attention`, the forward also keeps every attention layer's trace (the head
// statistics of `attnlab embed --heads`).
EmbeddingBatch embed_batch(Backbone& model, const at::Tensor& images, int64_t layer,
                           EmbeddingPool pool, bool trace_attention = false);

}  // namespace attnlab::models
