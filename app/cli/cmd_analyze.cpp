// `attnlab analyze` and `attnlab analyze-series`: run a model over images and write every
// requested analysis into a self-describing output folder (core/analysis/output_folder.h).
//   analyze --model PRESET|CHECKPOINT [model options] --images FILES|DIR --out DIR
//           [--analyses LIST] [--query y,x] [--layers LIST] [analysis switches]
//   analyze-series --checkpoints FILES... [model options] --images ... --out DIR [...]
// One bad image is reported and skipped; the rest are still analysed and written (exit 1).
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/analyze_common.h"
#include "core/analysis/output_folder.h"
#include "core/io/tensor_file.h"
#include "core/runtime/device.h"

namespace attnlab::cli {
namespace {

nlohmann::json images_json(const std::vector<ImageInput>& images,
                           const std::vector<std::string>& failed) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& im : images) {
    const bool bad = std::find(failed.begin(), failed.end(), im.path) != failed.end();
    j.push_back({{"path", std::filesystem::absolute(im.path).string()},
                 {"tag", im.tag},
                 {"status", bad ? "failed" : "analysed"}});
  }
  return j;
}

}  // namespace

int cmd_analyze(Args args, const GlobalOptions& g) {
  AnalyzeRequest req = take_analyze_request(args, /*series=*/false);
  const c10::Device device = runtime::select_device(g.device);
  const auto t0 = std::chrono::steady_clock::now();
  ReadyModel model = load_chosen_model(req.model, device);
  analysis::OutputFolder folder(req.out, req.model.tag);
  models::AnalysisSession session(req.settings,
                                  [&](const analysis::Array& a) { folder.write_array(a); });
  Progress progress("analyze", static_cast<int64_t>(req.images.size()));
  const std::vector<std::string> failed =
      analyse_images(session, *model.model, device, req.model.preprocessing, req.images, progress);
  if (session.images() == 0) throw std::runtime_error("no image could be analysed");

  for (const auto& t : session.tables()) folder.write_table(t);
  for (const auto& a : session.arrays()) folder.write_array(a);
  nlohmann::json sidecar = run_description(g, device, req.settings);
  sidecar["model"] = model.describe;
  sidecar["images"] = images_json(req.images, failed);
  sidecar["layers"] = session.layers_json();
  sidecar["warnings"] = session.warnings();
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  for (const auto& w : session.warnings())
    std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  std::printf("%s: %lld image(s) analysed, %zu files in %s (settings: %s)\n", req.model.tag.c_str(),
              static_cast<long long>(session.images()), folder.files_written() + 1,
              folder.dir().c_str(), sidecar_path.c_str());
  return failed.empty() ? kExitOk : kExitFailure;
}

int cmd_analyze_series(Args args, const GlobalOptions& g) {
  AnalyzeRequest req = take_analyze_request(args, /*series=*/true);
  const c10::Device device = runtime::select_device(g.device);
  const auto t0 = std::chrono::steady_clock::now();
  analysis::OutputFolder folder(req.out, req.model.tag);
  std::map<std::string, analysis::Table> series;  // table name -> rows of every checkpoint
  std::vector<std::string> order;
  nlohmann::json checkpoints = nlohmann::json::array();
  std::vector<std::string> warnings;
  bool any_failed = false;
  for (size_t i = 0; i < req.checkpoints.size(); ++i) {
    const std::string& path = req.checkpoints[i];
    std::fprintf(stderr, "analyze-series: checkpoint %zu/%zu %s\n", i + 1, req.checkpoints.size(),
                 path.c_str());
    ReadyModel model = load_chosen_model(with_checkpoint(req.model, path), device);
    models::AnalysisSession session(req.settings, nullptr);  // series keep statistics only
    Progress progress("  images", static_cast<int64_t>(req.images.size()));
    const auto failed = analyse_images(session, *model.model, device, req.model.preprocessing,
                                       req.images, progress);
    any_failed = any_failed || !failed.empty();
    if (session.images() == 0) throw std::runtime_error("no image could be analysed with " + path);
    const nlohmann::json step = checkpoint_step(path);
    for (const auto& t : session.tables()) {
      if (!series.count(t.name)) {
        order.push_back(t.name);
        analysis::Table s;
        s.name = t.name + "_series";
        s.caption = t.caption + "; one block of rows per checkpoint, in the order given";
        s.columns = {"checkpoint_index", "checkpoint", "step"};
        s.columns.insert(s.columns.end(), t.columns.begin(), t.columns.end());
        s.key_columns = t.key_columns + 3;
        series[t.name] = s;
      }
      for (const auto& row : t.rows) {
        std::vector<analysis::Cell> r{
            int64_t(i), std::filesystem::path(path).filename().string(),
            step.is_number() ? analysis::Cell(step.get<int64_t>()) : analysis::Cell(int64_t(i))};
        r.insert(r.end(), row.begin(), row.end());
        series[t.name].add_row(std::move(r));
      }
    }
    nlohmann::json c = model.describe["checkpoint"];
    c["index"] = i;
    c["step"] = step;
    c["images_analysed"] = session.images();
    checkpoints.push_back(c);
    for (const auto& w : session.warnings())
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  for (const auto& name : order) folder.write_table(series.at(name));
  nlohmann::json sidecar = run_description(g, device, req.settings);
  sidecar["model"] = {{"config", req.model.config},
                      {"preset", req.model.preset},
                      {"preprocessing", req.model.preprocessing.describe()}};
  sidecar["checkpoints"] = checkpoints;
  sidecar["images"] = images_json(req.images, {});
  sidecar["warnings"] = warnings;
  sidecar["step_column"] = "the checkpoint's 'step' metadata when it has one, else its index";
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  for (const auto& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  std::printf("%zu checkpoints analysed, %zu files in %s (settings: %s)\n", req.checkpoints.size(),
              folder.files_written() + 1, folder.dir().c_str(), sidecar_path.c_str());
  return any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
