// AttentionTrace: argument checks and the mechanism-independent parts of row queries.
#include "core/attention/attention_trace.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnlab::attention {

void AttentionTrace::check_batch_head(int64_t b, int64_t head) const {
  if (b < 0 || b >= batch)
    throw TraceQueryError("image " + std::to_string(b) + " is out of range: the trace holds " +
                          std::to_string(batch));
  if (head < 0 || head >= heads)
    throw TraceQueryError("head " + std::to_string(head) + " is out of range: " + mechanism +
                          " has " + std::to_string(heads) + " heads");
}

const HeadGroup& AttentionTrace::group_of(int64_t head) const {
  for (const auto& g : groups)
    if (g.contains(head)) return g;
  throw TraceQueryError("head " + std::to_string(head) + " belongs to no head group of " +
                        mechanism);
}

int64_t AttentionTrace::query_index(const HeadGroup& group, int64_t token) const {
  if (token < 0 || token >= layout.tokens())
    throw TraceQueryError("query token " + std::to_string(token) +
                          " is out of range: the layer has " + std::to_string(layout.tokens()) +
                          " tokens (" + layout.describe() + ")");
  if (layout.is_prefix(token)) return token;
  const int64_t g = token - layout.num_prefix();
  return layout.num_prefix() + (g / layout.width) * group.query_grid_w + g % layout.width;
}

const at::Tensor& AttentionTrace::internal(const std::string& name) const {
  auto it = internals.find(name);
  if (it != internals.end()) return it->second;
  std::string have;
  for (const auto& [k, v] : internals) have += (have.empty() ? "" : ", ") + k;
  throw TraceQueryError("the " + mechanism + " trace has no '" + name +
                        "' (it has: " + (have.empty() ? "nothing" : have) + ")");
}

at::Tensor AttentionTrace::rows(int64_t b, int64_t head, const at::Tensor& queries) const {
  check_batch_head(b, head);
  const HeadGroup& group = group_of(head);
  const at::Tensor tokens = queries.to(at::kCPU, at::kLong).reshape({-1}).contiguous();
  const int64_t n = layout.tokens();
  // Layout token -> row of the group's query grid (differs only on padded grids), checked
  // in the same pass (a map asks for one row per head and layer: no tensor ops for it).
  at::Tensor q_rows = at::empty_like(tokens);
  const int64_t* in = tokens.data_ptr<int64_t>();
  int64_t* out = q_rows.data_ptr<int64_t>();
  const bool padded = group.query_grid_w != layout.width;
  for (int64_t i = 0; i < tokens.numel(); ++i) {
    if (in[i] < 0 || in[i] >= n)
      throw TraceQueryError("query tokens must lie in [0, " + std::to_string(n) + ") for " +
                            layout.describe());
    out[i] = padded ? query_index(group, in[i]) : in[i];
  }
  return compute_rows(b, group, head - group.first_head, q_rows.to(group.q.device()));
}

AttentionRow AttentionTrace::row(int64_t b, int64_t query, int64_t head) const {
  AttentionRow r;
  r.head = head;
  r.query = query;
  r.weights = rows(b, head, at::full({1}, query, at::kLong))[0];
  r.keys = group_of(head).keys;
  return r;
}

std::vector<AttentionRow> AttentionTrace::rows_all_heads(int64_t b, int64_t query) const {
  std::vector<AttentionRow> out;
  out.reserve(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h) out.push_back(row(b, query, h));
  return out;
}

at::Tensor AttentionTrace::matrix(int64_t b, int64_t head, int64_t max_elements) const {
  check_batch_head(b, head);
  const int64_t n = layout.tokens();
  const int64_t k = group_of(head).keys.size();
  if (n * k > max_elements)
    throw TraceQueryError("the full attention matrix of " + mechanism + " would have " +
                          std::to_string(n) + "\xC3\x97" + std::to_string(k) +
                          " entries, more than the limit of " + std::to_string(max_elements) +
                          "; query rows instead");
  return rows(b, head, at::arange(n, at::kLong));
}

namespace {

// Key index of every grid token of `layout` in `keys` (length H·W), on `device`. Tokens no
// grid key covers (PVT's reduction floors H and W to multiples of its cell) get the index
// keys.size(), one past the last key: callers give that index a zero.
at::Tensor grid_token_keys(const KeySpace& ks, const TokenLayout& layout, c10::Device device) {
  if (ks.prefix != layout.num_prefix())
    throw TraceQueryError("the key space does not cover " + layout.describe());
  const auto opts = at::TensorOptions().dtype(at::kLong).device(device);
  at::Tensor ys = at::arange(layout.height, opts).div(ks.cell, "floor");
  at::Tensor xs = at::arange(layout.width, opts).div(ks.cell, "floor");
  at::Tensor key = ks.prefix + ys.unsqueeze(1) * ks.key_w + xs.unsqueeze(0);
  const bool uncovered = ks.key_h * ks.cell < layout.height || ks.key_w * ks.cell < layout.width;
  if (uncovered)
    key = at::where((ys.unsqueeze(1) < ks.key_h) & (xs.unsqueeze(0) < ks.key_w), key,
                    at::full_like(key, ks.size()));
  return key.reshape({-1});
}

// Keys that are the layout's tokens themselves, in token order (a ViT's softmax).
bool key_space_is_tokens(const KeySpace& ks, const TokenLayout& layout) {
  return ks.cell == 1 && ks.prefix == layout.num_prefix() && ks.key_h == layout.height &&
         ks.key_w == layout.width;
}

bool keys_are_tokens(const HeadGroup& g, const TokenLayout& layout) {
  return key_space_is_tokens(g.keys, layout) && g.query_grid_w == layout.width;
}

}  // namespace

