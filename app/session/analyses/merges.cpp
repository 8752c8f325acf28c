// merges: token merging's groups (ToMe, models/token_merging.h) — after every merging block,
// which input patches each merged token holds, read from the layers that offer "merged
// tokens" (their traces' tome.merged_owner). Per layer a table row (tokens before and after
// the merge, the largest group, the mean group a patch is in, the share of patches merged
// with another) and per image the group of every grid patch as an array. Figure: the picture
// painted by merged token, block by block (ToMe's own figure); the GUI's Merges tab.
// Its figures (report, GUI tab): merges_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"

namespace attnlab::session {
namespace {

void add_merges(ImageStep& s) {
  analysis::Table layers = make_table(
      "merges_layers",
      "token merging per layer (ToMe): tokens entering the layer and left after its block's "
      "merge (prefix tokens included), the largest merged token in grid patches, the mean "
      "size of the group a grid patch is in, and the share of grid patches merged with "
      "another",
      {"layer", "path", "tokens_in", "tokens_out", "largest_group", "mean_group", "merged_share"},
      3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const int64_t p = lay.num_prefix();
    const at::Tensor owner = l.trace->internal("tome.merged_owner")[s.b].to(at::kCPU);
    const int64_t tokens_in = l.trace->internal("tome.size").size(1);
    const int64_t tokens_out = owner.max().item<int64_t>() + 1;
    // Patches per merged token, counted over the grid (a prefix token is never merged).
    const at::Tensor patches = owner.slice(0, p);
    const at::Tensor count = at::bincount(patches, {}, tokens_out).to(at::kDouble);
    const at::Tensor group_of_patch = count.index_select(0, patches);
    layers.add_row({l.index, l.path, tokens_in, tokens_out, count.max().item<double>(),
                    group_of_patch.mean().item<double>(),
                    (group_of_patch > 1).to(at::kDouble).mean().item<double>()});
    const analysis::ResultKey key{"merges", s.image, l.index, "", "", "group"};
    s.session.emit(to_array(patches.to(at::kDouble).reshape({lay.height, lay.width}),
                            analysis::format_result_key(key), {"y", "x"},
                            "merged token holding every grid patch after the block of " + l.path +
                                " (its index among the " + std::to_string(tokens_out) +
                                " tokens left, prefix tokens first)"));
  }
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo merges_analysis() {
  AnalysisInfo info;
  info.name = "merges";
  info.summary =
      "token merging (ToMe): which patches each merged token holds after every block, and the "
      "group sizes";
  info.needs = {attention::capability::kMergedTokens};
  info.tables = {"merges_layers"};
  info.arrays = {"merges__<image>__L<ll>__group"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, true};
  info.in_image_analysis = true;
  info.add = add_merges;
  return info;
}

}  // namespace attnlab::session
