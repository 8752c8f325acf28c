// Training checkpoints and weights files (see the header for the layout).
#include "models/training/training_checkpoint.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <stdexcept>

#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "models/model_config.h"

namespace attnlab::training {
namespace {

nlohmann::json history_json(const std::vector<StepRecord>& history) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StepRecord& r : history)
    rows.push_back(
        {r.step, r.epoch, r.lr, r.loss, r.accuracy, r.penalty, r.images_per_second, r.elapsed_s});
  return rows;
}

std::vector<StepRecord> history_from_json(const nlohmann::json& rows) {
  std::vector<StepRecord> out;
  for (const auto& r : rows) {
    StepRecord s;
    s.step = r.at(0).get<int64_t>();
    s.epoch = r.at(1).get<double>();
    s.lr = r.at(2).get<double>();
    s.loss = r.at(3).get<double>();
    s.accuracy = r.at(4).get<double>();
    s.penalty = r.at(5).get<double>();
    s.images_per_second = r.at(6).get<double>();
    s.elapsed_s = r.at(7).get<double>();
    out.push_back(s);
  }
  return out;
}

const char* kContainer = "attnlab.container";

}  // namespace

std::map<std::string, at::Tensor> module_state(torch::nn::Module& module) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : module.named_parameters(true)) out[p.key()] = p.value().detach().cpu();
  for (const auto& b : module.named_buffers(true)) out[b.key()] = b.value().detach().cpu();
  return out;
}

void write_training_checkpoint(const std::string& path, const TrainingCheckpoint& c) {
  io::TensorDict tensors;
  for (const auto& [name, t] : c.model)
    tensors.add("model." + name, io::from_torch(t.contiguous()));
  for (const auto& [name, t] : c.optimizer)
    tensors.add("optimizer." + name, io::from_torch(t.cpu().contiguous()));
  auto meta = models::config_to_metadata(c.settings.model);
  meta[kContainer] = "training";
  meta["attnlab.step"] = std::to_string(c.step);
  meta["attnlab.wall_s"] = nlohmann::json(c.wall_s).dump();
  meta["attnlab.settings"] = c.settings.to_json().dump();
  meta["attnlab.history"] = history_json(c.history).dump();
  io::write_safetensors(path, tensors, meta);
}

TrainingCheckpoint read_training_checkpoint(const std::string& path) {
  io::SafetensorsFile f = io::read_safetensors(path);
  const auto it = f.metadata.find(kContainer);
  if (it == f.metadata.end() || it->second != "training")
    throw std::runtime_error(path + ": not an attnlab training checkpoint (no " +
                             std::string(kContainer) + " = \"training\" in its metadata)");
  TrainingCheckpoint c;
  try {
    c.settings = settings_from_json(nlohmann::json::parse(f.metadata.at("attnlab.settings")));
    c.step = std::stoll(f.metadata.at("attnlab.step"));
    c.wall_s = nlohmann::json::parse(f.metadata.at("attnlab.wall_s")).get<double>();
    c.history = history_from_json(nlohmann::json::parse(f.metadata.at("attnlab.history")));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": training checkpoint metadata is malformed (" + e.what() +
                             ")");
  }
  for (const auto& entry : f.tensors.entries()) {
    const std::string& name = entry.name;
    if (name.rfind("model.", 0) == 0)
      c.model[name.substr(6)] = io::to_torch(entry.tensor);
    else if (name.rfind("optimizer.", 0) == 0)
      c.optimizer[name.substr(10)] = io::to_torch(entry.tensor);
    else
      throw std::runtime_error(path + ": unexpected tensor '" + name +
                               "' in a training checkpoint");
  }
  return c;
}

void write_weights(const std::string& path, torch::nn::Module& module, const nlohmann::json& config,
                   at::ScalarType dtype, const std::map<std::string, std::string>& extra_metadata) {
  io::TensorDict tensors;
  for (auto& [name, t] : module_state(module)) {
    at::Tensor out = at::isFloatingType(t.scalar_type()) ? t.to(dtype) : t;
    tensors.add(name, io::from_torch(out.contiguous()));
  }
  auto meta = models::config_to_metadata(config);
  for (const auto& [k, v] : extra_metadata) meta[k] = v;
  io::write_safetensors(path, tensors, meta);
}

}  // namespace attnlab::training
