// `attnlab bench-attention` and the GUI's bench tab: the measured latency and peak memory
// of one attention layer per mechanism on square token grids — the table of
// docs/BENCHMARKS.md for any set of mechanisms, on the CPU or a CUDA device, with the
// ratio to softmax at the same N when softmax is measured in the same run. With a LibTorch
// >= 2.0 it also measures "sdpa", the softmax layer through at::scaled_dot_product_attention
// (the fused kernel a user would pick), and every row's ratio to it; the softmax row is then
// the eager form of the reference code (core/attention/fused_attention.h), and every other
// mechanism runs as attnlab runs it untraced (fused where it is a softmax).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "core/attention/registry.h"
#include "core/runtime/device_peaks.h"

namespace attnlab::session {

struct AttentionBenchSettings {
  std::vector<std::string> mechanisms;        // registry names
  std::vector<int64_t> sides = {14, 28, 56};  // square grids side × side
  int64_t dim = 384, heads = 6;               // ViT-Small width
  int repeats = 5;                            // timed forwards per point (median reported)
  c10::Device device = c10::Device(c10::kCPU);
  c10::ScalarType dtype = c10::kFloat;  // the layer's weights and input (--dtype)
  // The ratios' denominator, when it is in `mechanisms`.
  std::string baseline = attention::kPlainSoftmaxMechanism;
  // Add the kFusedRow ("sdpa") beside the mechanisms when the build has the fused kernel.
  bool fused_row = true;
};

// The fused baseline's row name. Not a registry mechanism: the softmax layer, fused.
constexpr const char* kFusedRow = "sdpa";

// The rows bench_attention measures: `mechanisms`, with kFusedRow after them when
// fused_row and the build has the kernel (and it is not named already). Throws
// AttentionError for an unknown mechanism, or kFusedRow named in a build without it.
std::vector<std::string> bench_rows(const AttentionBenchSettings& settings);

struct AttentionBenchPoint {
  std::string mechanism;
  int64_t side = 0, tokens = 0;
  double median_ms = 0;
  // Above what was live before the forward: the CPU allocator probe's peak, or on CUDA
  // the caching allocator's (NaN on CUDA in a build without its statistics).
  double peak_mib = 0;
  int64_t macs = 0;     // multiply-accumulates of one forward (runtime::MacCounter)
  int64_t bytes = 0;    // its input, output and weights, each read or written once
  std::string error;    // a point the mechanism refused (e.g. a grid its windows do not tile)
};

// Progress: points done, points in all, the point being measured ("hilo N=784").
using BenchProgress = std::function<void(int64_t, int64_t, const std::string&)>;

// Measures every (mechanism, side): one untimed warm-up forward (which counts the MACs),
// then `repeats` timed ones (batch 1, eval, no autograd, at settings.dtype); peak memory is
// the allocator's peak above what was live before each forward. A mechanism option "num_patches"
// (FLatten's fixed token count) is set to the grid's. Throws AttentionError for an unknown
// mechanism, and std::invalid_argument (runtime::precision_refusal) for a precision this
// LibTorch cannot run on the device. Stops between points, with the points measured so
// far, once `cancelled` says so.
std::vector<AttentionBenchPoint> bench_attention(const AttentionBenchSettings& settings,
                                                 const BenchProgress& progress = {},
                                                 const std::function<bool()>& cancelled = {});

// attention_bench: mechanism, side, tokens, latency_ms, peak_MiB, and the ratios to the
// baseline at the same N, latency_vs_<baseline>, memory_vs_<baseline> (NaN without it); then,
// when kFusedRow was measured, latency_vs_sdpa and memory_vs_sdpa, last.
// With `peaks` (measured in the same run), also the achieved rates: GFLOP_per_s (2·MACs
// over the latency), GB_per_s (`bytes` over the latency: a lower bound, as the layer's
// intermediates are not counted), and each as a fraction of the device's measured peak.
analysis::Table attention_bench_table(const std::vector<AttentionBenchPoint>& points,
                                      const AttentionBenchSettings& settings,
                                      const runtime::DevicePeaks* peaks = nullptr);

// The name a run's outputs take ("bench_cpu"; "bench_cuda_bf16" below fp32) and its sidecar
// (the settings, the peaks when measured, the points skipped and why): written alike by the
// CLI's --out folder and Results.metadata in Python.
std::string attention_bench_tag(const AttentionBenchSettings& settings);
nlohmann::json attention_bench_sidecar(const AttentionBenchSettings& settings,
                                       const runtime::DevicePeaks* peaks,
                                       const std::vector<AttentionBenchPoint>& points);

}  // namespace attnlab::session
