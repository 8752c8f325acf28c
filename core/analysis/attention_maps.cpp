// Attention maps (SPEC §3): a query's implicit row for every head of a layer, spread over
// the layer's token grid (pooled keys share their weight among the tokens they cover) with
// the prefix tokens apart; head fusion; the rows of named prefix tokens; and one query's
// maps across all layers, the query mapped between stage grids by area.
#include "core/analysis/attention_maps.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <tuple>

namespace attnlab::analysis {

using attention::AttentionTrace;
using attention::TokenLayout;
using attention::TraceQueryError;

const char* head_fusion_name(HeadFusion f) {
  switch (f) {
    case HeadFusion::Mean:
      return "mean";
    case HeadFusion::Max:
      return "max";
    case HeadFusion::Min:
      return "min";
  }
  return "?";
}

HeadFusion parse_head_fusion(const std::string& name) {
  for (HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min})
    if (name == head_fusion_name(f)) return f;
  throw std::invalid_argument("unknown head fusion '" + name + "' (accepted: mean, max, min)");
}

int64_t token_for(const GridQuery& q, const TokenLayout& layout) {
  if (q.ref_h <= 0 || q.ref_w <= 0)
    throw std::invalid_argument("grid query: the reference grid " + std::to_string(q.ref_h) +
                                "\xC3\x97" + std::to_string(q.ref_w) + " is empty");
  if (q.y < 0 || q.y >= q.ref_h || q.x < 0 || q.x >= q.ref_w)
    throw TraceQueryError("grid query (" + std::to_string(q.y) + ", " + std::to_string(q.x) +
                          ") lies outside its " + std::to_string(q.ref_h) + "\xC3\x97" +
                          std::to_string(q.ref_w) + " reference grid");
  if (layout.height <= 0 || layout.width <= 0)
    throw TraceQueryError("grid query: the layer has no token grid (" + layout.describe() + ")");
  // The cell containing the reference cell's centre ((y + ½)/ref_h of the image height), in
  // integers so that a centre exactly on a border always falls the same way.
  const int64_t y = (2 * q.y + 1) * layout.height / (2 * q.ref_h);
  const int64_t x = (2 * q.x + 1) * layout.width / (2 * q.ref_w);
  return layout.token_at(y, x);
}

QueryMap query_map(const AttentionTrace& trace, int64_t b, int64_t query) {
  const TokenLayout& layout = trace.layout;
  const at::Tensor which = at::full({1}, query, at::kLong);
  std::vector<at::Tensor> per_head;
  per_head.reserve(static_cast<size_t>(trace.heads));
  for (int64_t h = 0; h < trace.heads; ++h) {
    const at::Tensor row = trace.rows(b, h, which);  // (1, K) in the head's key space
    per_head.push_back(attention::rows_on_tokens(row, trace.group_of(h).keys, layout)[0]);
  }
  if (per_head.empty())
    throw TraceQueryError("the " + trace.mechanism + " trace has no heads to map");
  const at::Tensor all = at::stack(per_head).to(at::kCPU, at::kFloat);  // (heads, N)
  const int64_t p = layout.num_prefix();
  QueryMap m;
  m.layout = layout;
  m.query = query;
  m.prefix = all.slice(1, 0, p).contiguous();
  m.grid = all.slice(1, p).reshape({trace.heads, layout.height, layout.width}).contiguous();
  return m;
}

QueryMap prefix_token_map(const AttentionTrace& trace, int64_t b, const std::string& prefix_name) {
  const auto& names = trace.layout.prefix;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == prefix_name) return query_map(trace, b, static_cast<int64_t>(i));
  std::string have;
  for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
  throw TraceQueryError("the layer (" + trace.layout.describe() + ") has no '" + prefix_name +
                        "' token (its prefix tokens: " + (have.empty() ? "none" : have) + ")");
}

at::Tensor fuse_heads(const at::Tensor& per_head, HeadFusion fusion) {
  if (!per_head.defined() || per_head.dim() < 1 || per_head.size(0) == 0)
    throw std::invalid_argument("fuse_heads needs a tensor with a non-empty head axis (dim 0)");
  switch (fusion) {
    case HeadFusion::Mean:
      return per_head.mean(0);
    case HeadFusion::Max:
      return std::get<0>(per_head.max(0));
    case HeadFusion::Min:
      return std::get<0>(per_head.min(0));
  }
  throw std::invalid_argument("fuse_heads: unknown fusion");
}

std::vector<QueryMap> query_overview(const std::vector<const AttentionTrace*>& layers, int64_t b,
                                     const GridQuery& q) {
  std::vector<QueryMap> out;
  out.reserve(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!layers[l])
      throw std::invalid_argument("query_overview: layer " + std::to_string(l) + " has no trace");
    out.push_back(query_map(*layers[l], b, token_for(q, layers[l]->layout)));
  }
  return out;
}

}  // namespace attnlab::analysis
