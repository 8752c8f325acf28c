// embed_batch: a block's output pooled into one vector per image (or kept per grid token).
// The block's token layout comes from the model's stage shapes: stage S for a block under
// "layers.S." (the hierarchical families' state-dict layout), stage 0 otherwise.
// Keys and queries come from the trace of the block's attention layer ("<block>.attn"):
// its head groups in head order, each group's q (rows through query_index, which maps a
// layout token onto a padded query grid) or k (rows of a key space that must be the layer's
// tokens one to one: cell 1, the same prefix, a grid at least the layer's, padding beyond).
#include "models/embedding_run.h"

#include <ATen/ATen.h>

#include <algorithm>
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

// The trace of the attention layer inside `block`: "<block>.attn", else the one traced
// module under "<block>.".
const LayerTrace& embedding_block_trace(const std::vector<LayerTrace>& traces,
                                        const std::string& block) {
  for (const auto& t : traces)
    if (t.path == block + ".attn") return t;
  const LayerTrace* found = nullptr;
  int under = 0;
  for (const auto& t : traces)
    if (t.path.rfind(block + ".", 0) == 0) {
      found = &t;
      ++under;
    }
  if (under == 1 && found->trace) return *found;
  throw ModelError("embed: " + block +
                   (under == 0 ? " has no traced attention layer"
                               : " has " + std::to_string(under) +
                                     " traced attention layers, none named " + block + ".attn") +
                   ": its keys and queries cannot be read (use --features output)");
}

}  // namespace

EmbeddingFeatures parse_embedding_features(const std::string& text) {
  if (text == "output") return EmbeddingFeatures::output;
  if (text == "keys") return EmbeddingFeatures::keys;
  if (text == "queries") return EmbeddingFeatures::queries;
  throw std::invalid_argument("--features wants output, keys or queries, not '" + text + "'");
}

std::string embedding_features_name(EmbeddingFeatures features) {
  switch (features) {
    case EmbeddingFeatures::output:
      return "output";
    case EmbeddingFeatures::keys:
      return "keys";
    case EmbeddingFeatures::queries:
      return "queries";
  }
  return "?";
}

EmbeddingPool default_embedding_pool(EmbeddingFeatures features) {
  return features == EmbeddingFeatures::output ? EmbeddingPool::head : EmbeddingPool::mean;
}

at::Tensor attention_token_vectors(const attention::AttentionTrace& trace, bool keys,
                                   const std::string& who) {
  const attention::TokenLayout& layout = trace.layout;
  const int64_t n = layout.tokens(), p = layout.num_prefix();
  const std::string what = keys ? "keys" : "queries";
  const std::string instead = keys ? "use --features queries or output" : "use --features output";
  const std::string head = who + " (" + trace.mechanism + "): ";
  std::vector<const attention::HeadGroup*> groups;
  for (const auto& g : trace.groups) groups.push_back(&g);
  std::sort(groups.begin(), groups.end(),
            [](const attention::HeadGroup* a, const attention::HeadGroup* b) {
              return a->first_head < b->first_head;
            });
  if (groups.empty())
    throw ModelError("embed: " + head + "its trace keeps no " + what + ": " + instead);
  int64_t next = 0;
  std::vector<at::Tensor> parts;
  for (const attention::HeadGroup* g : groups) {
    const std::string whose =
        groups.size() > 1 ? "the '" + g->name + "' heads' " + what : "its " + what;
    if (g->first_head != next)
      throw ModelError("embed: " + head + "its trace's head groups do not tile its heads (" +
                       g->name + " starts at head " + std::to_string(g->first_head) + ")");
    next += g->num_heads;
    const at::Tensor& m = keys ? g->k : g->q;
    if (!m.defined() || m.dim() != 4 || m.size(1) != g->num_heads)
      throw ModelError("embed: " + head + whose +
                       " are not kept per head and token in its trace: no per-patch vector; " +
                       instead);
    std::vector<int64_t> rows(static_cast<size_t>(n));
    if (keys) {
      const attention::KeySpace& ks = g->keys;
      if (ks.cell != 1)
        throw ModelError("embed: " + head + whose + " are pooled " + std::to_string(ks.cell) + "x" +
                         std::to_string(ks.cell) + ": keys have no per-patch vector; " + instead);
      if (ks.prefix != p || ks.key_h < layout.height || ks.key_w < layout.width ||
          m.size(2) != ks.size())
        throw ModelError("embed: " + head + whose + " (" + std::to_string(m.size(2)) + ", on a " +
                         std::to_string(ks.key_h) + "x" + std::to_string(ks.key_w) +
                         " grid) are not the layer's tokens (" + layout.describe() +
                         ") one to one: keys have no per-patch vector; " + instead);
      for (int64_t i = 0; i < n; ++i)
        rows[size_t(i)] =
            i < p ? i : p + ((i - p) / layout.width) * ks.key_w + (i - p) % layout.width;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        rows[size_t(i)] = trace.query_index(*g, i);
        if (rows[size_t(i)] >= m.size(2))
          throw ModelError("embed: " + head + whose + " (" + std::to_string(m.size(2)) +
                           ") do not cover the layer's tokens (" + layout.describe() +
                           "): not every grid token has a query; " + instead);
      }
    }
    const at::Tensor index = at::tensor(rows, at::kLong).to(m.device());
    const at::Tensor picked = m.index_select(2, index).to(at::kFloat);  // (B, h, N, d)
    parts.push_back(picked.permute({0, 2, 1, 3}).reshape({m.size(0), n, -1}));
  }
  if (next != trace.heads)
    throw ModelError("embed: " + head + "its trace's head groups hold " + std::to_string(next) +
                     " of its " + std::to_string(trace.heads) + " heads");
  return at::cat(parts, 2);
}

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
                           EmbeddingPool pool, bool trace_attention, EmbeddingFeatures features) {
  const at::NoGradGuard no_grad;
  const bool attention = features != EmbeddingFeatures::output;
  if (attention && pool == EmbeddingPool::head)
    throw ModelError(
        "embed: --pool head reads the model's head, which takes the block output, "
        "not its " +
        embedding_features_name(features) + ": use --pool mean, cls or tokens");
  ForwardOptions options = lens_forward_options();
  options.trace_attention = trace_attention || attention;
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
  if (attention) {
    const LayerTrace& lt = embedding_block_trace(e.traces, e.block);
    e.attention = lt.path;
    e.layout = lt.trace->layout;
    const at::Tensor v =
        attention_token_vectors(*lt.trace, features == EmbeddingFeatures::keys, lt.path);
    const int64_t p = e.layout.num_prefix();
    at::Tensor f;
    if (pool == EmbeddingPool::cls) {
      if (p == 0 || e.layout.prefix.front() != "cls")
        throw ModelError("embed: " + lt.path + " has no class token (" + e.layout.describe() +
                         "): use --pool mean or tokens");
      f = v.select(1, 0);
    } else if (pool == EmbeddingPool::mean) {
      f = v.slice(1, p).mean(1);  // float32 already
    } else {
      f = v.slice(1, p);
    }
    e.features = f.detach().to(at::kCPU, at::kFloat).contiguous();
    if (!trace_attention) e.traces.clear();
    return e;
  }
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
