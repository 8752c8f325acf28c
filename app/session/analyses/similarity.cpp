// similarity: patch similarity of the query (issue 48, item 2) — per selected layer the
// cosine of the query token's features with every token's (core/analysis/
// patch_similarity.h): the block's output tokens by default, or the attention's queries,
// keys or values (--similarity-facet) where the mechanism keeps one per token. The query
// is the maps analysis's (--query, --query-token; the grid's centre by default). Per image
// one grid array per layer; the figure draws every layer over the picture; the GUI's
// Similarity tab shows the current image's.
// Its figures (report, series, GUI tab): similarity_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/patch_similarity.h"

namespace attnlab::session {
namespace {

void add_similarity(ImageStep& s) {
  const std::string facet_name = s.settings.options.text("similarity-facet");
  const analysis::SimilarityFacet facet = analysis::parse_similarity_facet(facet_name);
  const Query q = resolve_query(s.settings, s.layers.front().trace->layout);
  analysis::Table t = make_table("similarity",
                                 "cosine similarity of the query's " + facet_name +
                                     " with the grid's tokens per layer: "
                                     "mean, and the share above 0.5 (query " +
                                     q.tag + ")",
                                 {"layer", "path", "facet", "mean", "alike"}, 3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const int64_t token = q.token_in(lay);
    if (token < 0) {
      s.session.warn("similarity: layer " + std::to_string(l.index) + " has no " + q.prefix +
                     " token");
      continue;
    }
    // A mechanism without per-token keys (pooled, windowed) says so through a
    // TraceQueryError, which the session turns into a warning.
    const at::Tensor features = facet == analysis::SimilarityFacet::Tokens
                                    ? block_output_tokens(s.result, l.path, lay, s.b)
                                    : analysis::trace_facet(*l.trace, s.b, facet);
    const at::Tensor row = analysis::cosine_similarity_row(features, token);
    const int64_t p = lay.num_prefix();
    const at::Tensor grid = row.slice(0, p).reshape({lay.height, lay.width});
    s.session.emit(to_array(
        grid, analysis::format_result_key({"similarity", s.image, l.index, q.tag, "", facet_name}),
        {"y", "x"},
        "cosine similarity of the " + facet_name + " of " + q.tag + " with every grid token's in " +
            l.path));
    t.add_row({l.index, l.path, facet_name, grid.mean().item<double>(),
               (grid > 0.5).to(at::kDouble).mean().item<double>()});
  }
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo similarity_analysis() {
  AnalysisInfo info;
  info.name = "similarity";
  info.summary =
      "cosine similarity of the query's tokens (or queries, keys, values) with every token, "
      "per layer";
  info.tables = {"similarity"};
  info.arrays = {"similarity__<image>__L<ll>__<query>__<facet>"};
  info.key_shape = analysis::ResultKeyShape{true, true, true, false, true};
  info.needs_outputs = true;  // the block outputs (the default facet)
  info.in_image_analysis = true;
  info.add = add_similarity;
  AnalysisOption facet{"similarity-facet", AnalysisOption::Kind::Choice,
                       "tokens|queries|keys|values", "tokens"};
  facet.choices = {"tokens", "queries", "keys", "values"};
  facet.help =
      "what is compared: the block's output tokens, or the attention's queries, "
      "keys or values";
  info.options = {facet};
  return info;
}

}  // namespace attnlab::session
