// `attnlab report`: run the analyses of several models over images and write every paper
// figure (SVG, PDF, PNG), the statistics of `analyze`, and an index.html with captions.
//   report --models M1 M2 ... --images FILES|DIR --out DIR [--formats svg,pdf,png] [--dpi N]
//          [--series CKPT...] [--colormap NAME] [--upsample nearest|bilinear] [--alpha A]
//          [--norm minmax|divmax] [--layer last|N|N/T] [--head N | --head-fusion F]
//          [--map query|rollout] [--compare-scale per-panel|shared]
//          [--compare-difference A,B] [--figures KIND,...] [--img-size H[,W]
//          [--pos-interpolation bicubic|bicubic_antialias]] [analysis options as analyze]
//          [--complexity-scales 1,2,3] [--bench [--bench-sides 14,28,56]]
//          [--img-sizes S1,S2,...]   a resolution sweep of each model (size_sweep.h)
//   (the figure options: report_options.h; they reproduce a GUI view, docs/GUI.md)
//   (each M a checkpoint, or a model config .json for untrained weights)
//   report --demo [--out DIR] [--images ...]   the zoo's models, four demo images, every
//                                              analysis (the opt-in ERF and heads too, not
//                                              faithfulness) and
//                                              Castling's checkpoint series
// A model, image or figure that fails is reported (stderr and index.html) and the rest is
// still written; the exit status is then 1. Every file is written atomically.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/cli/output_failure.h"
#include "app/cli/report_cka.h"
#include "app/cli/report_costs.h"
#include "app/cli/report_figures.h"
#include "app/cli/report_index.h"
#include "app/cli/report_options.h"
#include "app/cli/report_run.h"
#include "app/cli/size_sweep.h"
#include "app/session/analysis_registry.h"
#include "app/session/cost_figures.h"
#include "app/session/edited_input.h"
#include "app/session/predictions.h"
#include "app/session/query.h"
#include "core/analysis/output_folder.h"
#include "core/io/file_bytes.h"
#include "core/runtime/data_paths.h"
#include "core/runtime/precision.h"
#include "models/config_mechanism.h"
#include "models/zoo.h"
#include "viz/render.h"

namespace fs = std::filesystem;

