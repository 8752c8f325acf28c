// segmentation: DINO's attention masks and their quality (Caron et al. 2021, "Emerging
// Properties in Self-Supervised Vision Transformers", arXiv 2104.14294, Fig. 3 and its
// visualize_attention.py). Per selected layer and head, the readout row over the grid —
// the cls token's row where the layer has one, else the mean query row (what every query
// gives each token, (Aᵀ·1)/N: Swin, LITv2, RAVLT have no cls) — is thresholded to the
// fewest tokens holding a share tau of its mass (core/analysis/attention_segmentation.h);
// the same for the head-mean row (signed rows, Castling's and Hydra's: their positive
// part). With a ground truth (--seg-truth: "foreground", the
// picture's own non-background pixels, Fashion-MNIST's objects; or a folder of mask PNGs
// named as the images) each mask, upsampled by the patch, gets its Jaccard index.
// Per image the last selected layer's masks and Jaccard values are arrays; the figure
// draws them over the picture.
// Its figures (report, series, GUI tab): segmentation_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/attention_segmentation.h"
#include "core/analysis/outliers.h"
#include "core/attention/capabilities.h"
#include "core/io/image_io.h"

namespace attnlab::session {
namespace {

// The ground truth at the model's input, (H, W) bool; undefined (with a warning saying
// why) when there is none for this image.
at::Tensor segmentation_truth(ImageStep& s, const std::string& truth) {
  if (truth.empty()) return {};
  if (truth == "foreground") {
    if (!s.source.input) {
      s.session.warn("segmentation: --seg-truth foreground needs the image itself");
      return {};
    }
    // The pixels brighter than the picture's darkest value in some channel, by more than
    // 0.1% of that channel's range (the resize's rounding at the edges stays background):
    // on a black background, Fashion-MNIST's, the object's non-zero pixels.
    const at::Tensor x = s.source.input->detach().to(at::kCPU, at::kDouble)[0];
    const at::Tensor lo = x.amin({1, 2}, true), hi = x.amax({1, 2}, true);
    return (x > lo + 1e-3 * (hi - lo)).any(0);
  }
#ifdef ATTNLAB_SESSION_COMPUTE_ONLY
  // A GPU-check-only build has no OpenCV, so no image decoder (app/session/CMakeLists.txt).
  s.session.warn("segmentation: --seg-truth " + truth +
                 ": this build reads no image files (GPU-check-only), so no mask folder");
  return {};
#else
  if (s.source.path.empty() || !s.source.preprocessing) {
    s.session.warn("segmentation: a mask folder needs the image's file and preprocessing");
    return {};
  }
  namespace fs = std::filesystem;
  if (!fs::is_directory(truth)) {
    s.session.warn("segmentation: --seg-truth " + truth + " is neither 'foreground' nor a folder");
    return {};
  }
  const fs::path file = fs::path(truth) / (fs::path(s.source.path).stem().string() + ".png");
  if (!fs::exists(file)) {
    s.session.warn("segmentation: no ground-truth mask " + file.string() +
                   " (masks are PNGs named as the images)");
    return {};
  }
  // The mask goes through the image's own resize and crop, unnormalised, so its pixels
  // land where the image's did; > 0.5 after the resampling's blending is inside.
  image::Preprocessing p = *s.source.preprocessing;
  p.mean = {0.f, 0.f, 0.f};
  p.std = {1.f, 1.f, 1.f};
  return image::preprocess(io::load_rgb_image(file.string()), p)[0].mean(0) > 127.5 / 255.0;
#endif
}

void add_segmentation(ImageStep& s) {
  const double tau = s.settings.options.real("seg-mass");
  const at::Tensor truth = segmentation_truth(s, s.settings.options.text("seg-truth"));
  analysis::Table t = make_table(
      "segmentation",
      "attention segmentation per layer and head (\"mean\": the head-mean row): the readout row "
      "(cls, or the mean query row where the layer has no cls) over the grid, its fewest tokens "
      "holding a share tau of the row's mass (kept: their share of the grid's tokens; mass: "
      "of the row), and the Jaccard index of that mask upsampled by the patch with the ground "
      "truth (nan: none)",
      {"layer", "path", "head", "source", "tau", "kept", "mass", "jaccard"}, 5);
  const double none = std::numeric_limits<double>::quiet_NaN();
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    int64_t cls = -1;
    for (size_t i = 0; i < lay.prefix.size(); ++i)
      if (lay.prefix[i] == "cls") cls = int64_t(i);
    const int64_t n = lay.height * lay.width;
    at::Tensor rows;  // (heads, n) float64
    if (cls >= 0) {
      rows = analysis::query_map(*l.trace, s.b, cls).grid.to(at::kDouble).reshape({-1, n});
    } else {
      const int64_t p = lay.num_prefix();
      rows = analysis::received_attention(*l.trace, s.b).slice(1, p, p + n);
    }
    std::string source = cls >= 0 ? "cls" : "mean query";
    at::Tensor all = at::cat({rows, rows.mean(0, true)});  // the head mean last
    // Signed rows (Castling, Hydra) have no mass to share out: their positive part is
    // segmented, the weights that pull a token's value in, and the source says so.
    if (l.trace->offers(attention::capability::kSignedRows)) {
      all = all.clamp_min(0.0);
      source += " (positive part)";
    }
    const at::Tensor masks = analysis::mass_threshold_mask(all, tau);
    const int64_t heads = rows.size(0);
    std::vector<double> jaccards;
    for (int64_t k = 0; k <= heads; ++k) {
      const at::Tensor m = masks[k];
      const double total = all[k].sum().item<double>();
      const double mass = total > 0 ? all[k].masked_select(m).sum().item<double>() / total : 0;
      double j = none;
      if (truth.defined())
        j = analysis::jaccard(analysis::upsample_token_mask(m.reshape({lay.height, lay.width}),
                                                            truth.size(0), truth.size(1)),
                              truth);
      jaccards.push_back(j);
      t.add_row({l.index, l.path, k == heads ? std::string("mean") : std::to_string(k), source, tau,
                 m.sum().item<double>() / double(n), mass, j});
    }
    if (&l != &s.layers.back()) continue;  // the figure's arrays: the last layer only
    const std::string query = cls >= 0 ? "cls" : "mean";
    s.session.emit(to_array(
        masks.to(at::kFloat).reshape({heads + 1, lay.height, lay.width}),
        analysis::format_result_key({"segmentation", s.image, l.index, query, "", "masks"}),
        {"mask", "y", "x"},
        "attention segmentation of " + l.path +
            ": per head then the head "
            "mean, 1 where a token is among the fewest holding " +
            analysis::Cell(tau).str() + " of the " + source + " row's mass"));
    s.session.emit(to_array(
        at::tensor(jaccards, at::kDouble),
        analysis::format_result_key({"segmentation", s.image, l.index, query, "", "jaccard"}),
        {"mask"}, "Jaccard index of each mask with the ground truth"));
  }
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo segmentation_analysis() {
  AnalysisInfo info;
  info.name = "segmentation";
  info.summary =
      "DINO's attention masks: the fewest tokens holding a share tau of the cls (or mean "
      "query) row, per head, and their Jaccard index with a ground truth";
  info.tables = {"segmentation"};
  info.arrays = {"segmentation__<image>__L<ll>__<query>__masks|jaccard"};
  info.key_shape = analysis::ResultKeyShape{true, true, true, false, true};
  info.in_image_analysis = true;
  info.add = add_segmentation;
  AnalysisOption mass{"seg-mass", AnalysisOption::Kind::Real, "TAU", 0.6};
  mass.min = 0;
  mass.min_open = true;
  mass.max = 1;
  mass.help = "the share of the row's attention the kept tokens hold (DINO's threshold)";
  AnalysisOption truth{"seg-truth", AnalysisOption::Kind::Text, "foreground|DIR", "",
                       "none: masks without a score"};
  truth.help =
      "the ground truth: the picture's non-background pixels, or a folder of mask "
      "PNGs named as the images";
  info.options = {mass, truth};
  return info;
}

}  // namespace attnlab::session
