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
#include <optional>
#include <utility>

#include "core/attention/fused_attention.h"
#include "core/attention/registry.h"
#include "core/runtime/bf16_products.h"
#include "core/runtime/cuda_memory.h"
#include "core/runtime/mac_counter.h"
#include "core/runtime/memory_probe.h"
#include "core/runtime/precision.h"
#include "models/backbone.h"

namespace attnlab::session {
namespace {

void sync(const c10::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize(d.index());
}

// Bytes of a tensor's elements.
int64_t bytes_of(const at::Tensor& t) {
  return t.defined() ? t.numel() * int64_t(t.element_size()) : 0;
}

// The device's allocator peak above `before`, in bytes, between reset() and peak().
struct PeakMemory {
  c10::Device device;
  std::unique_ptr<runtime::CpuMemoryProbe> cpu;
  bool cuda = false;
  explicit PeakMemory(const c10::Device& d) : device(d) {
    if (!d.is_cuda())
      cpu = std::make_unique<runtime::CpuMemoryProbe>();
    else
      cuda = runtime::cuda_memory_stats_available();
  }
  int64_t reset() {  // returns the bytes live now
    if (cpu) {
      cpu->reset_peak();
      return cpu->live_bytes();
    }
    if (!cuda) return 0;
    runtime::reset_cuda_peak(device.index());
    return runtime::cuda_allocated_bytes(device.index());
  }
  bool measured() const { return cpu || cuda; }
  int64_t peak() const {
    if (cpu) return cpu->peak_bytes();
    return cuda ? runtime::cuda_peak_allocated_bytes(device.index()) : 0;
  }
};

AttentionBenchPoint measure(const std::string& name, int64_t side,
                            const AttentionBenchSettings& s) {
  AttentionBenchPoint point{name, side, side * side, 0, 0, 0, 0, ""};
  const bool fused_row = name == kFusedRow;
  // Softmax is measured in the reference's eager form when the fused one has its own row.
  std::optional<attention::EagerAttentionScope> eager;
  if (name == attention::kPlainSoftmaxMechanism && s.fused_row &&
      attention::fused_attention_built())
    eager.emplace();
  const std::string mechanism = fused_row ? attention::kPlainSoftmaxMechanism : name;
  attention::MechanismConfig config;
  config.dim = s.dim;
  config.heads = s.heads;
  const auto& info = attention::mechanism_info(mechanism);
  for (const auto& o : info.options)
    if (o.name == "num_patches") config.options["num_patches"] = double(side * side);
  at::NoGradGuard no_grad;
  try {
    auto layer = attention::make_mechanism(mechanism, config);
    layer->eval();
    layer->to(s.device);
    models::cast_floating(*layer, s.dtype);
    const auto layout = attention::grid_layout(side, side);
    at::manual_seed(0);
    const at::Tensor x = at::randn({1, side * side, s.dim}).to(s.device, s.dtype);
    {  // warm-up: one-time costs are not what this measures; it counts the work instead
      runtime::MacCounter counter;
      const at::Tensor out = layer->forward(x, layout);
      for (const auto& l : counter.layers()) point.macs += l.total();
      point.bytes = bytes_of(x) + bytes_of(out);
      for (const auto& p : layer->parameters()) point.bytes += bytes_of(p);
    }
    if (fused_row) layer->forward(x, layout);  // the counted warm-up ran eagerly
    sync(s.device);
    PeakMemory memory(s.device);
    std::vector<double> ms;
    int64_t peak = 0;
    for (int r = 0; r < std::max(1, s.repeats); ++r) {
      const int64_t before = memory.reset();
      const auto start = std::chrono::steady_clock::now();
      at::Tensor out = layer->forward(x, layout);
      sync(s.device);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      peak = std::max(peak, memory.peak() - before);
    }
    std::sort(ms.begin(), ms.end());
    point.median_ms = ms[ms.size() / 2];
    point.peak_mib = memory.measured() ? double(peak) / (1024.0 * 1024.0)
                                       : std::numeric_limits<double>::quiet_NaN();
  } catch (const std::exception& e) {
    point.error = e.what();
  }
  return point;
}

}  // namespace

std::vector<std::string> bench_rows(const AttentionBenchSettings& settings) {
  std::vector<std::string> rows;
  for (const auto& name : settings.mechanisms) {
    if (name == kFusedRow) {
      if (!attention::fused_attention_built())
        throw attention::AttentionError(std::string("bench-attention: no ") + kFusedRow +
                                        " row: " + attention::fused_attention_description());
    } else {
      attention::mechanism_info(name);  // unknown: throw
    }
    rows.push_back(name);
  }
  if (settings.fused_row && attention::fused_attention_built() &&
      std::find(rows.begin(), rows.end(), kFusedRow) == rows.end())
    rows.push_back(kFusedRow);
  return rows;
}

std::vector<AttentionBenchPoint> bench_attention(const AttentionBenchSettings& settings,
                                                 const BenchProgress& progress,
                                                 const std::function<bool()>& cancelled) {
  // bf16 products accumulate in fp32, as a bf16 model's do (select_target installs the
  // kernels for the CLI; the GUI's and the module's benches come here directly). A
  // precision this LibTorch cannot run here is refused with the reason before any layer
  // is built (else each row would fail with the kernel's, or oneDNN's, own error).
  if (settings.dtype == c10::kBFloat16) runtime::install_fp32_accumulating_bf16_products();
  runtime::require_precision(settings.dtype, settings.device);
  const std::vector<std::string> rows = bench_rows(settings);
  const int64_t total = int64_t(rows.size() * settings.sides.size());
  std::vector<AttentionBenchPoint> points;
  for (const int64_t side : settings.sides)
    for (const auto& name : rows) {
      if (cancelled && cancelled()) return points;
      if (progress)
        progress(int64_t(points.size()), total, name + " N=" + std::to_string(side * side));
      points.push_back(measure(name, side, settings));
    }
  if (progress) progress(total, total, "");
  return points;
}

analysis::Table attention_bench_table(const std::vector<AttentionBenchPoint>& points,
                                      const AttentionBenchSettings& settings,
                                      const runtime::DevicePeaks* peaks) {
  analysis::Table t;
  t.name = "attention_bench";
  t.caption = "Median latency (ms, " + std::to_string(settings.repeats) +
              " forwards after a warm-up) and peak allocated memory (MiB) of one attention layer "
              "(C = " +
              std::to_string(settings.dim) + ", " + std::to_string(settings.heads) +
              " heads, batch 1, " + settings.device.str() + ", " +
              runtime::dtype_name(settings.dtype) + "), and their ratios to " + settings.baseline +
              " at the same N";
  if (peaks)
    t.caption +=
        "; achieved GFLOP/s (2 x MACs / latency) and GB/s (input, output and weights "
        "once / latency, a lower bound on traffic), and their fractions of the device's "
        "peaks measured in the same run (a " +
        std::to_string(peaks->gemm_n) + "^2 GEMM: " + std::to_string(int64_t(peaks->gflops)) +
        " GFLOP/s; a copy: " + std::to_string(int64_t(peaks->gbytes_per_s)) + " GB/s)";
  t.columns = {"mechanism",
               "side",
               "tokens",
               "latency_ms",
               "peak_MiB",
               "latency_vs_" + settings.baseline,
               "memory_vs_" + settings.baseline};
  if (peaks)
    for (const char* c : {"GFLOP_per_s", "of_peak_GFLOP_per_s", "GB_per_s", "of_peak_GB_per_s"})
      t.columns.push_back(c);
  t.key_columns = 3;
  // Each row's ratio to `name`'s row at the same N (NaN where it was not measured).
  const auto ratios_to = [&points](const std::string& name) {
    std::map<int64_t, const AttentionBenchPoint*> by_tokens;
    for (const auto& p : points)
      if (p.mechanism == name && p.error.empty()) by_tokens[p.tokens] = &p;
    return [by_tokens](const AttentionBenchPoint& p) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const auto it = by_tokens.find(p.tokens);
      if (it == by_tokens.end()) return std::pair<double, double>{nan, nan};
      return std::pair<double, double>{p.median_ms / it->second->median_ms,
                                       p.peak_mib / it->second->peak_mib};
    };
  };
  const auto to_baseline = ratios_to(settings.baseline);
  const auto to_fused = ratios_to(kFusedRow);
  const bool fused = std::any_of(points.begin(), points.end(), [](const AttentionBenchPoint& p) {
    return p.mechanism == kFusedRow && p.error.empty();
  });
  if (fused) {
    t.columns.push_back(std::string("latency_vs_") + kFusedRow);
    t.columns.push_back(std::string("memory_vs_") + kFusedRow);
    t.caption += "; and to " + std::string(kFusedRow) +
                 " (softmax through at::scaled_dot_product_attention; the softmax row is the "
                 "eager form)";
  }
  for (const auto& p : points) {
    if (!p.error.empty()) continue;
    const auto [lat, mem] = to_baseline(p);
    std::vector<analysis::Cell> row = {p.mechanism, p.side, p.tokens, p.median_ms,
                                       p.peak_mib,  lat,    mem};
    if (peaks) {
      const double seconds = p.median_ms / 1e3;
      const double gflops = 2.0 * double(p.macs) / seconds / 1e9;
      const double gbps = double(p.bytes) / seconds / 1e9;
      for (const double v : {gflops, gflops / peaks->gflops, gbps, gbps / peaks->gbytes_per_s})
        row.emplace_back(v);
    }
    if (fused) {
      const auto [fused_lat, fused_mem] = to_fused(p);
      row.emplace_back(fused_lat);
      row.emplace_back(fused_mem);
    }
    t.add_row(std::move(row));
  }
  return t;
}

std::string attention_bench_tag(const AttentionBenchSettings& s) {
  return "bench_" + s.device.str() +
         (s.dtype != c10::kFloat ? "_" + runtime::dtype_name(s.dtype) : "");
}

nlohmann::json attention_bench_sidecar(const AttentionBenchSettings& s,
                                       const runtime::DevicePeaks* peaks,
                                       const std::vector<AttentionBenchPoint>& points) {
  nlohmann::json j = {{"command", "bench-attention"},
                      {"dim", s.dim},
                      {"heads", s.heads},
                      {"repeats", s.repeats},
                      {"device", s.device.str()},
                      {"dtype", runtime::dtype_name(s.dtype)}};
  if (peaks)
    j["peaks"] = {{"gemm_n", peaks->gemm_n},
                  {"gemm_GFLOP_per_s", peaks->gflops},
                  {"copy_bytes", peaks->copy_bytes},
                  {"copy_GB_per_s", peaks->gbytes_per_s}};
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& p : points)
    if (!p.error.empty())
      skipped.push_back({{"mechanism", p.mechanism}, {"tokens", p.tokens}, {"error", p.error}});
  j["skipped"] = skipped;
  return j;
}

}  // namespace attnlab::session
