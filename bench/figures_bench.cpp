// Figure rendering: every kind of paper figure built from real analysis results (the zoo
// on a demo image, Castling's series) and rendered to an 800x600 RGBA buffer, the size a
// GUI panel shows — the target is <= 10 ms per figure. Results are computed once, outside
// the timed loop; the timing covers building the figure description and rendering it.
// Baseline in the same run: an empty 800x600 figure (the fixed cost of a cairo surface
// and the RGBA conversion).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "app/cli/report_run.h"
#include "app/session/analysis_registry.h"
#include "models/zoo.h"
#include "viz/render.h"

namespace fs = std::filesystem;
using namespace attnlab;

namespace {

constexpr double kWidthIn = 8, kHeightIn = 6, kDpi = 100;  // 800 x 600 pixels

struct Inputs {
  std::vector<session::ModelResults> models, cls_model;
  std::optional<session::SeriesResults> series;
  std::map<std::string, session::FigureJob> first_job;  // one job per figure kind
};

Inputs& inputs() {
  static Inputs in = [] {
    Inputs r;
    const std::string zoo = models::zoo_dir();
    const std::string image =
        std::string(ATTNLAB_SOURCE_DIR) + "/assets/fashion-mnist/09-ankle-boot-00000.png";
    const auto images = cli::expand_images({image});
    session::AnalysisSettings settings;
    settings.analyses = session::parse_analyses("all");
    const std::string stats = (fs::temp_directory_path() / "attnlab_figures_bench").string();
    fs::create_directories(stats);
    const runtime::ComputeTarget cpu;  // the CPU at fp32
    const models::ZooDemo demo = models::zoo_demo(zoo);
    for (const std::string& m : demo.models) {
      cli::Args a({"--model", m});
      r.models.push_back(
          cli::run_report_model(cli::take_model_choice(a), images, settings, cpu, stats, {}));
    }
    auto files = models::zoo_series_files(zoo, demo.series.front());
    cli::Args a({"--model", files.front()});
    session::AnalysisSettings mask = settings;
    mask.analyses.clear();  // the analyses the registry measures over a series
    for (const auto& info : session::analyses())
      if (info.series) mask.analyses.insert(info.name);
    const cli::SeriesResult s =
        cli::analyse_series(cli::take_model_choice(a), files, images, mask, cpu);
    r.series = session::SeriesResults{"castling_series", s.tables};
    for (auto& job : session::report_figure_jobs(r.models, r.series, {}))
      if (!r.first_job.count(job.kind)) r.first_job.emplace(job.kind, job);
    // The zoo has no cls token: the prefix-token maps come from the DeiT fixture checkpoint.
    cli::Args deit(
        {"--model", std::string(ATTNLAB_SHARED_DIR) + "/fixtures/parity/deit_mini.safetensors"});
    r.cls_model.push_back(
        cli::run_report_model(cli::take_model_choice(deit), images, settings, cpu, stats, {}));
    for (auto& job : session::report_figure_jobs(r.cls_model, std::nullopt, {}))
      if (!r.first_job.count(job.kind)) r.first_job.emplace(job.kind, job);
    fs::remove_all(stats);
    return r;
  }();
  return in;
}

void BM_EmptyFigure(benchmark::State& state) {
  viz::Figure f;
  f.width_in = kWidthIn;
  f.height_in = kHeightIn;
  for (auto _ : state) benchmark::DoNotOptimize(viz::render_rgba(f, kDpi));
}
BENCHMARK(BM_EmptyFigure)->Unit(benchmark::kMillisecond);

void BM_Figure(benchmark::State& state, const std::string& kind) {
  const auto it = inputs().first_job.find(kind);
  if (it == inputs().first_job.end()) {
    state.SkipWithError(("no " + kind + " figure in the results").c_str());
    return;
  }
  for (auto _ : state) {
    viz::CaptionedFigure cf = it->second.build();
    cf.figure.width_in = kWidthIn;
    cf.figure.height_in = kHeightIn;
    benchmark::DoNotOptimize(viz::render_rgba(cf.figure, kDpi));
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto& k : session::figure_kinds())
    benchmark::RegisterBenchmark(("BM_Figure/" + k.id).c_str(), BM_Figure, k.id)
        ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
