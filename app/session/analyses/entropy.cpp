// entropy: how spread each head's attention is — per layer and head the mean over queries
// of the row entropy H (nats), H / ln K and the effective support exp(H)
// (core/analysis/entropy.h). Figure: every model's heads per layer, one dot each; the
// GUI's Entropy tab compares every open model.
// Its figures (report, series, GUI tab): entropy_figures.cpp.
#include <ATen/ATen.h>

#include <limits>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/entropy.h"
#include "core/analysis/outliers.h"

namespace attnlab::session {
namespace {

void add_entropy(ImageStep& s) {
  analysis::Table heads = make_table(
      "entropy_heads",
      "attention entropy per head: mean over every query of the row entropy H (nats), H / ln K "
      "over the head's K keys, the effective support exp(H), and whether rows held negative "
      "weights (1: entropy of |row| / sum |row|)",
      {"layer", "path", "mechanism", "head", "keys", "entropy", "normalised_entropy", "support",
       "signed_rows"},
      5);
  analysis::Table layers = make_table(
      "entropy_layers",
      "attention entropy per layer, mean over heads (as entropy_heads), and the attention "
      "mass the register tokens receive (DINOv2 _reg; mean over heads of sum over the "
      "registers of (A^T 1)_j / N; nan: no register)",
      {"layer", "path", "mechanism", "entropy", "normalised_entropy", "support", "register_mass"},
      3);
  for (const auto& l : s.layers) {
    const analysis::AttentionEntropy e = analysis::attention_entropy(*l.trace, s.b);
    const double is_signed = e.signed_rows ? 1.0 : 0.0;
    for (int64_t h = 0; h < e.entropy.size(0); ++h)
      heads.add_row({l.index, l.path, l.trace->mechanism, h, e.keys[size_t(h)],
                     e.entropy[h].item<double>(), e.normalised[h].item<double>(),
                     e.support[h].item<double>(), is_signed});
    // Registers soak up the attention that outlier patches hold without them (Darcet et
    // al.): their share, next to how spread the rows are.
    const std::vector<int64_t> registers = l.trace->layout.register_tokens();
    double register_mass = std::numeric_limits<double>::quiet_NaN();
    if (!registers.empty())
      register_mass = analysis::received_attention(*l.trace, s.b)
                          .index_select(1, at::tensor(registers))
                          .sum(1)
                          .mean()
                          .item<double>();
    layers.add_row({l.index, l.path, l.trace->mechanism, e.entropy.mean().item<double>(),
                    e.normalised.mean().item<double>(), e.support.mean().item<double>(),
                    register_mass});
  }
  s.session.accumulate(heads);
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo entropy_analysis() {
  AnalysisInfo info;
  info.name = "entropy";
  info.summary = "attention entropy per head (H, H / ln K, effective support exp(H))";
  info.tables = {"entropy_heads", "entropy_layers"};
  info.in_image_analysis = true;
  info.series = true;      // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.add = add_entropy;
  return info;
}

}  // namespace attnlab::session