namespace attnlab::cli {
namespace {

// The demo: one image per class family that reads well at 28x28.
const char* kDemoImages[] = {
    "fashion-mnist/09-ankle-boot-00000.png", "fashion-mnist/00-t-shirt-top-00019.png",
    "fashion-mnist/08-bag-00030.png", "fashion-mnist/07-sneaker-00009.png"};

std::string demo_asset(const std::string& rel) {
  const std::string assets = runtime::assets_data_dir().path;
  if (assets.empty())
    throw UsageError("--demo needs the demo images (share/attnlab/assets, or $ATTNLAB_ASSETS)");
  return (fs::path(assets) / rel).string();
}

}  // namespace

int cmd_report(Args args, const GlobalOptions& g) {
  const bool demo = args.take_flag("--demo");
  // Presets without weights: their architecture with seeded random weights (timing runs,
  // the notebook comparison); a checkpoint named beside it is an error for that model.
  const bool random_init = args.take_flag("--random-init");
  std::vector<std::string> model_args = args.take_list("--models");
  std::vector<std::string> image_args = args.take_list("--images");
  std::vector<std::string> series_files = args.take_list("--series");
  std::string out = args.take_option("--out");
  ReportFigureOptions options = take_report_figure_options(args);
  const std::vector<viz::FigureFormat>& formats = options.formats;
  const double dpi = options.dpi;
  session::FigureOptions& fig = options.figure;
  // The class names of every model (one file for all; read now, so a bad one fails before
  // anything is written).
  const std::string names_path = args.take_option("--class-names");
  const std::vector<std::string> class_names =
      names_path.empty() ? std::vector<std::string>{} : session::read_class_names(names_path);
  // Every model at one input size (a model that cannot take it is skipped with the reason).
  std::vector<int64_t> img_size;
  if (const std::string size = args.take_option("--img-size"); !size.empty())
    img_size = parse_img_size(size);
  // A resolution sweep of each model: its over_sizes statistics at these sizes.
  std::vector<int64_t> sweep_sizes;
  if (const std::string sizes = args.take_option("--img-sizes"); !sizes.empty())
    sweep_sizes = parse_img_sizes(sizes);
  std::string pos_interpolation = args.take_option("--pos-interpolation");
  if (!pos_interpolation.empty() && img_size.empty())
    throw UsageError("--pos-interpolation goes with --img-size");
  CostOptions cost = take_cost_options(args);
  // The demo shows every analysis but those that are slow even on the zoo's small models
  // (AnalysisInfo::in_demo: ERF and one forward per head cost milliseconds there, the
  // faithfulness curves hundreds of forwards); otherwise "all".
  std::string default_analyses = "all";
  if (demo)
    for (const auto& a : session::analyses())
      if (a.opt_in && a.in_demo) default_analyses += "," + a.name;
  session::AnalysisSettings settings = take_analysis_settings(args, default_analyses);
  const auto rest = args.positionals();
  image_args.insert(image_args.end(), rest.begin(), rest.end());

  if (demo) {
    const std::string zoo = models::zoo_dir();
    if (zoo.empty())
      throw UsageError(
          "--demo needs the model zoo (share/attnlab/zoo, models/zoo or $ATTNLAB_ZOO)");
    const models::ZooDemo contents = models::zoo_demo(zoo);
    if (model_args.empty()) model_args = contents.models;
    if (image_args.empty())
      for (const char* im : kDemoImages) image_args.push_back(demo_asset(im));
    if (series_files.empty() && !contents.series.empty())
      series_files = models::zoo_series_files(zoo, contents.series.front());
    if (out.empty()) out = "attnlab-report";
  }
  if (model_args.empty())
    throw UsageError("name the models: --models CHECKPOINT|CONFIG.json... (or --demo)");
  if (image_args.empty()) throw UsageError("name the images: --images FILES|DIR");
  if (out.empty()) throw UsageError("name the output folder: --out DIR");
  const std::vector<ImageInput> images = expand_images(image_args);

  const auto t0 = std::chrono::steady_clock::now();
  const runtime::ComputeTarget target = compute_target(g);
  create_output_folder(fs::path(out) / "figures");
  const std::string stats_dir = (fs::path(out) / "stats").string();
  create_output_folder(stats_dir);
  const nlohmann::json run = run_description(g, target, settings);
  // The what-if edits beside the figures (every figure is of the edited pictures).
  if (!settings.edits.empty())
    io::write_file_atomic((fs::path(out) / session::kEditsFile).string(),
                          session::edits_file_text(settings.edits));
  std::vector<std::string> errors;

  std::vector<ModelResults> results;
  std::vector<CostModel> cost_models;  // what the cost figures count and measure
  std::vector<ModelChoice> analysed;   // the models that worked, for CKA between models
  std::vector<session::ModelRequest> requests;  // of `analysed`, for the resolution sweeps
  for (const auto& m : model_args) {
    try {  // a bad checkpoint (unreadable, foreign, wrong architecture) skips that model only
      session::ModelRequest request = session::model_entry_request(m);
      if (random_init) request.random_init = true;
      request.img_size = img_size;
      if (!pos_interpolation.empty()) request.pos_interpolation = pos_interpolation;
      request.hash_checkpoint = true;  // for the model's sidecar
      ModelChoice c = choose_request(request);
      if (!class_names.empty()) {
        c.class_names = class_names;
        c.class_names_path = names_path;
      }
      results.push_back(run_report_model(c, images, settings, target, stats_dir, run));
      cost_models.push_back({c.tag, request, models::config_mechanism(c.config)});
      analysed.push_back(c);
      requests.push_back(request);
      for (const auto& f : results.back().failed_images)
        errors.push_back(c.tag + ": image " + f + " could not be analysed");
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: model %s: %s (skipped)\n", m.c_str(), e.what());
      errors.push_back("model " + m + ": " + e.what());
    }
  }
  // The analyses measured over a checkpoint series or a resolution sweep: the registry's
  // analyses of that kind among those asked for, or all of them when none was asked for.
  const auto asked_of_kind = [&](bool session::AnalysisInfo::*kind) {
    std::set<std::string> asked, every;
    for (const auto& a : session::analyses())
      if (a.*kind) {
        every.insert(a.name);
        if (settings.analyses.count(a.name)) asked.insert(a.name);
      }
    return asked.empty() ? every : asked;
  };
  std::optional<session::SeriesResults> series;
  const std::set<std::string> series_analyses = asked_of_kind(&session::AnalysisInfo::series);
  if (!series_files.empty() && !series_analyses.empty()) {
    try {
      session::AnalysisSettings ss = settings;
      ss.analyses = series_analyses;
      ModelChoice base;
      {
        Args one({"--model", series_files.front()});
        base = take_model_choice(one);
        base.hash_checkpoint = true;  // each checkpoint's, as with_checkpoint takes it
      }
      session::SeriesResults s;
      s.name = fs::path(series_files.front()).parent_path().filename().string();
      if (s.name.empty()) s.name = "series";
      const SeriesResult r = analyse_series(base, series_files, images, ss, target);
      analysis::OutputFolder folder(stats_dir, s.name);
      for (const auto& t : r.tables) folder.write_table(t);
      s.tables = r.tables;
      series = std::move(s);
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: checkpoint series: %s (skipped)\n", e.what());
      errors.push_back(std::string("checkpoint series: ") + e.what());
    }
  }

  // Each model's resolution sweep at every size of --img-sizes (a model that cannot take
  // one is reported).
  std::vector<session::SeriesResults> sweeps;
  if (!sweep_sizes.empty()) {
    session::AnalysisSettings ss = settings;
    ss.analyses = asked_of_kind(&session::AnalysisInfo::over_sizes);
    for (size_t m = 0; m < analysed.size(); ++m) {
      try {
        session::ModelRequest r = requests[m];
        r.img_size.clear();
        SizeSweep sweep = analyse_sizes(r, analysed[m].tag, sweep_sizes, images, ss, target);
        analysis::OutputFolder folder(stats_dir, analysed[m].tag + "_sizes");
        for (const auto& t : sweep.results.tables) folder.write_table(t);
        folder.write_table(sweep.costs);
        if (sweep.any_failed)
          errors.push_back(analysed[m].tag + ": an image failed in the resolution sweep");
        sweeps.push_back(std::move(sweep.results));
      } catch (const std::exception& e) {
        if (is_output_failure(e)) throw;
        std::fprintf(stderr, "attnlab: error: resolution sweep of %s: %s (skipped)\n",
                     analysed[m].tag.c_str(), e.what());
        errors.push_back("resolution sweep of " + analysed[m].tag + ": " + e.what());
      }
    }
  }

  fig.rollout_switches = session::describe_rollout(session::rollout_options(settings.options));
  std::vector<session::FigureJob> jobs =
      session::report_figure_jobs(results, series, fig, sweeps);
  // CKA between models: a pass of its own over the images (report_cka.h).
  if (settings.analyses.count("cka") && analysed.size() >= 2) {
    try {
      CrossModelCka cka = cross_model_cka(analysed, images, target, settings.edits);
      analysis::OutputFolder folder(stats_dir, "models");
      folder.write_table(cka.table);
      for (const auto& f : cka.failed)
        errors.push_back("cka between models: image " + f + " could not be analysed");
      // Beside the per-model CKA figure (the index lists figures in job order).
      auto after = std::find_if(jobs.rbegin(), jobs.rend(),
                                [](const session::FigureJob& j) { return j.kind == "cka"; });
      jobs.insert(after.base(), {"cka", "cka__models", [pairs = std::move(cka.pairs)] {
                                   return viz::cka_pairs_figure(pairs);
                                 }});
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: %s (skipped)\n", e.what());
      errors.push_back(e.what());
    }
  }
  // --figures: only these kinds; without it every kind but those written on request.
  std::set<std::string> on_request;
  for (const auto& k : session::figure_kinds())
    if (k.on_request) on_request.insert(k.id);
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                            [&](const session::FigureJob& j) {
                              return options.kinds.empty() ? on_request.count(j.kind) > 0
                                                           : options.kinds.count(j.kind) == 0;
                            }),
             jobs.end());
  const auto wanted = [&](const char* kind) {
    return options.kinds.empty() || options.kinds.count(kind) > 0;
  };
  if (!wanted("complexity")) cost.complexity_scales.clear();
  if (!wanted("attention_bench")) cost.bench = false;
  // The analyses' figures are drawn side by side; the cost figures, which count and time
  // with LibTorch, after them one at a time.
  const size_t parallel_jobs = jobs.size();
  for (auto& job : cost_figure_jobs(cost_models, cost, target.device, stats_dir, errors))
    jobs.push_back(std::move(job));
  IndexPage page;
  FigureStageResult figures =
      write_report_figures(jobs, parallel_jobs, formats, (fs::path(out) / "figures").string(), dpi);
  page.figures = std::move(figures.written);
  errors.insert(errors.end(), figures.errors.begin(), figures.errors.end());

  page.title = demo ? "attnlab report — the model zoo on the demo images" : "attnlab report";
  std::string model_names;
  for (const auto& r : results) model_names += (model_names.empty() ? "" : ", ") + r.name;
  const analysis::RankOptions rank = session::rank_options(settings.options);
  page.settings =
      "Models: " + model_names + ". Images: " + std::to_string(images.size()) +
      ", preprocessed as each model's preset says (" +
      (results.empty() ? std::string("-") : results.front().preprocessing) + "). Query: " +
      (settings.query_y >= 0
           ? "(" + std::to_string(settings.query_y) + ", " + std::to_string(settings.query_x) + ")"
           : std::string("the centre of the first layer's grid")) +
      ". Maps: " + viz::describe_style(fig.style) + ". Rollout: " + fig.rollout_switches +
      ". Rank: numerical rank with " +
      (rank.rtol > 0 || rank.atol > 0 ? "a user-set tolerance (" + rank.describe() + ")"
                                      : std::string("torch.linalg.matrix_rank's float32 rule")) +
      ", rank above float32 precision (float64 SVD), effective and stable rank" +
      (settings.edits.empty()
           ? std::string()
           : ". What-if edits on every image, in each model's first-layer "
             "tokens: " +
                 image::edits_text(settings.edits) + " (" + session::kEditsFile + ")") +
      ". Figures at " + std::to_string(int(dpi)) + " dpi (PNG); device " + target.str() + ".";
  for (const auto& entry : fs::directory_iterator(stats_dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() &&
        (entry.path().extension() == ".csv" ||
         (name.size() > 14 && name.substr(name.size() - 14) == "_settings.json")))
      page.stats_files.push_back("stats/" + name);
  }
  std::sort(page.stats_files.begin(), page.stats_files.end());
  page.errors = errors;
  page.run = run;
  page.run["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  page.run["figures"] = page.figures.size();
  const std::string index = (fs::path(out) / "index.html").string();
  io::write_file_atomic(index, render_index_html(page));
  std::printf(
      "report: %zu figures (%zu files) for %zu model(s) x %zu image(s) in %s (%.1f s)%s\n",
      page.figures.size(), page.figures.size() * formats.size(), results.size(), images.size(),
      index.c_str(), page.run["seconds"].get<double>(),
      errors.empty()
          ? ""
          : (" — " + std::to_string(errors.size()) + " problem(s), listed in the index").c_str());
  return errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace attnlab::cli
