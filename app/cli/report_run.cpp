// One model's part of `attnlab report`: analyse, keep the results, write the statistics.
#include "app/cli/report_run.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/session/input_picture.h"
#include "app/session/predictions.h"
#include "core/analysis/background_writer.h"
#include "core/analysis/output_folder.h"

namespace attnlab::cli {

ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const session::AnalysisSettings& settings,
                              const runtime::ComputeTarget& target, const std::string& stats_dir,
                              const nlohmann::json& run) {
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
  Progress progress("report: " + choice.tag, int64_t(images.size()));
  r.failed_images = analyse_images(
      session, *model.model, target, choice.preprocessing, images, progress,
      [&](const ImageInput& im, const at::Tensor& x) {
        r.images.push_back({im.tag, session::input_picture(x, choice.preprocessing)});
      },
      &stages);
  writer.finish();
  if (session.images() == 0) throw std::runtime_error("no image could be analysed");
  r.tables = session.tables();
  for (const auto& t : r.tables) folder.write_table(t);
  for (const auto& a : session.arrays()) {
    folder.write_array(a);
    r.arrays.push_back(a);
  }
  r.layers = session.layers_json();
  r.class_names = session::model_class_names(choice, model.config,
                                             model.config.value("num_classes", int64_t{1000}));
  r.warnings = session.warnings();
  nlohmann::json sidecar = run;
  sidecar["model"] = model.description();
  sidecar["layers"] = r.layers;
  sidecar["warnings"] = r.warnings;
  sidecar["failed_images"] = r.failed_images;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sidecar["seconds"] = r.seconds;
  sidecar["stage_seconds"] = stages.to_json();
  folder.write_sidecar(sidecar);
  return r;
}

}  // namespace attnlab::cli
