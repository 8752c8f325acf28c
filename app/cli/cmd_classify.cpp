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
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "core/io/tensor_file.h"
#include "core/runtime/device.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::cli {
namespace {

std::vector<std::string> imagenet_names() {
  const char* env = std::getenv("ATTNLAB_ASSETS");
  const std::string dir = env && *env ? env : ATTNLAB_ASSETS_DIR;
  std::ifstream in(dir + "/imagenet1k_classes.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names.size() == 1000 ? names : std::vector<std::string>{};
}


}  // namespace

int cmd_classify(Args args, const GlobalOptions& g) {
  const std::string checkpoint = args.take_option("--checkpoint");
  const std::string preset_name = args.take_option("--preset");
  const std::string config_path = args.take_option("--config");
  const std::string key = args.take_option("--key");
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
  auto model = models::load_model(config, checkpoint, key).model;
  const c10::Device device = runtime::select_device(g.device);
  model->to(device);
  // Class names: the config's own (models trained here record them), else ImageNet's.
  std::vector<std::string> names;
  if (config.contains("class_names") && config["class_names"].is_array())
    for (const auto& n : config["class_names"]) names.push_back(n.is_string() ? n.get<std::string>() : "");
  if (names.empty()) names = imagenet_names();
  std::printf("preprocessing: %s\n", pre.describe().c_str());

  int rc = kExitOk;
  at::NoGradGuard no_grad;
  for (const auto& path : images) {
    try {
      const at::Tensor x = image::preprocess(io::load_rgb_image(path), pre).to(device);
      const at::Tensor probs = at::softmax(model->run(x).logits, -1)[0].cpu();
      const auto top = probs.topk(std::min<int64_t>(5, probs.size(0)));
      std::printf("%s\n", path.c_str());
      for (int64_t i = 0; i < std::get<1>(top).size(0); ++i) {
        const int64_t cls = std::get<1>(top)[i].item<int64_t>();
        const std::string label = static_cast<size_t>(probs.size(0)) == names.size()
                                      ? names[static_cast<size_t>(cls)]
                                      : "";
        std::printf("  %6.2f%%  %4lld  %s\n", 100.0 * std::get<0>(top)[i].item<double>(),
                    static_cast<long long>(cls), label.c_str());
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnlab: error: %s: %s\n", path.c_str(), e.what());
      rc = kExitFailure;
    }
  }
  return rc;
}

}  // namespace attnlab::cli
