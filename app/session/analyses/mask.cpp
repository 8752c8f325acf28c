// mask: Castling-ViT's auxiliary mask in every layer that offers one: the share and count
// of softmax(q·kᵀ/√d) entries above the threshold, per head and over all heads. Over a
// checkpoint series (report --series, the GUI's series view) it is Castling's Fig. 6:
// the mask's non-zero share per layer against the training step.
// Its figures (report, series, GUI tab): mask_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"
#include "core/attention/castling.h"

namespace attnlab::session {
namespace {

void add_mask(ImageStep& s) {
  analysis::Table t = make_table(
      "mask_heads",
      "Castling auxiliary mask: share and count of softmax(q·kᵀ/√d) entries above the threshold, "
      "per layer and head (\"all\" = every head)",
      {"layer", "path", "head", "threshold", "fraction", "count", "entries"}, 3);
  for (const auto& l : s.layers) {
    const double thr = s.settings.options.optional_real("mask-threshold")
                           .value_or(attention::castling_threshold(*l.trace));
    const auto st = attention::castling_mask_statistics(*l.trace, thr,
                                                      attention::kDefaultMaskChunkRows, s.b);
    for (size_t h = 0; h < st.above_per_head.size(); ++h)
      t.add_row({l.index, l.path, std::to_string(h), thr, st.fraction(int64_t(h)),
                 st.above_per_head[h], st.entries_per_head});
    t.add_row({l.index, l.path, "all", thr, st.overall_fraction(), st.above_total,
               st.entries_per_head * int64_t(st.above_per_head.size())});
  }
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo mask_analysis() {
  AnalysisInfo info;
  info.name = "mask";
  info.summary = "Castling's auxiliary-mask sparsity (over a checkpoint series: Fig. 6)";
  info.needs = {attention::capability::kAuxiliaryMask};
  info.tables = {"mask_heads"};
  info.series = true;
  info.in_image_analysis = true;
  info.add = add_mask;
  AnalysisOption threshold{"mask-threshold", AnalysisOption::Kind::Real, "E", nullptr,
                           "each layer's own threshold option, 0.02"};
  threshold.min = 0;
  threshold.gui_max = 0.2;
  threshold.help = "Castling's mask threshold: the share of softmax entries above it is counted";
  info.options = {threshold};
  return info;
}

}  // namespace attnlab::session
