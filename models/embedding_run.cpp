// embed_batch: a block's output pooled into one vector per image (or kept per grid token).
// The block's token layout comes from the model's stage shapes: stage S for a block under
// "layers.S." (the hierarchical families' state-dict layout), stage 0 otherwise.
#include "models/embedding_run.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "core/nn/state_loading.h"
#include "models/lens_run.h"

namespace attnlab::models {
namespace {

int embedding_stage_index(const std::string& block) {
  const std::string prefix = "layers.";
  if (block.rfind(prefix, 0) != 0) return 0;
  const size_t dot = block.find('.', prefix.size());
  try {
    return std::stoi(block.substr(prefix.size(), dot - prefix.size()));
  } catch (const std::exception&) {
    return 0;
  }
}

// (B, N, C) tokens of the block output in the layout's order: NCHW outputs flattened.
at::Tensor embedding_output_tokens(const at::Tensor& out, const attention::TokenLayout& layout,
                         const std::string& block) {
  if (out.dim() == 4 && layout.num_prefix() == 0 && out.size(2) == layout.height &&
      out.size(3) == layout.width)
    return out.flatten(2).transpose(1, 2);
  if (out.dim() == 3 && out.size(1) == layout.tokens()) return out;
  throw ModelError(
      "embed: the output of " + block + " (" + nn::shape_string(out.sizes()) +
      ") does not hold the " + std::to_string(layout.tokens()) + " tokens of " + layout.describe() +
      (out.dim() == 3 && out.size(1) < layout.tokens() ? " (tokens merged away: use --pool head)"
                                                       : ""));
}

}  // namespace

EmbeddingPool parse_embedding_pool(const std::string& text) {
  if (text == "head") return EmbeddingPool::head;
  if (text == "cls") return EmbeddingPool::cls;
  if (text == "mean") return EmbeddingPool::mean;
  if (text == "tokens") return EmbeddingPool::tokens;
  throw std::invalid_argument("--pool wants head, cls, mean or tokens, not '" + text + "'");
}

std::string embedding_pool_name(EmbeddingPool pool) {
  switch (pool) {
    case EmbeddingPool::head:
      return "head";
    case EmbeddingPool::cls:
      return "cls";
    case EmbeddingPool::mean:
      return "mean";
    case EmbeddingPool::tokens:
      return "tokens";
  }
  return "?";
}

EmbeddingBatch embed_batch(Backbone& model, const at::Tensor& images, int64_t layer,
                           EmbeddingPool pool, bool trace_attention) {
  const at::NoGradGuard no_grad;
  ForwardOptions options = lens_forward_options();
  options.trace_attention = trace_attention;
  ForwardResult r = model.run(images, options);
  EmbeddingBatch e;
  e.blocks = forward_blocks(r);
  const auto count = static_cast<int64_t>(e.blocks.size());
  const int64_t index = layer < 0 ? count + layer : layer;
  if (index < 0 || index >= count)
    throw ModelError("embed: --layer " + std::to_string(layer) + ": the model has " +
                     std::to_string(count) + " blocks (0 to " + std::to_string(count - 1) +
                     ", or -1 for the last)");
  e.layer = index;
  e.block = e.blocks[size_t(index)];
  e.output_kind = r.output_kind;
  e.logits = r.logits.detach().to(at::kCPU, at::kFloat);
  e.traces = std::move(r.traces);
  const at::Tensor& out = r.outputs.at("out." + e.block);
  if (pool == EmbeddingPool::head) {
    e.features = model.readout_features(out).detach().to(at::kCPU, at::kFloat).contiguous();
    return e;
  }
  const auto stages = model.stage_shapes(images.size(2), images.size(3));
  const int stage = embedding_stage_index(e.block);
  if (stage >= int(stages.size()))
    throw ModelError("embed: " + model.arch() + " does not say the token layout of " + e.block +
                     " (use --pool head)");
  e.layout = stages[size_t(stage)].layout;
  const at::Tensor tokens = embedding_output_tokens(out, e.layout, e.block);
  const int64_t p = e.layout.num_prefix();
  at::Tensor f;
  if (pool == EmbeddingPool::cls) {
    if (p == 0 || e.layout.prefix.front() != "cls")
      throw ModelError("embed: " + e.block + " has no class token (" + e.layout.describe() +
                       "): use --pool mean or head");
    f = tokens.select(1, 0);
  } else if (pool == EmbeddingPool::mean) {
    // Mean in float32 at least: a bf16 sum of 196 tokens would lose ~8 bits.
    f = tokens.slice(1, p).to(at::kFloat).mean(1);
  } else {
    f = tokens.slice(1, p);
  }
  e.features = f.detach().to(at::kCPU, at::kFloat).contiguous();
  return e;
}

}  // namespace attnlab::models