at::Tensor rows_on_tokens(const at::Tensor& rows, const KeySpace& ks, const TokenLayout& layout) {
  // Keys that are the tokens themselves (a ViT's softmax): the rows are already on tokens.
  if (key_space_is_tokens(ks, layout)) return rows;
  const at::Tensor key = grid_token_keys(ks, layout, rows.device());
  // A zero column for the tokens no key covers (index ks.size()).
  const at::Tensor padded = at::constant_pad_nd(rows, {0, 1});
  at::Tensor grid = padded.index_select(1, key);
  if (ks.cell > 1) grid = grid / static_cast<double>(ks.cell * ks.cell);
  return at::cat({rows.slice(1, 0, ks.prefix), grid}, 1);
}

at::Tensor row_on_tokens(const AttentionRow& row, const TokenLayout& layout) {
  return rows_on_tokens(row.weights.unsqueeze(0), row.keys, layout)[0];
}

at::Tensor tokens_to_keys(const at::Tensor& x, const KeySpace& ks, const TokenLayout& layout) {
  const int64_t p = ks.prefix;
  // grid_token_keys counts the prefix keys in; `grid` holds the grid keys only.
  const at::Tensor key = grid_token_keys(ks, layout, x.device()) - p;
  // One spare row collects the tokens no key covers, then is dropped.
  at::Tensor grid = at::zeros({ks.key_h * ks.key_w + 1, x.size(1)}, x.options());
  grid.index_add_(0, key, x.slice(0, p));
  grid = grid.slice(0, 0, ks.key_h * ks.key_w);
  if (ks.cell > 1) grid = grid / static_cast<double>(ks.cell * ks.cell);
  return at::cat({x.slice(0, 0, p), grid}, 0);
}

at::Tensor AttentionTrace::operand(const char* who, const HeadGroup& g, const at::Tensor& x) const {
  if (x.dim() < 1 || x.dim() > 2 || x.size(0) != layout.tokens())
    throw TraceQueryError(std::string(who) + ": the operand must have one row per token (" +
                          std::to_string(layout.tokens()) + "), got " +
                          std::to_string(x.dim() ? x.size(0) : 0) + " rows");
  return (x.dim() == 1 ? x.unsqueeze(1) : x).to(g.q.device(), g.q.scalar_type());
}

at::Tensor AttentionTrace::rows_times(int64_t b, int64_t head, const at::Tensor& on_keys) const {
  const int64_t n = layout.tokens();
  at::Tensor out = at::empty({n, on_keys.size(1)}, on_keys.options());
  for (int64_t t0 = 0; t0 < n; t0 += kApplyChunkRows) {
    const int64_t t1 = std::min(n, t0 + kApplyChunkRows);
    out.slice(0, t0, t1).copy_(at::matmul(rows(b, head, at::arange(t0, t1, at::kLong)), on_keys));
  }
  return out;
}

at::Tensor AttentionTrace::apply(int64_t b, int64_t head, const at::Tensor& x) const {
  check_batch_head(b, head);
  const HeadGroup& g = group_of(head);
  const at::Tensor xs = operand("apply", g, x);
  at::Tensor out;
  if (keys_are_tokens(g, layout)) out = compute_apply(b, g, head - g.first_head, xs, false);
  if (!out.defined()) out = rows_times(b, head, tokens_to_keys(xs, g.keys, layout));
  return x.dim() == 1 ? out.squeeze(1) : out;
}

at::Tensor AttentionTrace::apply_transposed(int64_t b, int64_t head, const at::Tensor& y) const {
  check_batch_head(b, head);
  const HeadGroup& g = group_of(head);
  const at::Tensor ys = operand("apply_transposed", g, y);
  at::Tensor out;
  if (keys_are_tokens(g, layout)) out = compute_apply(b, g, head - g.first_head, ys, true);
  if (!out.defined()) {
    const int64_t n = layout.tokens();
    at::Tensor acc = at::zeros({g.keys.size(), ys.size(1)}, ys.options());
    for (int64_t t0 = 0; t0 < n; t0 += kApplyChunkRows) {
      const int64_t t1 = std::min(n, t0 + kApplyChunkRows);
      acc += at::matmul(rows(b, head, at::arange(t0, t1, at::kLong)).t(), ys.slice(0, t0, t1));
    }
    out = rows_on_tokens(acc.t(), g.keys, layout).t().contiguous();
  }
  return y.dim() == 1 ? out.squeeze(1) : out;
}

at::Tensor AttentionTrace::head_output(int64_t b, int64_t head) const {
  check_batch_head(b, head);
  if (head_outputs.defined()) return head_outputs[b][head];
  const HeadGroup& g = group_of(head);
  const int64_t hg = head - g.first_head;
  const at::Tensor v = g.v[b][hg];  // already in the head's key space
  if (keys_are_tokens(g, layout)) {
    at::Tensor fast = compute_apply(b, g, hg, v, false);
    if (fast.defined()) return fast;
  }
  return rows_times(b, head, v);
}

}  // namespace attnlab::attention
