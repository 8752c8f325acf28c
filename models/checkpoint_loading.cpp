// Checkpoint weights -> model.
#include "models/checkpoint_loading.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include "core/io/state_dict.h"
#include "core/io/torch_bridge.h"
#include "core/nn/initial_values.h"
#include "models/backbone.h"
#include "models/checkpoint_summary.h"
#include "models/model_family.h"
#include "models/model_registry.h"

namespace attnlab::models {

CheckpointWeights read_checkpoint_weights(const std::string& path, const std::string& key) {
  return read_checkpoint_weights(io::read_tensor_file(path), key);
}

CheckpointWeights read_checkpoint_weights(io::TensorFile&& file, const std::string& key) {
  const std::string path = file.path;
  const std::string architecture = checkpoint_architecture(file);
  io::StateDict sd = io::extract_state_dict(std::move(file), key);
  CheckpointWeights w;
  w.path = path;
  w.architecture = architecture;
  w.source_key = sd.source_key;
  for (size_t i = 0; i < sd.tensors.size(); ++i) {
    const std::string name = sd.tensors.entries()[i].name;
    at::Tensor t = io::to_torch(sd.tensors.take(i));  // takes the bytes over, no copy
    if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) t = t.to(at::kFloat);
    w.tensors[name] = t;
  }
  // Another layout a family reads (transformers' ViT, DINO training, a CLIP release): its
  // own keys from here on.
  for (const ModelFamily& family : model_families())
    for (const CheckpointLayout& layout : family.layouts) {
      if (!layout.matches(w.tensors)) continue;
      CheckpointLayout::Rewritten r = layout.rewrite(std::move(w.tensors));
      w.tensors = std::move(r.tensors);
      if (r.architecture.empty()) {
        KeyNames names;
        for (const auto& entry : w.tensors) names.push_back(entry.first);
        r.architecture = family_of_keys(names);
      }
      w.architecture = r.architecture;
      w.layout = layout.name;
      if (!r.note.empty()) w.notes.push_back(r.note);
    }
  return w;
}

namespace {

// Strict load with the refusal message naming the file and, when the keys look like
// another family than the model's, saying so first.
// The family takes its part of the weights first (ModelFamily::take_weights, noted in
// w.notes). The module takes the tensors over (nn::load_state of an rvalue): w.tensors is
// left empty.
void load_weights(torch::nn::Module& model, CheckpointWeights& w) {
  const auto* backbone = dynamic_cast<const Backbone*>(&model);
  if (backbone && !backbone->config_text().empty()) {
    const Json config = Json::parse(backbone->config_text());
    if (const ModelFamily* family = family_for_config(config); family && family->take_weights) {
      const std::string note = family->take_weights(config, w.tensors);
      if (!note.empty()) w.notes.push_back(note);
    }
  }
  try {
    nn::load_state(model, std::move(w.tensors));
  } catch (const nn::StateLoadError& e) {
    std::string where = w.path + (w.source_key.empty() ? "" : " ['" + w.source_key + "']");
    if (backbone && w.architecture != "unknown" &&
        w.architecture.rfind(key_family_of_arch(backbone->arch()), 0) != 0)
      where += " (its keys look like a " + w.architecture + " checkpoint, the model is " +
               backbone->arch() + ")";
    throw nn::StateLoadError(where + ": " + e.what(), e.missing, e.unexpected, e.mismatched);
  }
}

}  // namespace

void load_checkpoint(torch::nn::Module& model, const std::string& path, const std::string& key) {
  CheckpointWeights w = read_checkpoint_weights(path, key);
  load_weights(model, w);
}

LoadedModel load_model(Json config, const std::string& path, const std::string& key) {
  return load_model(std::move(config), read_checkpoint_weights(path, key));
}

LoadedModel load_model(Json config, CheckpointWeights w) {
  if (const ModelFamily* family = family_for_config(config); family && family->fit_to_weights) {
    // Weights that cannot be fitted (LITv2's without its attention keys) are left to the
    // strict load below, which names every key that does not fit: that says more.
    try {
      config = family->fit_to_weights(config, w.tensors);
    } catch (const ModelError&) {
    }
  }

  LoadedModel loaded;
  {
    const nn::WeightsToBeLoaded no_random_values;  // the strict load sets every one
    loaded.model = make_backbone(config);
  }
  load_weights(*loaded.model, w);
  loaded.model->eval();
  loaded.config = std::move(config);
  w.tensors.clear();
  loaded.weights_info = std::move(w);
  return loaded;
}

}  // namespace attnlab::models
