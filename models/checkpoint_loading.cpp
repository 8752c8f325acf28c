// Checkpoint weights -> model.
#include "models/checkpoint_loading.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include "core/io/state_dict.h"
#include "core/io/torch_bridge.h"

namespace attnlab::models {

CheckpointWeights read_checkpoint_weights(const std::string& path, const std::string& key) {
  io::StateDict sd = io::extract_state_dict(io::read_tensor_file(path), key);
  CheckpointWeights w;
  w.path = path;
  w.source_key = sd.source_key;
  for (const auto& entry : sd.tensors) {
    at::Tensor t = io::to_torch(entry.tensor);
    if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) t = t.to(at::kFloat);
    w.tensors[entry.name] = t;
  }
  return w;
}

void load_checkpoint(torch::nn::Module& model, const std::string& path, const std::string& key) {
  CheckpointWeights w = read_checkpoint_weights(path, key);
  try {
    nn::load_state(model, w.tensors);
  } catch (const nn::StateLoadError& e) {
    throw nn::StateLoadError(
        path + (w.source_key.empty() ? "" : " ['" + w.source_key + "']") + ": " + e.what(),
        e.missing, e.unexpected, e.mismatched);
  }
}

}  // namespace attnlab::models
