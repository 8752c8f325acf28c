// The report's complexity sweep and attention bench; see report_costs.h.
#include "app/cli/report_costs.h"

#include <cstdio>
#include <cstdlib>

#include "app/cli/analyze_common.h"
#include "core/analysis/output_folder.h"
#include "core/io/text.h"

namespace attnlab::cli {

std::vector<int64_t> parse_positive_ints(const std::string& option,
                                         const std::vector<std::string>& values) {
  std::vector<int64_t> out;
  for (const auto& value : values)
    for (const auto& item : text::split(value)) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || !end || *end || v < 1)
        throw UsageError(option + " wants positive integers, e.g. 14,28,56; got '" + item + "'");
      out.push_back(v);
    }
  return out;
}

CostOptions take_cost_options(Args& args) {
  CostOptions o;
  const auto scales = args.take_list("--complexity-scales");
  if (scales.size() == 1 && scales.front() == "none") {
    o.complexity_scales.clear();
  } else if (!scales.empty()) {
    o.complexity = true;
    o.complexity_scales.clear();
    for (const auto& value : scales)
      for (const auto& item : text::split(value)) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || !end || *end || !(v > 0) || v > 16)
          throw UsageError(
              "--complexity-scales wants input sizes as multiples of each model's own "
              "(0 < s <= 16), e.g. 1,2,3, or none; got '" +
              item + "'");
        o.complexity_scales.push_back(v);
      }
  }
  o.bench = args.take_flag("--bench");
  const auto sides = args.take_list("--bench-sides");
  if (!sides.empty()) o.bench_sides = parse_positive_ints("--bench-sides", sides);
  o.bench_repeats = args.take_positive_int("--bench-repeats", o.bench_repeats);
  if (!o.bench && (!sides.empty() || o.bench_repeats != CostOptions{}.bench_repeats))
    throw UsageError("--bench-sides and --bench-repeats go with --bench");
  return o;
}

namespace {

void report_error(std::vector<std::string>& errors, const std::string& what) {
  std::fprintf(stderr, "attnlab: error: %s\n", what.c_str());
  errors.push_back(what);
}

session::FigureJob job_of(const std::string& kind, const std::string& stem,
                          viz::CaptionedFigure figure) {
  return {kind, stem, [figure = std::move(figure)] { return figure; }};
}

}  // namespace

std::vector<session::FigureJob> cost_figure_jobs(const std::vector<CostModel>& models,
                                                 const CostOptions& options,
                                                 const c10::Device& device,
                                                 const std::string& stats_dir,
                                                 std::vector<std::string>& errors) {
  std::vector<session::FigureJob> jobs;
  if (models.empty()) return jobs;
  if (!options.complexity_scales.empty()) {
    std::vector<std::pair<std::string, session::ModelRequest>> requests;
    for (const auto& m : models) requests.emplace_back(m.tag, m.request);
    int64_t total = 1;
    for (const auto& s : options.complexity_scales) total += s != 1.0;
    Progress progress("report: complexity", total * int64_t(models.size()), "size");
    try {
      const session::ComplexitySweep sweep = session::complexity_sweep(
          requests, options.complexity_scales,
          [&](int64_t done, int64_t, const std::string& what) { progress.update(done, what); });
      progress.finish();
      analysis::OutputFolder folder(stats_dir, "complexity");
      folder.write_table(session::complexity_totals_table(sweep.runs));
      folder.write_table(session::complexity_layers_table(sweep.runs));
      viz::CaptionedFigure figure = session::complexity_sweep_figure(sweep);
      for (const auto& note : sweep.notes) std::fprintf(stderr, "report: %s\n", note.c_str());
      jobs.push_back(job_of("complexity", "complexity__macs", std::move(figure)));
    } catch (const std::exception& e) {
      progress.break_line();
      report_error(errors, std::string("complexity: ") + e.what());
    }
  }
  if (options.bench) {
    std::vector<std::string> mechanisms;
    for (const auto& m : models) mechanisms.push_back(m.mechanism);
    session::AttentionBenchSettings s = session::models_bench_settings(mechanisms);
    s.device = device;
    s.sides = options.bench_sides;
    s.repeats = options.bench_repeats;
    Progress progress("report: bench", int64_t(session::bench_rows(s).size() * s.sides.size()),
                      "point");
    try {
      const auto points = session::bench_attention(
          s, [&](int64_t done, int64_t, const std::string& what) { progress.update(done, what); });
      progress.finish();
      for (const auto& p : points)
        if (!p.error.empty())
          std::fprintf(stderr, "report: bench: %s at N=%lld skipped: %s\n", p.mechanism.c_str(),
                       static_cast<long long>(p.tokens), p.error.c_str());
      const analysis::Table table = session::attention_bench_table(points, s);
      analysis::OutputFolder(stats_dir, "bench_" + device.str()).write_table(table);
      const char* stems[] = {"attention_bench__latency", "attention_bench__memory"};
      const auto figures = session::attention_bench_figures(table, s);
      for (size_t i = 0; i < figures.size(); ++i)
        jobs.push_back(job_of("attention_bench", stems[i], figures[i]));
    } catch (const std::exception& e) {
      progress.break_line();
      report_error(errors, std::string("attention bench: ") + e.what());
    }
  }
  return jobs;
}

}  // namespace attnlab::cli
