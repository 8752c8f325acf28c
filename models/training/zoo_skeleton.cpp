// The zoo's shared model shape.
#include "models/training/zoo_skeleton.h"

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
  nlohmann::json attention_options = nlohmann::json::object();
  if (mechanism == "hilo") attention_options = {{"window", 2}, {"alpha", 0.5}};
  if (mechanism == "anchor") attention_options = {{"anchors", 16}};
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
