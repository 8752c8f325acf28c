// The analysis engine on CPU, against the plain forward pass in the same run: deit_small
// at 224 (random weights, eval, batch 1): one image through every analysis (forward with
// traces + AnalysisSession::add with "all"), each analysis alone on a stored forward
// result, one query's maps in all 12 layers × 6 heads, rank statistics of every head; and
// a 100-image set through deit_tiny with every analysis (images/s). Arrays go to a sink
// that drops them (file writing is not timed); the new analyses' time and peak memory on
// deit_small and on ravlt_t (3136 tokens). Results: docs/BENCHMARKS.md.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string>

#include "app/session/analysis_session.h"
#include "app/session/query.h"
#include "bench/preset_model.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/faithfulness.h"
#include "core/analysis/rank.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "core/runtime/allocator_tuning.h"
#include "core/runtime/memory_probe.h"
#include "models/erf_run.h"
#include "models/faithfulness_run.h"
#include "models/head_ablation.h"

namespace {

using namespace attnlab;

session::AnalysisSettings settings_for(const std::string& analyses) {
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses(analyses);
  return s;
}

constexpr const char* kModel = "deit_small_patch16_224";

// Times `model->run(x, options)` after one untimed warm-up; items are images.
void time_forward(benchmark::State& state, const at::Tensor& x,
                  const models::ForwardOptions& options) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model(kModel);
  model->run(x, options);
  for (auto _ : state) benchmark::DoNotOptimize(model->run(x, options).logits);
  state.SetItemsProcessed(state.iterations() * x.size(0));
}

// One traced forward of a random image: what the single-analysis benchmarks work on.
models::ForwardResult traced_image(const models::ForwardOptions& options) {
  at::NoGradGuard no_grad;
  return bench::preset_model(kModel)->run(at::randn({1, 3, 224, 224}), options);
}

models::ForwardOptions attention_traces() {
  models::ForwardOptions o;
  o.trace_attention = true;
  return o;
}

// The plain forward pass of a batch of B images (B = 1: the baseline of every ratio here);
// per image, items/s: what batching the images through the model gains.
void BM_Forward(benchmark::State& state) {
  time_forward(state, at::randn({state.range(0), 3, 224, 224}), {});
}
BENCHMARK(BM_Forward)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();

// The forward pass the analyses need (attention traces and module outputs), against
// BM_Forward/1: what recording costs.
void BM_ForwardWithTraces(benchmark::State& state) {
  time_forward(state, at::randn({1, 3, 224, 224}),
               settings_for("maps,rank,spectra").forward_options());
}
BENCHMARK(BM_ForwardWithTraces)->Unit(benchmark::kMillisecond)->UseRealTime();

