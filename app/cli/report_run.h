// What `attnlab report` keeps of one model's analyses: every statistics table, every
// array (maps, rollout, anchors per image; spectra and singular values per model), and
// the picture each image became after preprocessing — the input the maps are drawn over.
// The statistics files of `analyze` are written as the run goes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "viz/rgba_image.h"

namespace attnlab::cli {

struct ReportImage {
  std::string tag;
  viz::RgbaImage picture;  // the preprocessed input, un-normalised to 8-bit RGB
};

struct ModelResults {
  std::string name;  // the model's tag (file names, titles)
  std::string preprocessing;
  std::vector<ReportImage> images;  // analysed images, in order
  std::vector<analysis::Table> tables;
  std::vector<analysis::Array> arrays;  // as the session gave them (names are unique)
  nlohmann::json layers;
  std::vector<std::string> class_names;  // empty when the model's classes have no names
  std::vector<std::string> warnings, failed_images;
  double seconds = 0;

  const analysis::Array* array(const std::string& name) const;
  const analysis::Table* table(const std::string& name) const;
  // Names of arrays starting with `prefix`, sorted.
  std::vector<std::string> arrays_with_prefix(const std::string& prefix) const;
};

// Loads the model, analyses the images and writes the statistics (and arrays) of
// `analyze` into `stats_dir`. Throws when the model cannot be loaded or no image works.
ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const models::AnalysisSettings& settings, const c10::Device& device,
                              const std::string& stats_dir, const nlohmann::json& run);

// The (1, 3, H, W) preprocessed input back to 8-bit RGB: x * std + mean, clamped.
viz::RgbaImage input_picture(const at::Tensor& x, const image::Preprocessing& p);

}  // namespace attnlab::cli
