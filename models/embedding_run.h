// One batch's embeddings at any block (issue 70, `attnlab embed`): the block's output pooled
// as the model's head pools it (its readout features: the class token, the class and
// distillation tokens side by side, or the mean of the grid tokens — before the final
// norm, so every block is read the same way), its class token, the mean of its grid tokens
// (prefix tokens — cls, dist, registers — left out), or every grid token (for patch
// retrieval). Beside them the model's own logits, for predictions. One forward per batch
// with lens_forward_options() (every block's output kept, no attention traces).
// Features other than the output (issue 70 goal 4): the block's attention KEYS or QUERIES,
// read from its attention layer's trace (the forward then keeps the traces): per grid token
// the concatenation over the trace's heads of its k (or q) vector, as the mechanism mixed
// with it (after its feature map or normalisation, unscaled), pooled the same ways but
// "head" (the model's head reads the block output, not its keys).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/attention/attention_trace.h"
#include "core/attention/token_layout.h"
#include "models/backbone.h"

namespace attnlab::models {

enum class EmbeddingPool { head, cls, mean, tokens };

// "head", "cls", "mean", "tokens"; std::invalid_argument naming the word otherwise.
EmbeddingPool parse_embedding_pool(const std::string& text);
std::string embedding_pool_name(EmbeddingPool pool);

enum class EmbeddingFeatures { output, keys, queries };

// "output", "keys", "queries"; std::invalid_argument naming the word otherwise.
EmbeddingFeatures parse_embedding_features(const std::string& text);
std::string embedding_features_name(EmbeddingFeatures features);
// The pool when none is asked for: head for the output, mean for keys and queries.
EmbeddingPool default_embedding_pool(EmbeddingFeatures features);

struct EmbeddingBatch {
  std::vector<std::string> blocks;  // every block the forward ran, in order
  std::string block;                // the block read (blocks[layer])
  int64_t layer = 0;                // its index among them
  // (B, F) float32 on the CPU; with EmbeddingPool::tokens (B, H·W, F), grid row-major.
  // Keys/queries: F = heads·d, head by head (the trace's head order).
  at::Tensor features;
  // The block output's tokens (tokens pool: its grid); keys/queries: the attention layer's.
  attention::TokenLayout layout;
  std::string attention;  // keys/queries: the attention layer read ("blocks.3.attn")
  at::Tensor logits;      // the forward's (B, K) on the CPU, float32
  OutputKind output_kind = OutputKind::classes;
  std::vector<LayerTrace> traces;  // every attention layer's, with trace_attention
};

// `images` (B, 3, H, W) preprocessed for the model, on its device. `layer` indexes the
// forward's blocks (negative: from the end, −1 = the last). Throws ModelError for a layer
// outside the model, a pool the block's tokens cannot give (no class token, merged tokens
// of ToMe, a family that does not read blocks out), naming the block.
// With `trace_attention`, the forward also keeps every attention layer's trace (the head
// statistics of `attnlab embed --heads`). With keys or queries it keeps them anyway, and
// also throws ModelError, naming the block and the mechanism, for pool head, a block
// without a traced attention layer, and keys that are not the layer's tokens one to one
// (pooled, sampled, or not kept) or queries not kept for every grid token.
EmbeddingBatch embed_batch(Backbone& model, const at::Tensor& images, int64_t layer,
                           EmbeddingPool pool, bool trace_attention = false,
                           EmbeddingFeatures features = EmbeddingFeatures::output);

// The (B, N, heads·d) key (or query) vectors of every layout token of one attention trace
// (prefix tokens first, then the grid row-major), float32 on the trace's device. `who`
// names the layer in errors. Throws ModelError as embed_batch says.
at::Tensor attention_token_vectors(const attention::AttentionTrace& trace, bool keys,
                                   const std::string& who);

}  // namespace attnlab::models
