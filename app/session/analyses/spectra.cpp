// spectra: the 2-D amplitude spectra of each layer's features on its grid, averaged over
// the images, and their high-frequency energy ratio: HiLo's Hi-Fi and Lo-Fi branch outputs
// where a layer offers branch outputs, the attention module's output elsewhere. Figures:
// HiLo's per-layer spectra grid and the radial profiles; the GUI's "HiLo spectra" tab.
// Its figures (report, series, GUI tab): spectra_figures.cpp.
#include <ATen/ATen.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/spectra.h"
#include "core/runtime/small_tasks.h"

namespace attnlab::session {
namespace {

void add_spectra(ImageStep& s) {
  analysis::Table summary = make_table(
      "spectra_layers",
      "high-frequency energy ratio (energy beyond half the Nyquist radius / total), mean over "
      "channels, per layer and branch",
      {"layer", "path", "branch", "channels", "high_frequency_ratio"}, 3);
  analysis::Table channels =
      make_table("spectra_channels", "high-frequency energy ratio per layer, branch and channel",
                 {"layer", "path", "branch", "channel", "high_frequency_ratio"}, 4);
  struct Features {
    const SessionLayer* layer;
    std::string branch;
    at::Tensor bhwc;  // (1, H, W, C): image b
  };
  std::vector<Features> features;
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    attention::AttentionTrace::NamedTensors branches = l.trace->branch_outputs();  // (B,H,W,C)
    if (branches.empty()) {
      auto it = s.result.outputs.find("out." + l.path);
      if (it == s.result.outputs.end()) {
        s.session.warn("spectra: no recorded output for " + l.path);
        continue;
      }
      at::Tensor t = it->second;
      if (t.dim() == 4 && t.size(2) == lay.height && t.size(3) == lay.width)
        t = t.permute({0, 2, 3, 1});  // NCHW (RAVLT) -> NHWC
      else
        t = t.slice(1, lay.num_prefix()).reshape({t.size(0), lay.height, lay.width, t.size(-1)});
      branches.emplace_back("output", t);
    }
    for (auto& [branch, f] : branches) features.push_back({&l, branch, f.narrow(0, s.b, 1)});
  }
  // The transforms side by side, one layer per task (small GEMMs: runtime/small_tasks.h),
  // each added to its own layer's sum there (a layer and branch has one sum, so no two
  // tasks touch the same one); the tables after them, in layer order.
  std::vector<analysis::SpectrumAccumulator*> sums;
  for (const auto& f : features)
    sums.push_back(&s.session.spectrum_sum({"spectra", "", f.layer->index, "", f.branch, ""}));
  if (std::set<analysis::SpectrumAccumulator*>(sums.begin(), sums.end()).size() != sums.size())
    throw std::logic_error("spectra: two features of one layer share a branch name");
  std::vector<analysis::SpectrumParts> parts(features.size());
  runtime::for_each_small_task(int64_t(features.size()), [&](int64_t i) {
    parts[size_t(i)] = analysis::spectrum_parts(features[size_t(i)].bhwc);
    sums[size_t(i)]->add(parts[size_t(i)]);
  });
  for (size_t i = 0; i < features.size(); ++i) {
    const SessionLayer& l = *features[i].layer;
    const std::string& branch = features[i].branch;
    const at::Tensor hf = parts[i].high_frequency_ratio[0].to(at::kCPU, at::kDouble).contiguous();
    summary.add_row({l.index, l.path, branch, hf.size(0), hf.mean().item<double>()});
    const double* ratio = hf.data_ptr<double>();  // (C,): one row per channel, no per-item op
    for (int64_t c = 0; c < hf.size(0); ++c)
      channels.add_row({l.index, l.path, branch, c, ratio[c]});
  }
  s.session.accumulate(summary);
  s.session.accumulate(channels);
}

}  // namespace

AnalysisInfo spectra_analysis() {
  AnalysisInfo info;
  info.name = "spectra";
  info.summary = "HiLo Hi-Fi / Lo-Fi branch spectra; the attention output's spectrum elsewhere";
  info.tables = {"spectra_layers", "spectra_channels"};
  info.arrays = {"spectra__L<ll>__<branch>__log_amplitude|radial"};
  info.needs_outputs = true;  // layers without branch outputs read the module's output
  info.in_image_analysis = true;
  info.series = true;  // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.add = add_spectra;
  return info;
}

}  // namespace attnlab::session
