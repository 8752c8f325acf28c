// lens: the logit lens (nostalgebraist 2020) — every block's output read out through the
// model's own final norm and head (models/lens_run.h: the class token, both heads averaged
// for distilled DeiTs, the mean of the grid tokens for pooled models, a hierarchical
// model's last stage only), and per block (core/analysis/logit_lens.h) the top-1 and its
// probability, the label's rank and probability when --lens-label gives one, KL(final ‖
// block) and whether the top-1 is already the final one. Needs the model: one forward of
// its own per image that keeps the blocks' outputs, then a norm and a head per block —
// about one forward in all, less than Grad-CAM's forward and backward, so it is part of
// "all". Figure: KL and top-1 agreement against depth, one curve per model.
// Its figures (report, series, GUI tab): lens_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/logit_lens.h"
#include "core/io/text.h"
#include "models/lens_run.h"

namespace attnlab::session {
namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

std::string lens_caption(const models::LensLogits& lens) {
  std::string c =
      "logit lens per block: the block's output read out through the model's final "
      "norm and head as its last block is (";
  c += std::to_string(lens.blocks.size()) + " of " + std::to_string(lens.total_blocks) + " blocks";
  if (!lens.skipped.empty()) c += "; not read, earlier stages: " + text::join(lens.skipped);
  c += "); kl = KL(p_final || p_block) in nats, agrees = its top-1 is the final top-1, "
       "top1_probability = p_block(its top-1); with --lens-label: label_rank (1 = top), "
       "label_probability, label_top1 = rank 1 (nan without a label)";
  return c;
}

void explain_lens(ExplainStep& s) {
  const int64_t label = s.settings.options.integer("lens-label");
  models::ForwardResult r;
  {
    const at::NoGradGuard no_grad;
    r = s.model.run(s.input, models::lens_forward_options());
  }
  const models::LensLogits lens = models::lens_logits(s.model, r, 0);
  const int64_t classes = lens.logits.size(1);
  if (label >= classes)
    throw std::invalid_argument("--lens-label " + std::to_string(label) + " is not a class of " +
                                s.model.arch() + " (" + std::to_string(classes) + " classes)");
  const analysis::LensStatistics st = analysis::lens_statistics(lens.logits, label);
  const bool labelled = label >= 0;
  analysis::Table layers = make_table("lens", lens_caption(lens),
                                      {"layer", "block", "kl", "agrees", "top1_probability",
                                       "label_rank", "label_probability", "label_top1"},
                                      2);
  analysis::Table images = make_table(
      "lens_images",
      "logit lens per image and block (as the lens table, unaveraged): top1 = the class the "
      "block's readout ranks first; label = --lens-label (-1: none)",
      {"image", "layer", "block", "top1", "top1_probability", "label", "label_rank",
       "label_probability", "kl", "agrees"},
      3);
  for (size_t l = 0; l < lens.blocks.size(); ++l) {
    const analysis::LensLayer& x = st.layers[l];
    const double rank = labelled ? double(x.label_rank) : kNone;
    const double top1 = labelled ? double(x.label_rank == 1) : kNone;
    const double p_label = labelled ? x.label_probability : kNone;
    layers.add_row({lens.depth[l], lens.blocks[l], x.kl, double(x.agrees), x.top1_probability, rank,
                    p_label, top1});
    images.add_row({s.image, lens.depth[l], lens.blocks[l], x.top1, x.top1_probability, label, rank,
                    p_label, x.kl, double(x.agrees)});
  }
  s.session.accumulate(layers);
  s.session.accumulate(images);
}

}  // namespace

AnalysisInfo lens_analysis() {
  AnalysisInfo info;
  info.name = "lens";
  info.summary =
      "logit lens: every block read out through the final norm and head; top-1, KL to the "
      "final prediction, agreement, the label's rank";
  info.tables = {"lens", "lens_images"};
  info.needs_classes = true;
  info.in_image_analysis = true;  // one forward without gradients: cheap enough for the GUI
  info.explain = explain_lens;
  AnalysisOption label{"lens-label", AnalysisOption::Kind::Integer, "C", -1, "-1 (none)"};
  label.min = -1;
  label.gui_min = -1;
  label.gui_max = 999;
  label.help = "the logit lens's label: its rank and probability per block";
  info.options = {label};
  info.describe = [](const AnalysisSettings&) {
    return nlohmann::json{
        {"readout",
         "each block's output through the model's own tail: final norm and head on the class "
         "token (distilled: head on cls and head_dist on dist, averaged), or on the mean of the "
         "grid tokens (fc_norm ViTs; Swin, LITv2 and RAVLT on their last stage's blocks)"},
        {"kl",
         "KL(p_final || p_block) = sum_k p_final(k) (log p_final(k) - log p_block(k)), "
         "float64 log_softmax, nats"},
        {"blocks",
         "every block of the forward, not only the selected layers: the last one is "
         "the model's own output"}};
  };
  return info;
}

}  // namespace attnlab::session
