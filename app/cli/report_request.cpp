// Parsing `attnlab report`'s options (report_request.h).
#include "app/cli/report_request.h"

#include <filesystem>

#include "app/cli/model_options.h"
#include "app/cli/size_sweep.h"
#include "app/session/analysis_registry.h"
#include "app/session/predictions.h"
#include "core/runtime/data_paths.h"
#include "models/zoo.h"

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

ReportRequest take_report_request(Args& args) {
  ReportRequest r;
  r.demo = args.take_flag("--demo");
  const bool demo = r.demo;
  // Presets without weights: their architecture with seeded random weights (timing runs,
  // the notebook comparison); a checkpoint named beside it is an error for that model.
  r.random_init = args.take_flag("--random-init");
  std::vector<std::string>& model_args = r.model_args;
  model_args = args.take_list("--models");
  std::vector<std::string> image_args = args.take_list("--images");
  std::vector<std::string>& series_files = r.series_files;
  series_files = args.take_list("--series");
  std::string& out = r.out;
  out = args.take_option("--out");
  r.options = take_report_figure_options(args);
  // The class names of every model (one file for all; read now, so a bad one fails before
  // anything is written).
  r.names_path = args.take_option("--class-names");
  if (!r.names_path.empty()) r.class_names = session::read_class_names(r.names_path);
  take_text_options(args, r.prompts, r.prompt_templates);
  // Every model at one input size (a model that cannot take it is skipped with the reason).
  if (const std::string size = args.take_option("--img-size"); !size.empty())
    r.img_size = parse_img_size(size);
  // A resolution sweep of each model: its over_sizes statistics at these sizes.
  if (const std::string sizes = args.take_option("--img-sizes"); !sizes.empty())
    r.sweep_sizes = parse_img_sizes(sizes);
  r.pos_interpolation = args.take_option("--pos-interpolation");
  if (!r.pos_interpolation.empty() && r.img_size.empty())
    throw UsageError("--pos-interpolation goes with --img-size");
  r.merge = take_merge(args);
  r.cost = take_cost_options(args);
  // The demo shows the zoo's costs too: its models are small, so the sweep is cheap there.
  if (demo && r.cost.complexity_scales == session::default_complexity_scales())
    r.cost.complexity = true;
  // The demo shows every analysis but those that are slow even on the zoo's small models
  // (AnalysisInfo::in_demo: ERF and one forward per head cost milliseconds there, the
  // faithfulness curves hundreds of forwards); otherwise "all".
  std::string default_analyses = "all";
  if (demo)
    for (const auto& a : session::analyses())
      if (a.opt_in && a.in_demo) default_analyses += "," + a.name;
  r.settings = take_analysis_settings(args, default_analyses);
  r.datasets = take_report_datasets(args);
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
  // --embeddings alone draws the datasets only; models need images and images models.
  const bool datasets_only =
      !r.datasets.dirs.empty() && model_args.empty() && image_args.empty() && series_files.empty();
  if (model_args.empty() && !datasets_only)
    throw UsageError(
        "name the models: --models CHECKPOINT|CONFIG.json... (or --demo, or --embeddings "
        "DIR...)");
  if (image_args.empty() && !datasets_only) throw UsageError("name the images: --images FILES|DIR");
  if (out.empty()) throw UsageError("name the output folder: --out DIR");
  if (!datasets_only) r.images = expand_images(image_args);
  return r;
}

}  // namespace attnlab::cli
