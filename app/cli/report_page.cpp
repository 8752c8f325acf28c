// `attnlab report`'s figures and index (report_page.h).
#include "app/cli/report_page.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/cli/report_figures.h"
#include "app/cli/report_index.h"
#include "app/session/analysis_registry.h"
#include "app/session/edited_input.h"
#include "app/session/query.h"
#include "core/io/file_bytes.h"
#include "viz/render.h"

namespace fs = std::filesystem;

namespace attnlab::cli {

int finish_report(const ReportRequest& req, ReportParts& parts,
                  const runtime::ComputeTarget& target, const nlohmann::json& run,
                  const std::string& stats_dir, std::chrono::steady_clock::time_point started) {
  const auto t0 = started;
  session::FigureOptions fig = req.options.figure;
  const ReportFigureOptions& options = req.options;
  const std::vector<viz::FigureFormat>& formats = options.formats;
  const double dpi = options.dpi;
  const session::AnalysisSettings& settings = req.settings;
  CostOptions cost = req.cost;
  std::vector<std::string>& errors = parts.errors;
  const std::vector<ModelResults>& results = parts.results;
  fig.rollout_switches = session::describe_rollout(session::rollout_options(settings.options));
  std::vector<session::FigureJob> jobs =
      session::report_figure_jobs(results, parts.series, fig, parts.sweeps);
  // CKA between models (report_cka.h): beside the per-model CKA figure (the index lists
  // figures in job order).
  if (parts.cka) {
    auto after = std::find_if(jobs.rbegin(), jobs.rend(),
                              [](const session::FigureJob& j) { return j.kind == "cka"; });
    jobs.insert(after.base(), {"cka", "cka__models", [pairs = parts.cka->pairs] {
                                 return viz::cka_pairs_figure(pairs);
                               }});
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
  // The complexity sweep only when asked: by --complexity-scales LIST, or --figures complexity.
  if (!(options.kinds.empty() ? cost.complexity : wanted("complexity")))
    cost.complexity_scales.clear();
  if (!wanted("attention_bench")) cost.bench = false;
  // The analyses' figures are drawn side by side; the cost figures, which count and time
  // with LibTorch, after them one at a time.
  const size_t parallel_jobs = jobs.size();
  for (auto& job : cost_figure_jobs(parts.cost_models, cost, target.device, stats_dir, errors))
    jobs.push_back(std::move(job));
  IndexPage page;
  FigureStageResult figures = write_report_figures(jobs, parallel_jobs, formats,
                                                   (fs::path(req.out) / "figures").string(), dpi);
  page.figures = std::move(figures.written);
  errors.insert(errors.end(), figures.errors.begin(), figures.errors.end());

  page.title = req.demo ? "attnlab report — the model zoo on the demo images" : "attnlab report";
  std::string model_names;
  for (const auto& r : results) model_names += (model_names.empty() ? "" : ", ") + r.name;
  const analysis::RankOptions rank = session::rank_options(settings.options);
  page.settings =
      "Models: " + model_names + ". Images: " + std::to_string(req.images.size()) +
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
  // report --embeddings alone: no model, no image.
  if (req.model_args.empty())
    page.settings = "Datasets only: " + std::to_string(req.datasets.dirs.size()) +
                    " folder(s) of attnlab embed. Figures at " + std::to_string(int(dpi)) +
                    " dpi (PNG).";
  page.datasets = std::move(parts.datasets);
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
  const std::string index = (fs::path(req.out) / "index.html").string();
  io::write_file_atomic(index, render_index_html(page));
  size_t figure_count = page.figures.size();  // the models' and the datasets'
  for (const auto& d : page.datasets) figure_count += d.figures.size();
  std::printf(
      "report: %zu figures (%zu files) for %zu model(s) x %zu image(s)%s in %s (%.1f s)%s\n",
      figure_count, figure_count * formats.size(), results.size(), req.images.size(),
      page.datasets.empty()
          ? ""
          : (" and " + std::to_string(page.datasets.size()) + " dataset(s)").c_str(),
      index.c_str(), page.run["seconds"].get<double>(),
      errors.empty()
          ? ""
          : (" — " + std::to_string(errors.size()) + " problem(s), listed in the index").c_str());
  return errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace attnlab::cli
