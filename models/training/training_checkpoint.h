// The files a training run writes, all safetensors with the model config in the metadata
// (one JSON-encoded value per config key, as models::config_from_metadata reads) so every
// one of them opens in `attnlab analyze`, `classify` and the GUI without a --config:
//   training checkpoint   model.<name> (float32 weights and buffers),
//                         optimizer.exp_avg.<name>, optimizer.exp_avg_sq.<name>;
//                         metadata attnlab.container = "training" (so readers take the
//                         weights from the "model" container, like a .pth's 'model'),
//                         attnlab.step, attnlab.settings, attnlab.history, attnlab.wall_s
//   weights file          flat weights (float16 for the zoo), attnlab.step and any extra
//                         metadata (the zoo's attnlab.training record)
// Writes are atomic (core/io): an interrupted run never leaves half a checkpoint.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/backbone.h"
#include "models/training/train_settings.h"

namespace attnlab::training {

struct StepRecord {
  int64_t step = 0;  // updates done after this one (1-based)
  double epoch = 0, lr = 0, loss = 0, accuracy = 0, penalty = 0;
  double images_per_second = 0, elapsed_s = 0;
};

struct TrainingCheckpoint {
  TrainSettings settings;
  int64_t step = 0;
  double wall_s = 0;
  std::vector<StepRecord> history;
  std::map<std::string, at::Tensor> model;      // weights and buffers by state-dict name
  std::map<std::string, at::Tensor> optimizer;  // exp_avg.<name>, exp_avg_sq.<name>
};

void write_training_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
// Throws std::runtime_error naming the file when it is no attnlab training checkpoint.
TrainingCheckpoint read_training_checkpoint(const std::string& path);

// Every parameter and buffer of a module by state-dict name (detached, on the CPU).
std::map<std::string, at::Tensor> module_state(torch::nn::Module& module);

// Weights only, converted to `dtype` (floating tensors; others as they are).
void write_weights(const std::string& path, torch::nn::Module& module, const nlohmann::json& config,
                   at::ScalarType dtype,
                   const std::map<std::string, std::string>& extra_metadata = {});

}  // namespace attnlab::training
