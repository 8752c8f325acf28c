// Measuring attention layers for bench-attention (see attention_bench.h).
#include "app/session/attention_bench.h"

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "core/attention/registry.h"
#include "core/runtime/memory_probe.h"

namespace attnlab::session {
namespace {

void sync(const c10::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize(d.index());
}

AttentionBenchPoint measure(const std::string& name, int64_t side,
                            const AttentionBenchSettings& s) {
  AttentionBenchPoint point{name, side, side * side, 0, 0, ""};
  attention::MechanismConfig config;
  config.dim = s.dim;
  config.heads = s.heads;
  const auto& info = attention::mechanism_info(name);
  for (const auto& o : info.options)
    if (o.name == "num_patches") config.options["num_patches"] = double(side * side);
  at::NoGradGuard no_grad;
  try {
    auto layer = attention::make_mechanism(name, config);
    layer->eval();
    layer->to(s.device);
    const auto layout = attention::grid_layout(side, side);
    at::manual_seed(0);
    const at::Tensor x = at::randn({1, side * side, s.dim}).to(s.device);
    layer->forward(x, layout);  // warm-up: one-time costs are not what this measures
    sync(s.device);
    std::unique_ptr<runtime::CpuMemoryProbe> probe;
    if (!s.device.is_cuda()) probe = std::make_unique<runtime::CpuMemoryProbe>();
    std::vector<double> ms;
    int64_t peak = 0;
    for (int r = 0; r < std::max(1, s.repeats); ++r) {
      if (probe) probe->reset_peak();
      const int64_t before = probe ? probe->live_bytes() : 0;
      const auto start = std::chrono::steady_clock::now();
      at::Tensor out = layer->forward(x, layout);
      sync(s.device);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      if (probe) peak = std::max(peak, probe->peak_bytes() - before);
    }
    std::sort(ms.begin(), ms.end());
    point.median_ms = ms[ms.size() / 2];
    point.peak_mib =
        probe ? double(peak) / (1024.0 * 1024.0) : std::numeric_limits<double>::quiet_NaN();
  } catch (const std::exception& e) {
    point.error = e.what();
  }
  return point;
}

}  // namespace

std::vector<AttentionBenchPoint> bench_attention(const AttentionBenchSettings& settings,
                                                 const BenchProgress& progress,
                                                 const std::function<bool()>& cancelled) {
  for (const auto& name : settings.mechanisms) attention::mechanism_info(name);  // unknown: throw
  const int64_t total = int64_t(settings.mechanisms.size() * settings.sides.size());
  std::vector<AttentionBenchPoint> points;
  for (const int64_t side : settings.sides)
    for (const auto& name : settings.mechanisms) {
      if (cancelled && cancelled()) return points;
      if (progress)
        progress(int64_t(points.size()), total, name + " N=" + std::to_string(side * side));
      points.push_back(measure(name, side, settings));
    }
  if (progress) progress(total, total, "");
  return points;
}

analysis::Table attention_bench_table(const std::vector<AttentionBenchPoint>& points,
                                      const AttentionBenchSettings& settings) {
  analysis::Table t;
  t.name = "attention_bench";
  t.caption = "Median latency (ms, " + std::to_string(settings.repeats) +
              " forwards after a warm-up) and peak allocated memory (MiB) of one attention layer "
              "(C = " +
              std::to_string(settings.dim) + ", " + std::to_string(settings.heads) +
              " heads, batch 1, " + settings.device.str() + "), and their ratios to " +
              settings.baseline + " at the same N";
  t.columns = {"mechanism",
               "side",
               "tokens",
               "latency_ms",
               "peak_MiB",
               "latency_vs_" + settings.baseline,
               "memory_vs_" + settings.baseline};
  t.key_columns = 3;
  std::map<int64_t, const AttentionBenchPoint*> baseline;
  for (const auto& p : points)
    if (p.mechanism == settings.baseline && p.error.empty()) baseline[p.tokens] = &p;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& p : points) {
    if (!p.error.empty()) continue;
    const auto it = baseline.find(p.tokens);
    const double lat = it != baseline.end() ? p.median_ms / it->second->median_ms : nan;
    const double mem = it != baseline.end() ? p.peak_mib / it->second->peak_mib : nan;
    t.add_row({p.mechanism, p.side, p.tokens, p.median_ms, p.peak_mib, lat, mem});
  }
  return t;
}

}  // namespace attnlab::session
