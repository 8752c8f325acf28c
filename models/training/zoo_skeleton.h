// The one model shape every zoo model shares, so that mechanisms compare fairly
// (docs/ZOO.md): 28×28 input, patch 2 → 14×14 = 196 tokens, width 128, 2 heads of 64,
// depth 4, MLP ratio 2, mean pooling (no cls token: RALA and HiLo need a pure grid, and
// the other mechanisms get the same head so the comparison stays controlled), 10 classes,
// and Fashion-MNIST's preprocessing and class names recorded in the config.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab::training {

struct SkeletonShape {
  int64_t img_size = 28, patch_size = 2, width = 128, depth = 4, heads = 2;
  double mlp_ratio = 2.0;
};

// Mechanism defaults on this skeleton: HiLo window 2 with alpha 0.5 (one Hi-Fi and one
// Lo-Fi head: both branches present), 16 anchors. `options` override them.
nlohmann::json zoo_skeleton_config(const std::string& mechanism,
                                   const std::vector<std::string>& class_names,
                                   const SkeletonShape& shape = {},
                                   const nlohmann::json& options = nlohmann::json::object());

// Fashion-MNIST's training-set pixel mean and std (of x/255), as "preprocessing".
nlohmann::json fashion_mnist_preprocessing(int size);

}  // namespace attnlab::training
