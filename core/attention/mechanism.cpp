// AttentionMechanism: input checks, the traced/untraced entry points, head reshapes.
#include "core/attention/mechanism.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::attention {

double MechanismConfig::option(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) throw AttentionError("missing attention option '" + name + "'");
  return it->second;
}

int64_t MechanismConfig::int_option(const std::string& name) const {
  return static_cast<int64_t>(std::llround(option(name)));
}

AttentionMechanism::AttentionMechanism(std::string name, MechanismConfig config)
    : name_(std::move(name)), config_(std::move(config)) {
  if (config_.dim <= 0 || config_.heads <= 0 || config_.dim % config_.heads != 0)
    throw AttentionError(name_ + ": dim " + std::to_string(config_.dim) +
                         " must be a positive multiple of heads " + std::to_string(config_.heads));
}

void AttentionMechanism::check_input(const at::Tensor& tokens, const TokenLayout& layout) const {
  auto shape = [&] {
    std::string s = "(";
    for (int64_t i = 0; i < tokens.dim(); ++i)
      s += (i ? ", " : "") + std::to_string(tokens.size(i));
    return s + ")";
  };
  if (layout.height <= 0 || layout.width <= 0)
    throw AttentionError(name_ + ": the token layout has an empty grid (" + layout.describe() +
                         ")");
  if (tokens.dim() != 3)
    throw AttentionError(name_ + ": expected tokens (B, N, C), got " + shape());
  if (tokens.size(1) != layout.tokens())
    throw AttentionError(name_ + ": " + std::to_string(tokens.size(1)) + " tokens do not match " +
                         layout.describe() + " (" + std::to_string(layout.tokens()) + " tokens)");
  if (tokens.size(2) != config_.dim)
    throw AttentionError(name_ + ": tokens have " + std::to_string(tokens.size(2)) +
                         " channels, the mechanism was built for " + std::to_string(config_.dim));
  if (!tokens.is_floating_point()) throw AttentionError(name_ + ": tokens must be floating point");
}

void AttentionMechanism::require_pure_grid(const TokenLayout& layout) const {
  if (layout.num_prefix() > 0)
    throw AttentionError(name_ + " works on a pure token grid, but the layout has prefix tokens (" +
                         layout.describe() + ")");
}

// While a MacCounter is active the operations of one forward are one attention layer.
int64_t AttentionMechanism::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

at::Tensor AttentionMechanism::forward(const at::Tensor& tokens, const TokenLayout& layout) {
  check_input(tokens, layout);
  runtime::MacLayerScope layer(name_, runtime::counting_macs() ? parameter_count() : 0);
  return run(tokens, layout, nullptr);
}

TracedOutput AttentionMechanism::forward_traced(const at::Tensor& tokens, const TokenLayout& layout,
                                                const TraceOptions& options) {
  check_input(tokens, layout);
  if (options.explicit_attention && layout.tokens() > kExplicitMaxTokens)
    throw AttentionError(name_ + ": the explicit attention form needs an N" + "\xC3\x97" +
                         "N matrix per head, but the layer has " + std::to_string(layout.tokens()) +
                         " tokens (" + layout.describe() + "), above the limit of " +
                         std::to_string(kExplicitMaxTokens) + "; use a smaller input image");
  TraceRequest request;
  request.options = options;
  runtime::MacLayerScope layer(name_, runtime::counting_macs() ? parameter_count() : 0);
  at::Tensor out = run(tokens, layout, &request);
  if (!request.trace) throw AttentionError(name_ + " produced no trace");
  return {out, std::move(request.trace)};
}

void AttentionMechanism::init_trace(AttentionTrace& trace, const at::Tensor& tokens,
                                    const TokenLayout& layout, const TraceRequest& request) const {
  trace.keeps_history = request.options.explicit_attention;
  trace.mechanism = name_;
  trace.layout = layout;
  trace.batch = tokens.size(0);
  trace.heads = config_.heads;
  trace.head_dim = config_.head_dim();
  // The capabilities the mechanism declares (none for one built outside the registry).
  if (const MechanismInfo* info = find_mechanism(name_)) trace.capabilities = info->capabilities;
}

at::Tensor AttentionMechanism::explicit_mix(AttentionTrace& trace) const {
  trace.explicit_rows.clear();
  std::vector<at::Tensor> heads;
  for (int64_t h = 0; h < trace.heads; ++h) {
    const HeadGroup& g = trace.group_of(h);
    std::vector<at::Tensor> rows;
    for (int64_t b = 0; b < trace.batch; ++b)
      rows.push_back(trace.matrix(b, h, std::numeric_limits<int64_t>::max()));
    // The output is computed from the stored (B, N, K) tensor itself, so that gradients
    // with respect to it are defined.
    trace.explicit_rows.push_back(at::stack(rows));
    heads.push_back(at::matmul(trace.explicit_rows.back(), g.v.select(1, h - g.first_head)));
  }
  return at::stack(heads, 1);
}

HeadGroup all_heads_group(const AttentionTrace& trace, int64_t heads, const at::Tensor& q,
                          const at::Tensor& k, const at::Tensor& v) {
  const TokenLayout& layout = trace.layout;
  HeadGroup g;
  g.name = "all";
  g.num_heads = heads;
  g.keys = {layout.num_prefix(), layout.height, layout.width, 1};
  g.query_grid_w = layout.width;
  g.q = trace.keep(q);
  g.k = trace.keep(k);
  g.v = trace.keep(v);
  return g;
}

at::Tensor split_heads(const at::Tensor& x, int64_t heads) {
  const int64_t b = x.size(0), n = x.size(1), c = x.size(2);
  return x.reshape({b, n, heads, c / heads}).permute({0, 2, 1, 3});
}

HeadQkv split_qkv(const at::Tensor& qkv, int64_t heads) {
  auto parts = qkv.chunk(3, -1);
  return {split_heads(parts[0], heads), split_heads(parts[1], heads), split_heads(parts[2], heads)};
}

at::Tensor merge_heads(const at::Tensor& x) {
  const int64_t b = x.size(0), h = x.size(1), n = x.size(2), d = x.size(3);
  return x.permute({0, 2, 1, 3}).reshape({b, n, h * d});
}

}  // namespace attnlab::attention
