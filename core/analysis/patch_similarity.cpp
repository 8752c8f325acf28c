// See patch_similarity.h.
#include "core/analysis/patch_similarity.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace attnlab::analysis {

const char* similarity_facet_name(SimilarityFacet f) {
  switch (f) {
    case SimilarityFacet::Tokens:
      return "tokens";
    case SimilarityFacet::Queries:
      return "queries";
    case SimilarityFacet::Keys:
      return "keys";
    case SimilarityFacet::Values:
      return "values";
  }
  return "tokens";
}

SimilarityFacet parse_similarity_facet(const std::string& name) {
  for (const auto f : {SimilarityFacet::Tokens, SimilarityFacet::Queries, SimilarityFacet::Keys,
                       SimilarityFacet::Values})
    if (name == similarity_facet_name(f)) return f;
  throw std::invalid_argument("similarity facet '" + name +
                              "' is not one of tokens, queries, keys, values");
}

at::Tensor trace_facet(const attention::AttentionTrace& trace, int64_t b, SimilarityFacet facet) {
  if (facet == SimilarityFacet::Tokens)
    throw std::invalid_argument("trace_facet: the block's tokens are not in the trace");
  if (b < 0 || b >= trace.batch)
    throw attention::TraceQueryError("image " + std::to_string(b) + " of a batch of " +
                                     std::to_string(trace.batch));
  const auto& lay = trace.layout;
  const char* what = similarity_facet_name(facet);
  if (trace.groups.empty())
    throw attention::TraceQueryError(trace.mechanism + " keeps no " + std::string(what));
  std::vector<at::Tensor> parts;
  for (const auto& g : trace.groups) {
    // One key per layout token: the prefix, then the grid itself (cell 1, no padding).
    const bool per_token_keys = g.keys.prefix == lay.num_prefix() && g.keys.cell == 1 &&
                                g.keys.key_h == lay.height && g.keys.key_w == lay.width;
    const at::Tensor& t = facet == SimilarityFacet::Queries ? g.q
                          : facet == SimilarityFacet::Keys  ? g.k
                                                            : g.v;
    const bool per_token =
        facet == SimilarityFacet::Queries
            ? t.defined() && t.dim() == 4 && t.size(2) == lay.tokens()
            : per_token_keys && t.defined() && t.dim() == 4 && t.size(2) == lay.tokens();
    if (!per_token)
      throw attention::TraceQueryError(
          trace.mechanism + " (" + g.name + " heads) keeps no " + what +
          " per token (its keys are pooled, reduced or windowed): no " + what + " similarity");
    // (heads, N, d) -> (N, heads * d)
    parts.push_back(
        t[b].detach().to(at::kCPU, at::kDouble).permute({1, 0, 2}).reshape({lay.tokens(), -1}));
  }
  return at::cat(parts, 1);
}

at::Tensor cosine_similarity_row(const at::Tensor& features, int64_t query) {
  if (features.dim() != 2)
    throw std::invalid_argument("cosine_similarity_row: features must be (N, C)");
  if (query < 0 || query >= features.size(0))
    throw std::invalid_argument("cosine_similarity_row: token " + std::to_string(query) + " of " +
                                std::to_string(features.size(0)));
  const at::Tensor x = features.detach().to(at::kCPU, at::kDouble);
  if (!at::isfinite(x).all().item<bool>())
    throw std::invalid_argument("cosine_similarity_row: the features are not all finite");
  const at::Tensor norms = x.norm(2, 1);
  const at::Tensor dots = at::matmul(x, x[query]);
  const at::Tensor denom = norms * norms[query];
  // A zero vector has no direction: its similarity is 0 rather than 0/0.
  return at::where(denom > 0, dots / denom.clamp_min(1e-300), at::zeros_like(dots));
}

}  // namespace attnlab::analysis
