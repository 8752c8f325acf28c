// The complexity sweep and the cost figures; see cost_figures.h.
#include "app/session/cost_figures.h"

#include <algorithm>
#include <cmath>

#include "core/io/text.h"
#include "viz/figures/scaling.h"

namespace attnlab::session {

const std::vector<FigureKind>& cost_figure_kinds() {
  static const std::vector<FigureKind> kinds = {
      {"complexity", "Complexity: MACs against input size", /*on_request=*/true},
      {"attention_bench", "Measured latency and memory of one attention layer"}};
  return kinds;
}

const std::vector<double>& default_complexity_scales() {
  // Up to 3× the side (9× the tokens): enough for softmax's quadratic term to show
  // against the linear mechanisms', and cheap to count for a ViT-B at 224 (672 px).
  static const std::vector<double> scales = {1, 2, 3};
  return scales;
}

ComplexitySweep complexity_sweep(const std::vector<std::pair<std::string, ModelRequest>>& models,
                                 const std::vector<double>& scales, const SweepProgress& progress,
                                 const std::function<bool()>& cancelled) {
  ComplexitySweep sweep;
  std::vector<double> others;  // the model's own size is always counted, first
  for (const double s : scales)
    if (s > 0 && s != 1.0) others.push_back(s);
  const int64_t total = int64_t(models.size() * (1 + others.size()));
  int64_t done = 0;
  const auto step = [&](const std::string& what) {
    if (progress) progress(done, total, what);
    ++done;
  };
  for (const auto& [tag, request] : models) {
    if (cancelled && cancelled()) return sweep;
    step(tag + " at its own size");
    ComplexityRun own = count_model(request, 0, 0);  // throws: the model does not build
    own.subject = tag;
    const int64_t height = own.height, width = own.width;
    sweep.runs.push_back(std::move(own));
    for (const double scale : others) {
      if (cancelled && cancelled()) return sweep;
      const int64_t h = std::llround(double(height) * scale);
      const int64_t w = std::llround(double(width) * scale);
      const std::string what = tag + " at " + std::to_string(h) + "x" + std::to_string(w);
      step(what);
      try {
        ComplexityRun run = count_model(request, h, w);
        run.subject = tag;
        sweep.runs.push_back(std::move(run));
      } catch (const std::exception& e) {
        sweep.notes.push_back(what + ": " + e.what());
      }
    }
  }
  if (progress) progress(done, total, "");
  return sweep;
}

viz::CaptionedFigure complexity_sweep_figure(const ComplexitySweep& sweep) {
  viz::CaptionedFigure f = viz::scaling_figure(
      complexity_totals_table(sweep.runs), "subject", "height", "macs_total",
      "input side (pixels)", "MACs",
      "Multiply-accumulates of the whole forward (one multiply-add = one MAC, as fvcore)");
  if (!sweep.notes.empty()) f.caption += " Not counted: " + text::join(sweep.notes, "; ") + ".";
  return f;
}

AttentionBenchSettings models_bench_settings(const std::vector<std::string>& mechanisms) {
  AttentionBenchSettings s;
  s.mechanisms = {s.baseline};
  for (const auto& m : mechanisms)
    if (!m.empty() && std::find(s.mechanisms.begin(), s.mechanisms.end(), m) == s.mechanisms.end())
      s.mechanisms.push_back(m);
  return s;
}

std::vector<viz::CaptionedFigure> attention_bench_figures(const analysis::Table& table,
                                                          const AttentionBenchSettings& settings) {
  const std::string where = " of one attention layer (C " + std::to_string(settings.dim) + ", " +
                            std::to_string(settings.heads) + " heads) on " +
                            settings.device.str();
  std::vector<viz::CaptionedFigure> out;
  out.push_back(viz::scaling_figure(table, "mechanism", "tokens", "latency_ms", "tokens N",
                                    "latency (ms)", "Measured latency" + where));
  // The CPU allocator's probe does not see CUDA memory.
  if (!settings.device.is_cuda())
    out.push_back(viz::scaling_figure(table, "mechanism", "tokens", "peak_MiB", "tokens N",
                                      "peak memory (MiB)", "Measured peak memory" + where));
  return out;
}

viz::CaptionedFigure complexity_macs_figure(const std::vector<ComplexityRun>& runs, bool model) {
  return viz::scaling_figure(
      complexity_totals_table(runs), "subject", model ? "height" : "tokens", "macs_total",
      model ? "input size (pixels)" : "tokens N", "MACs",
      model ? "Multiply-accumulates of the forward" : "Multiply-accumulates of one layer");
}

}  // namespace attnlab::session
