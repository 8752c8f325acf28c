// `attnlab classify`: preprocess images exactly as the model's preset says, run the model,
// print the top-5 classes with probabilities (the config's class_names when it has them,
// else ImageNet-1k names from assets/imagenet1k_classes.txt for 1000-class models).
//   attnlab classify --checkpoint FILE [--preset NAME | --config JSON] [--key K] IMAGE...
// The config comes from --preset / --config or the checkpoint's safetensors metadata; the
// preprocessing from the preset (or, without one, the family's default at the config's
// img_size: models::default_preprocessing).
#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "app/cli/cli_common.h"
#include "app/session/predictions.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "core/io/tensor_file.h"
#include "core/runtime/device.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::cli {

int cmd_classify(Args args, const GlobalOptions& g) {
  const std::string checkpoint = args.take_option("--checkpoint");
  const std::string preset_name = args.take_option("--preset");
  const std::string config_path = args.take_option("--config");
  const std::string key = args.take_option("--key");
  const std::string names_path = args.take_option("--class-names");
  const std::vector<std::string> images = args.positionals();
  if (images.empty()) throw UsageError("classify needs at least one IMAGE");
  if (checkpoint.empty())
    throw UsageError("classify needs --checkpoint FILE (presets carry configs, not weights)");
  if (!preset_name.empty() && !config_path.empty())
    throw UsageError("give either --preset or --config, not both");

  models::Json config;
  image::Preprocessing pre;
  if (!preset_name.empty()) {
    const auto& preset = models::find_preset(preset_name);
    config = preset.config;
    pre = preset.preprocessing;
  } else {
    if (!config_path.empty()) {
      config = models::config_from_file(config_path);
    } else {
      const io::TensorFile f = io::read_tensor_file(checkpoint);
      if (!f.metadata.count("arch"))
        throw UsageError(checkpoint +
                         " carries no model config; give --preset NAME or --config JSON");
      config = models::config_from_metadata(f.metadata);
    }
    pre = models::default_preprocessing(config);
  }
  // A names file is read before anything runs: a bad one fails at once, with its reason.
  const std::vector<std::string> user_names =
      names_path.empty() ? std::vector<std::string>{} : session::read_class_names(names_path);
  auto model = models::load_model(config, checkpoint, key).model;
  const c10::Device device = runtime::select_device(g.device);
  model->to(device);
  std::vector<std::string> names;  // filled at the first image, when the class count is known
  std::printf("preprocessing: %s\n", pre.describe().c_str());

  int rc = kExitOk;
  at::NoGradGuard no_grad;
  for (const auto& path : images) {
    try {
      const at::Tensor x = image::preprocess(io::load_rgb_image(path), pre).to(device);
      const at::Tensor logits = model->run(x).logits[0];
      if (names.empty())
        names = user_names.empty()
                    ? session::class_names(config, logits.size(0))
                    : session::checked_class_names(user_names, logits.size(0), names_path);
      std::printf("%s\n", path.c_str());
      for (const session::Prediction& p : session::top_predictions(logits, names))
        std::printf("  %6.2f%%  %4lld  %s\n", 100.0 * p.probability, static_cast<long long>(p.cls),
                    p.name.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnlab: error: %s: %s\n", path.c_str(), e.what());
      rc = kExitFailure;
    }
  }
  return rc;
}

}  // namespace attnlab::cli
