// AttentionTrace: argument checks and the mechanism-independent parts of row queries.
#include "core/attention/attention_trace.h"

#include <ATen/ATen.h>

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
  at::Tensor tokens = queries.to(at::kCPU, at::kLong).reshape({-1});
  const int64_t n = layout.tokens();
  if (tokens.numel() > 0 && (tokens.min().item<int64_t>() < 0 || tokens.max().item<int64_t>() >= n))
    throw TraceQueryError("query tokens must lie in [0, " + std::to_string(n) + ") for " +
                          layout.describe());
  // Layout token -> row of the group's query grid (differs only on padded grids).
  at::Tensor q_rows = tokens.clone();
  if (group.query_grid_w != layout.width) {
    auto* p = q_rows.data_ptr<int64_t>();
    for (int64_t i = 0; i < q_rows.numel(); ++i) p[i] = query_index(group, p[i]);
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

at::Tensor row_on_tokens(const AttentionRow& row, const TokenLayout& layout) {
  const KeySpace& ks = row.keys;
  if (ks.prefix != layout.num_prefix() || ks.key_h * ks.cell < layout.height ||
      ks.key_w * ks.cell < layout.width)
    throw TraceQueryError("the row's key space does not cover " + layout.describe());
  const auto dev = row.weights.device();
  at::Tensor ys = at::arange(layout.height, at::TensorOptions().dtype(at::kLong).device(dev));
  at::Tensor xs = at::arange(layout.width, at::TensorOptions().dtype(at::kLong).device(dev));
  at::Tensor key = ks.prefix + ys.div(ks.cell, "floor").unsqueeze(1) * ks.key_w +
                   xs.div(ks.cell, "floor").unsqueeze(0);
  at::Tensor grid = row.weights.index_select(0, key.reshape({-1}));
  if (ks.cell > 1) grid = grid / static_cast<double>(ks.cell * ks.cell);
  return at::cat({row.weights.slice(0, 0, ks.prefix), grid});
}

}  // namespace attnlab::attention
