// One model's part of `attnlab report`: analyse, keep the results, write the statistics.
#include "app/cli/report_run.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "app/cli/shard_run.h"
#include "app/session/input_picture.h"
#include "app/session/predictions.h"
#include "core/analysis/background_writer.h"
#include "core/analysis/output_folder.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"

namespace attnlab::cli {
namespace {

// The session's statistics into the model's results and its statistics folder: the
// tables, the image-averaged arrays, the layers and warnings (also in the sidecar).
void keep_statistics(const session::AnalysisSession& session, analysis::OutputFolder& folder,
                     ModelResults& r, nlohmann::json& sidecar) {
  r.tables = session.tables();
  for (const auto& t : r.tables) folder.write_table(t);
  for (const auto& a : session.arrays()) {
    folder.write_array(a);
    r.arrays.push_back(a);
  }
  r.layers = session.layers_json();
  r.warnings = session.warnings();
  sidecar["layers"] = r.layers;
  sidecar["warnings"] = r.warnings;
}

}  // namespace

ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const session::AnalysisSettings& settings,
                              const runtime::ComputeTarget& target, const std::string& stats_dir,
                              const nlohmann::json& run, ReportModelShard* shard) {
  const auto t0 = std::chrono::steady_clock::now();
  ModelResults r;
  r.name = choice.tag;
  r.preprocessing = choice.preprocessing.describe();
  ReadyModel model = load_ready_model(choice, target);
  StageSeconds stages;
  stages.model = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  analysis::OutputFolder folder(stats_dir, choice.tag);
  analysis::BackgroundWriter writer(folder);  // the arrays reach the disk while images run
  session::AnalysisSession session(settings, [&](const analysis::Array& a) {
    writer.write_array(a);
    r.arrays.push_back(a);
  });
  if (shard) session.for_shard();
  Progress progress("report: " + choice.tag, int64_t(images.size()));
  r.failed_images = analyse_images(
      session, *model.model, target, choice.preprocessing, images, progress,
      [&](const ImageInput& im, const at::Tensor& x) {
        r.images.push_back({im.tag, session::input_picture(x, choice.preprocessing)});
      },
      &stages);
  writer.finish();
  if (session.images() == 0) throw std::runtime_error("no image could be analysed");
  r.class_names = session::model_class_names(choice, model.config,
                                             model.config.value("num_classes", int64_t{1000}));
  nlohmann::json sidecar = run;
  sidecar["model"] = model.description();
  sidecar["failed_images"] = r.failed_images;
  if (shard) {
    const std::string dir = shard->state_dir + "/" + analysis::file_safe(choice.tag);
    nlohmann::json pictures = nlohmann::json::array();
    std::filesystem::create_directories(dir);
    for (size_t i = 0; i < r.images.size(); ++i) {
      const viz::RgbaImage& p = r.images[i].picture;
      const std::string file = "picture" + std::to_string(i) + ".rgba";
      io::write_file_atomic(dir + "/" + file, p.rgba.data(), p.rgba.size());
      pictures.push_back(
          {{"tag", r.images[i].tag}, {"width", p.width}, {"height", p.height}, {"file", file}});
    }
    sidecar["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    shard->saved = {{"tag", choice.tag},
                    {"dir", analysis::file_safe(choice.tag)},
                    {"preprocessing", r.preprocessing},
                    {"class_names", r.class_names},
                    {"sidecar", sidecar},
                    {"files", folder.files()},
                    {"pictures", pictures},
                    {"session", session.save_state(dir)}};
    return r;
  }
  keep_statistics(session, folder, r, sidecar);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sidecar["seconds"] = r.seconds;
  sidecar["stage_seconds"] = stages.to_json();
  folder.write_sidecar(sidecar);
  return r;
}

ModelResults merge_report_model(const std::vector<std::pair<std::string, nlohmann::json>>& parts,
                                const session::AnalysisSettings& settings,
                                const std::string& stats_dir) {
  const nlohmann::json& first = parts.front().second;
  ModelResults r;
  r.name = first.at("tag").get<std::string>();
  r.preprocessing = first.at("preprocessing").get<std::string>();
  r.class_names = first.at("class_names").get<std::vector<std::string>>();
  analysis::OutputFolder folder(stats_dir, r.name);
  session::AnalysisSession session(settings, [&](const analysis::Array& a) {
    folder.write_array(a);  // the arrays of the analyses fitted at the end (feature_pca's)
    r.arrays.push_back(a);
  });
  nlohmann::json sidecar = first.at("sidecar");
  double seconds = 0;
  for (const auto& [shard_dir, saved] : parts) {
    const std::string dir =
        shard_dir + "/" + kShardStateDir + "/" + saved.at("dir").get<std::string>();
    // The per-image arrays in the order the single run emitted them, read back for the
    // figures and adopted into the statistics folder.
    const std::string shard_stats = shard_dir + "/stats";
    for (const auto& entry : saved.at("files")) {
      if (entry.at("kind") != "array") continue;
      const std::string path = folder.adopt_file(shard_stats, entry);
      const io::RawTensor t = io::read_npy(path);
      if (t.dtype != io::DType::F32)
        throw std::runtime_error(path + ": a report array is float32, this is not");
      analysis::Array a;
      const std::string stem = std::filesystem::path(path).stem().string();
      const std::string prefix = folder.model_tag() + "__";
      a.name = stem.rfind(prefix, 0) == 0 ? stem.substr(prefix.size()) : stem;
      a.caption = entry.value("caption", "");
      a.shape = t.shape;
      a.axes = entry.value("axes", std::vector<std::string>{});
      a.data.resize(size_t(t.numel()));
      std::memcpy(a.data.data(), t.bytes.data(), t.bytes.size());
      r.arrays.push_back(std::move(a));
    }
    for (const auto& p : saved.at("pictures")) {
      session::ResultImage im;
      im.tag = p.at("tag").get<std::string>();
      im.picture.width = p.at("width").get<int>();
      im.picture.height = p.at("height").get<int>();
      im.picture.rgba = io::read_file_bytes(dir + "/" + p.at("file").get<std::string>());
      if (im.picture.rgba.size() != im.picture.pixel_count() * 4)
        throw std::runtime_error(dir + ": picture of " + im.tag + " has the wrong size");
      r.images.push_back(std::move(im));
    }
    session.absorb_state(saved.at("session"), dir);
    for (const auto& f : saved.at("sidecar").at("failed_images"))
      r.failed_images.push_back(f.get<std::string>());
    seconds += saved.at("sidecar").value("seconds", 0.0);
  }
  session.finish();
  keep_statistics(session, folder, r, sidecar);
  sidecar["failed_images"] = r.failed_images;
  r.seconds = seconds;
  sidecar["seconds"] = seconds;
  folder.write_sidecar(sidecar);
  return r;
}

}  // namespace attnlab::cli
