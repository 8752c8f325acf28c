// `attnlab report`'s options, parsed once: by the command, and by `attnlab merge` from a
// shard's recorded options (report_shard.cpp).
#pragma once

#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/cli/report_costs.h"
#include "app/cli/report_datasets.h"
#include "app/cli/report_options.h"

namespace attnlab::cli {

struct ReportRequest {
  bool demo = false;
  bool random_init = false;  // presets with seeded random weights
  std::vector<std::string> model_args, series_files;
  std::vector<ImageInput> images;
  std::string out;
  ReportFigureOptions options;
  std::string names_path;  // --class-names, read into class_names
  std::vector<std::string> class_names;
  std::vector<std::string> prompts, prompt_templates;  // --text / --text-file, --prompt-template
  std::vector<int64_t> img_size, sweep_sizes;          // --img-size, --img-sizes
  std::string pos_interpolation;
  int64_t merge = -1;  // --merge R: every model of the ViT family with ToMe's r (-1: none)
  CostOptions cost;
  session::AnalysisSettings settings;
  ReportDatasetsRequest datasets;  // --embeddings DIR... and the projection's options
};

// Takes every report option from `args` (the demo's models, images, series and folder
// when --demo); UsageError for a missing or bad one. --embeddings alone needs no models
// or images.
ReportRequest take_report_request(Args& args);

}  // namespace attnlab::cli
