// `attnlab bench-attention`: measured latency and peak memory of one attention layer per
// mechanism on square token grids, as ratios to a baseline (softmax) measured in the same run (the
// table of docs/BENCHMARKS.md for any set of mechanisms), on the CPU or CUDA (--device) at
// --dtype, with a progress bar, and each layer's achieved FLOP rate and bandwidth against
// the device's GEMM and copy peaks measured in the same run; --out writes the table (CSV, JSON,
// LaTeX) and the latency and memory against N figures.
#include <cmath>
#include <cstdio>
#include <string>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/report_costs.h"
#include "app/session/cost_figures.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/attention/fused_attention.h"
#include "core/attention/registry.h"
#include "core/io/text.h"
#include "core/runtime/device_peaks.h"
#include "core/runtime/precision.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

std::string ratio(double r) {
  return std::isfinite(r) ? text::format_g(r, 3) + "x" : "-";
}

}  // namespace

int cmd_bench_attention(Args args, const GlobalOptions& g) {
  session::AttentionBenchSettings s;
  const std::string mechanisms = args.take_option("--mechanisms");
  const auto sides = args.take_list("--sides");
  s.dim = args.take_positive_int("--dim", int(s.dim));
  s.heads = args.take_positive_int("--heads", int(s.heads));
  s.repeats = args.take_positive_int("--repeats", s.repeats);
  const std::string out_dir = args.take_option("--out");
  const std::string baseline = args.take_option("--baseline");
  if (!baseline.empty()) s.baseline = baseline;
  if (!args.positionals().empty())
    throw UsageError("bench-attention takes no positional arguments");
  s.mechanisms = mechanisms.empty() || mechanisms == "all" ? attention::mechanism_names()
                                                           : text::split(mechanisms);
  if (!sides.empty()) s.sides = parse_positive_ints("--sides", sides);
  const auto rows = session::bench_rows(s);  // an unknown mechanism: exit 1
  if (!attention::fused_attention_built())
    std::fprintf(stderr, "bench-attention: no %s row: %s\n", session::kFusedRow,
                 attention::fused_attention_description());
  const runtime::ComputeTarget target = compute_target(g);
  s.device = target.device;
  s.dtype = target.dtype;
  // The device's own best in this run, what each layer's achieved rates are fractions of.
  std::fprintf(stderr, "bench-attention: measuring %s's GEMM and copy peaks...\n",
               target.str().c_str());
  const runtime::DevicePeaks peaks = runtime::measure_device_peaks(s.device, s.dtype);
  std::fprintf(stderr, "bench-attention: %s peaks: %.0f GFLOP/s (%lld^2 GEMM), %.1f GB/s (copy)\n",
               target.str().c_str(), peaks.gflops, static_cast<long long>(peaks.gemm_n),
               peaks.gbytes_per_s);
  Progress progress("bench-attention", int64_t(rows.size() * s.sides.size()), "point");
  const auto points = session::bench_attention(
      s, [&](int64_t done, int64_t, const std::string& what) { progress.update(done, what); });
  progress.finish();
  const auto table = session::attention_bench_table(points, s, &peaks);
  // attention_bench_table adds latency_vs_sdpa and memory_vs_sdpa, last, when sdpa was measured.
  const bool fused = table.columns.back() == "memory_vs_" + std::string(session::kFusedRow);
  std::printf("%-14s %7s %11s %10s %9s %9s %9s %6s %8s %6s%s\n", "mechanism", "N", "latency ms",
              "peak MiB", "lat/base", "mem/base", "GFLOP/s", "%peak", "GB/s", "%peak",
              fused ? "  lat/sdpa  mem/sdpa" : "");
  for (const auto& row : table.rows) {
    std::printf("%-14s %7lld %11.3f %10.2f %9s %9s %9.1f %5.1f%% %8.2f %5.1f%%",
                row[0].str().c_str(), static_cast<long long>(row[2].i), row[3].number(),
                row[4].number(), ratio(row[5].number()).c_str(), ratio(row[6].number()).c_str(),
                row[7].number(), 100.0 * row[8].number(), row[9].number(),
                100.0 * row[10].number());
    if (fused)
      std::printf(" %9s %9s", ratio(row[11].number()).c_str(), ratio(row[12].number()).c_str());
    std::printf("\n");
  }
  for (const auto& p : points)
    if (!p.error.empty())
      std::fprintf(stderr, "bench-attention: %s at N=%lld skipped: %s\n", p.mechanism.c_str(),
                   static_cast<long long>(p.tokens), p.error.c_str());
  if (!out_dir.empty()) {
    analysis::OutputFolder folder(out_dir, session::attention_bench_tag(s));
    folder.write_table(table);
    analysis::write_table_latex(
        folder.dir() + "/" + folder.model_tag() + "__" + table.name + ".tex", table, 3);
    const char* stems[] = {"latency", "memory"};
    const auto figures = session::attention_bench_figures(table, s);
    for (size_t i = 0; i < figures.size(); ++i)
      for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf})
        viz::write_figure(figures[i].figure,
                          folder.dir() + "/" + folder.model_tag() + "__bench_" + stems[i] + "." +
                              viz::figure_format_name(format),
                          format);
    folder.write_sidecar(session::attention_bench_sidecar(s, &peaks, points));
    std::printf("wrote %s\n", out_dir.c_str());
  }
  return kExitOk;
}

}  // namespace attnlab::cli