// One image through the forward with traces and the analyses (`all`, or the notebook
// peer's maps, rank and spectra): against BM_Forward/1, what the analyses cost per image.
void BM_ForwardAndAnalyses(benchmark::State& state, const std::string& analyses) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model(kModel);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  const auto s = settings_for(analyses);
  model->run(x, s.forward_options());
  for (auto _ : state) {
    session::AnalysisSession session(s, nullptr);
    session.add("image", model->run(x, s.forward_options()));
    benchmark::DoNotOptimize(session.images());
  }
}
BENCHMARK_CAPTURE(BM_ForwardAndAnalyses, all, std::string("all"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_ForwardAndAnalyses, maps_rank_spectra, std::string("maps,rank,spectra"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same per image of a long run (analyze over an image set): one session takes every
// iteration's image, as the CLI's does, so its tables have their rows already (issue 51's
// per-image overhead: this against BM_Forward/1).
// deit_small, an image and one session that has already taken a warm-up image: what the
// long-run benchmarks send their images through.
// The image is random noise, or with `photo` the chelsea photo as `analyze` preprocesses
// it: the random weights' near-uniform attention makes most heads' outputs on a photo
// nearly rank one, and those take the rank analysis's SVD route (core/analysis/rank.cpp),
// where noise leaves most heads full rank (its Gram route).
struct LongRun {
  std::shared_ptr<models::Backbone> model = bench::preset_model(kModel);
  at::Tensor x;
  session::AnalysisSettings settings;
  session::AnalysisSession session;
  int64_t image = 0;

  explicit LongRun(const std::string& analyses, bool photo = false)
      : x(photo ? image::preprocess(io::load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) +
                                                       "/assets/photos/chelsea.png"),
                                    models::find_preset(kModel).preprocessing)
                : at::randn({1, 3, 224, 224})),
        settings(settings_for(analyses)),
        session(settings, nullptr) {
    at::NoGradGuard no_grad;
    session.add("warm-up", model->run(x, settings.forward_options()));
  }
  // The next image: a traced forward into the session.
  void add() {
    session.add("image" + std::to_string(image++), model->run(x, settings.forward_options()));
  }
};

void BM_ForwardAndAnalysesStreaming(benchmark::State& state, const std::string& analyses) {
  at::NoGradGuard no_grad;
  LongRun run(analyses);
  for (auto _ : state) run.add();
  benchmark::DoNotOptimize(run.session.images());
}
BENCHMARK_CAPTURE(BM_ForwardAndAnalysesStreaming, maps_rank_spectra,
                  std::string("maps,rank,spectra"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Issue 51's ratio measured pairwise: each iteration times the bare forward of an image and
// then the same image's forward with traces into a long-running session (as
// BM_ForwardAndAnalysesStreaming), back to back, so that a machine whose speed drifts (a
// shared VM) slows both alike. `ratio` is the analysed time over the bare time, summed over
// the iterations; the reported time is the pair's.
void BM_AnalysisOverheadPaired(benchmark::State& state, const std::string& analyses, bool photo) {
  at::NoGradGuard no_grad;
  LongRun run(analyses, photo);
  run.model->run(run.x, {});
  using clock = std::chrono::steady_clock;
  double bare = 0.0, analysed = 0.0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    benchmark::DoNotOptimize(run.model->run(run.x, {}).logits);
    const auto t1 = clock::now();
    run.add();
    const auto t2 = clock::now();
    bare += std::chrono::duration<double>(t1 - t0).count();
    analysed += std::chrono::duration<double>(t2 - t1).count();
  }
  state.counters["ratio"] = analysed / bare;
  state.counters["bare_ms"] = 1e3 * bare / double(state.iterations());
  state.counters["analysed_ms"] = 1e3 * analysed / double(state.iterations());
}
BENCHMARK_CAPTURE(BM_AnalysisOverheadPaired, maps_rank_spectra, std::string("maps,rank,spectra"),
                  false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AnalysisOverheadPaired, maps_rank_spectra_photo,
                  std::string("maps,rank,spectra"), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OneAnalysis(benchmark::State& state, const std::string& analysis) {
  at::NoGradGuard no_grad;
  const auto s = settings_for(analysis);
  const models::ForwardResult r = traced_image(s.forward_options());
  for (auto _ : state) {
    session::AnalysisSession session(s, nullptr);
    session.add("image", r);
    benchmark::DoNotOptimize(session.images());
  }
}
// Registers fn once per analyses list, as "<family>/<the list with '_' for ','>" (what
// BENCHMARK_CAPTURE named them), in milliseconds of real time.
int register_each(const char* family, void (*fn)(benchmark::State&, const std::string&),
                  std::initializer_list<const char*> analyses) {
  for (const std::string list : analyses) {
    std::string name = list;
    std::replace(name.begin(), name.end(), ',', '_');
    benchmark::RegisterBenchmark((family + ("/" + name)).c_str(), fn, list)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return 0;
}

// maps_rank_spectra: the three of the issue-51 overhead together, on one recorded forward (a
// fresh session each time, so with its tables' first-image work).
const int kOneAnalysis = register_each(
    "BM_OneAnalysis", BM_OneAnalysis,
    {"maps,rank,spectra", "maps", "rollout", "rank", "spectra", "locality", "entropy", "map_rank"});

// Each of issue 51's analyses in a long run, on one recorded forward: one session takes
// every iteration's image (its tables' rows already known), as in
// BM_ForwardAndAnalysesStreaming, so these are that benchmark's parts without the forward.
void BM_OneAnalysisStreaming(benchmark::State& state, const std::string& analysis) {
  at::NoGradGuard no_grad;
  const auto s = settings_for(analysis);
  const models::ForwardResult r = traced_image(s.forward_options());
  session::AnalysisSession session(s, nullptr);
  session.add("warm-up", r);
  int64_t image = 0;
  for (auto _ : state) session.add("image" + std::to_string(image++), r);
  benchmark::DoNotOptimize(session.images());
}
const int kOneAnalysisStreaming =
    register_each("BM_OneAnalysisStreaming", BM_OneAnalysisStreaming, {"maps", "rank", "spectra"});

// One query's map from stored traces, as Traces.query_map answers it in the Python module
// (python/src/bind_traces.cpp): deit_small's last layer (196 patch tokens, 6 heads), query
// (7, 7), the head mean, copied out to a float buffer as the binding copies it to numpy.
// bench/peer/bench_python.py times the same call from Python for the binding's overhead.
void BM_QueryMap196(benchmark::State& state) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model(kModel);
  const session::AnalysisSettings s = settings_for("maps");
  const models::ForwardResult r = model->run(at::randn({1, 3, 224, 224}), s.forward_options());
  session::AnalysisSettings query;
  query.query_y = 7;
  query.query_x = 7;
  std::vector<float> out;
  for (auto _ : state) {
    const auto& trace = *r.traces.back().trace;
    const session::Query q = session::resolve_query(query, r.traces.front().trace->layout);
    const session::LayerQueryMaps maps =
        session::layer_query_maps(trace, 0, q.token_in(trace.layout));
    const at::Tensor map =
        analysis::fuse_heads(maps.map.grid, analysis::HeadFusion::Mean).to(at::kFloat).contiguous();
    out.assign(map.data_ptr<float>(), map.data_ptr<float>() + map.numel());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_QueryMap196)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Issue 26's cost table: each new analysis alone on one stored image against the plain
// forward of the same model in the same run, time and peak memory (counter peak_MiB: what
// LibTorch allocates on the CPU while the step runs, beyond what was live before it), on
// deit_small at 224 (197 tokens) and ravlt_t at 224 (3136 tokens in stage 1).
void BM_CostForward(benchmark::State& state, const std::string& model_name) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model(model_name);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  model->run(x);
  runtime::CpuMemoryProbe probe;
  for (auto _ : state) benchmark::DoNotOptimize(model->run(x).logits);
  state.counters["peak_MiB"] = double(probe.peak_bytes() - probe.live_bytes()) / (1 << 20);
}
void BM_CostAnalysis(benchmark::State& state, const std::string& model_name,
                     const std::string& analysis) {
  at::NoGradGuard no_grad;
  const auto s = settings_for(analysis);
  const models::ForwardResult r =
      bench::preset_model(model_name)->run(at::randn({1, 3, 224, 224}), s.forward_options());
  runtime::CpuMemoryProbe probe;
  for (auto _ : state) {
    session::AnalysisSession session(s, [](const analysis::Array&) {});
    session.add("image", r);
    benchmark::DoNotOptimize(session.images());
  }
  state.counters["peak_MiB"] = double(probe.peak_bytes() - probe.live_bytes()) / (1 << 20);
}
// The two opt-in analyses run the model themselves: ERF one forward with autograd and a
// backward to the pixels, heads one (resumed) forward per head, so each is timed with its
// forwards, against the plain forward above.
void BM_CostErf(benchmark::State& state, const std::string& model_name) {
  auto model = bench::preset_model(model_name);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  models::run_erf(*model, x);
  runtime::CpuMemoryProbe probe;
  for (auto _ : state) benchmark::DoNotOptimize(models::run_erf(*model, x).map);
  state.counters["peak_MiB"] = double(probe.peak_bytes() - probe.live_bytes()) / (1 << 20);
}
// resume: each ablated forward starts at the ablated layer's block (as shipped); the
// baseline without it runs every ablated forward from the images.
void BM_CostHeads(benchmark::State& state, const std::string& model_name, bool resume) {
  auto model = bench::preset_model(model_name);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  const models::AblationPlan plan = models::plan_head_ablation(*model);
  runtime::CpuMemoryProbe probe;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        models::ablate_heads(*model, plan, x, at::Tensor(), {}, resume).probability);
  state.counters["peak_MiB"] = double(probe.peak_bytes() - probe.live_bytes()) / (1 << 20);
  state.counters["heads"] = double(plan.heads());
}
// Faithfulness (issue 27): scoring one map of one image, the 3 × 21 perturbed forwards of
// the deletion, insertion and negative perturbation curves at 5 % steps, batches of 32.
void BM_CostFaithfulnessCurves(benchmark::State& state, const std::string& model_name) {
  auto model = bench::preset_model(model_name);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  const at::Tensor base = models::baseline_image(x, models::PerturbBaseline::Blur);
  const at::Tensor map = analysis::random_map(14, 14, 1);
  runtime::CpuMemoryProbe probe;
  for (auto _ : state)
    benchmark::DoNotOptimize(models::perturbation_curves(*model, x, base, map, 0, 0).auc_deletion);
  state.counters["peak_MiB"] = double(probe.peak_bytes() - probe.live_bytes()) / (1 << 20);
}
BENCHMARK_CAPTURE(BM_CostFaithfulnessCurves, deit_small, std::string("deit_small_patch16_224"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostErf, deit_small, std::string("deit_small_patch16_224"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostHeads, deit_small, std::string("deit_small_patch16_224"), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostHeads, deit_small_from_images, std::string("deit_small_patch16_224"),
                  false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostErf, ravlt_t, std::string("ravlt_t"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostHeads, ravlt_t, std::string("ravlt_t"), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostHeads, ravlt_t_from_images, std::string("ravlt_t"), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostForward, deit_small, std::string("deit_small_patch16_224"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, deit_small_map_rank, std::string("deit_small_patch16_224"),
                  std::string("map_rank"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, deit_small_entropy, std::string("deit_small_patch16_224"),
                  std::string("entropy"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, deit_small_outliers, std::string("deit_small_patch16_224"),
                  std::string("outliers"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, deit_small_cka, std::string("deit_small_patch16_224"),
                  std::string("cka"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostForward, ravlt_t, std::string("ravlt_t"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, ravlt_t_map_rank, std::string("ravlt_t"), std::string("map_rank"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, ravlt_t_entropy, std::string("ravlt_t"), std::string("entropy"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, ravlt_t_outliers, std::string("ravlt_t"), std::string("outliers"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CostAnalysis, ravlt_t_cka, std::string("ravlt_t"), std::string("cka"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_QueryOverview(benchmark::State& state) {
  at::NoGradGuard no_grad;
  const models::ForwardResult r = traced_image(attention_traces());
  std::vector<const attention::AttentionTrace*> layers;
  for (const auto& t : r.traces) layers.push_back(t.trace.get());
  analysis::GridQuery q{7, 7, 14, 14};
  for (auto _ : state) {
    auto maps = analysis::query_overview(layers, 0, q);  // 12 layers × 6 heads
    benchmark::DoNotOptimize(maps.back().grid.data_ptr<float>());
  }
}
BENCHMARK(BM_QueryOverview)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RankAllHeads(benchmark::State& state) {
  at::NoGradGuard no_grad;
  const models::ForwardResult r = traced_image(attention_traces());
  for (auto _ : state) {
    int64_t total = 0;
    for (const auto& t : r.traces)  // 12 layers × 6 heads of (197 × 64) output features
      for (const auto& subject : analysis::rank_subjects(*t.trace, 0))
        for (const auto& s : analysis::rank_statistics(subject.matrices)) total += s.rank;
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_RankAllHeads)->Unit(benchmark::kMillisecond)->UseRealTime();

// The SVD part of the above alone: rank statistics of the 72 stored head outputs.
void BM_RankStatisticsOfStoredHeads(benchmark::State& state) {
  at::NoGradGuard no_grad;
  const models::ForwardResult r = traced_image(attention_traces());
  std::vector<at::Tensor> stacks;
  for (const auto& t : r.traces)
    for (const auto& subject : analysis::rank_subjects(*t.trace, 0))
      stacks.push_back(subject.matrices);
  for (auto _ : state) {
    int64_t total = 0;
    for (const auto& m : stacks)
      for (const auto& s : analysis::rank_statistics(m)) total += s.rank;
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_RankStatisticsOfStoredHeads)->Unit(benchmark::kMillisecond)->UseRealTime();

// The baseline for the image set: the same 100 images through the plain forward.
void BM_ImageSet100Forward(benchmark::State& state) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model("deit_tiny_patch16_224");
  const at::Tensor images = at::randn({100, 3, 224, 224});
  for (auto _ : state)
    for (int64_t i = 0; i < images.size(0); ++i)
      benchmark::DoNotOptimize(model->run(images.slice(0, i, i + 1)).logits);
  state.SetItemsProcessed(state.iterations() * images.size(0));
}
BENCHMARK(BM_ImageSet100Forward)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_ImageSet100(benchmark::State& state) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model("deit_tiny_patch16_224");
  const auto s = settings_for("all");
  const at::Tensor images = at::randn({100, 3, 224, 224});
  for (auto _ : state) {
    session::AnalysisSession session(s, [](const analysis::Array&) {});
    for (int64_t i = 0; i < images.size(0); ++i)
      session.add("image", model->run(images.slice(0, i, i + 1), s.forward_options()));
    benchmark::DoNotOptimize(session.tables());
  }
  state.SetItemsProcessed(state.iterations() * images.size(0));
}
BENCHMARK(BM_ImageSet100)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

// As the attnlab executable runs (core/runtime/allocator_tuning.h), so that the ratios here
// are those of the CLI.
int main(int argc, char** argv) {
  attnlab::runtime::tune_allocator();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
