// The zoo's shared model shape.
#include "models/training/zoo_skeleton.h"

#include <cmath>

#include "core/attention/registry.h"

namespace attnlab::training {

nlohmann::json fashion_mnist_preprocessing(int size) {
  // Measured on the 60000 training images: mean 0.2860, std 0.3530.
  return {{"resize", size},
          {"crop", size},
          {"filter", "bilinear"},
          {"mean", {0.2860, 0.2860, 0.2860}},
          {"std", {0.3530, 0.3530, 0.3530}}};
}

nlohmann::json zoo_skeleton_config(const std::string& mechanism,
                                   const std::vector<std::string>& class_names,
                                   const SkeletonShape& shape, const nlohmann::json& options) {
  // The mechanism says what differs from its defaults on a small model; integral values
  // stay integers in the config.
  nlohmann::json attention_options = nlohmann::json::object();
  for (const auto& [k, v] : attention::mechanism_info(mechanism).small_model_options)
    attention_options[k] =
        v == std::round(v) ? nlohmann::json(static_cast<int64_t>(v)) : nlohmann::json(v);
  for (const auto& [k, v] : options.items()) attention_options[k] = v;
  return {{"arch", "vit"},
          {"attention", mechanism},
          {"attention_options", attention_options},
          {"img_size", shape.img_size},
          {"patch_size", shape.patch_size},
          {"embed_dim", shape.width},
          {"depth", shape.depth},
          {"num_heads", shape.heads},
          {"mlp_ratio", shape.mlp_ratio},
          {"class_token", false},
          {"pos_embed_init", "sincos"},
          {"num_classes", static_cast<int64_t>(class_names.size())},
          {"class_names", class_names},
          {"preprocessing", fashion_mnist_preprocessing(static_cast<int>(shape.img_size))}};
}

}  // namespace attnlab::training
