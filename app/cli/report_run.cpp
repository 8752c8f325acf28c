// One model's part of `attnlab report`: analyse, keep the results, write the statistics.
#include "app/cli/report_run.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/cli/predictions.h"
#include "core/analysis/output_folder.h"

namespace attnlab::cli {

const analysis::Array* ModelResults::array(const std::string& n) const {
  for (const auto& a : arrays)
    if (a.name == n) return &a;
  return nullptr;
}

const analysis::Table* ModelResults::table(const std::string& n) const {
  for (const auto& t : tables)
    if (t.name == n) return &t;
  return nullptr;
}

std::vector<std::string> ModelResults::arrays_with_prefix(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& a : arrays)
    if (a.name.rfind(prefix, 0) == 0) out.push_back(a.name);
  std::sort(out.begin(), out.end());
  return out;
}

viz::RgbaImage input_picture(const at::Tensor& x, const image::Preprocessing& p) {
  const at::Tensor img = x.detach().to(at::kCPU, at::kFloat).contiguous();
  viz::RgbaImage out;
  if (img.dim() != 4 || img.size(0) < 1 || img.size(1) < 1) return out;
  const int64_t c = img.size(1);
  out.height = int(img.size(2));
  out.width = int(img.size(3));
  out.rgba.resize(size_t(out.width) * out.height * 4);
  const float* d = img.data_ptr<float>();
  const size_t plane = size_t(out.width) * out.height;
  for (size_t i = 0; i < plane; ++i) {
    for (int ch = 0; ch < 3; ++ch) {
      const int64_t src = std::min<int64_t>(ch, c - 1);
      const float v = d[size_t(src) * plane + i] * p.std[size_t(src)] + p.mean[size_t(src)];
      out.rgba[i * 4 + size_t(ch)] = uint8_t(std::lround(std::clamp(v, 0.f, 1.f) * 255.f));
    }
    out.rgba[i * 4 + 3] = 255;
  }
  return out;
}

ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const models::AnalysisSettings& settings, const c10::Device& device,
                              const std::string& stats_dir, const nlohmann::json& run) {
  const auto t0 = std::chrono::steady_clock::now();
  ModelResults r;
  r.name = choice.tag;
  r.preprocessing = choice.preprocessing.describe();
  ReadyModel model = load_chosen_model(choice, device);
  analysis::OutputFolder folder(stats_dir, choice.tag);
  models::AnalysisSession session(settings, [&](const analysis::Array& a) {
    folder.write_array(a);
    r.arrays.push_back(a);
  });
  Progress progress("report: " + choice.tag, int64_t(images.size()));
  r.failed_images =
      analyse_images(session, *model.model, device, choice.preprocessing, images, progress,
                     [&](const ImageInput& im, const at::Tensor& x) {
                       r.images.push_back({im.tag, input_picture(x, choice.preprocessing)});
                     });
  if (session.images() == 0) throw std::runtime_error("no image could be analysed");
  r.tables = session.tables();
  for (const auto& t : r.tables) folder.write_table(t);
  for (const auto& a : session.arrays()) {
    folder.write_array(a);
    r.arrays.push_back(a);
  }
  r.layers = session.layers_json();
  r.class_names = class_names(model.config, model.config.value("num_classes", int64_t{1000}));
  r.warnings = session.warnings();
  nlohmann::json sidecar = run;
  sidecar["model"] = model.describe;
  sidecar["layers"] = r.layers;
  sidecar["warnings"] = r.warnings;
  sidecar["failed_images"] = r.failed_images;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sidecar["seconds"] = r.seconds;
  folder.write_sidecar(sidecar);
  return r;
}

}  // namespace attnlab::cli
