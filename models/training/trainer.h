// The training loop behind `attnlab train`: a backbone from a model config, AdamW with
// warm-up + cosine learning rate, label-smoothed cross entropy, light augmentation,
// deterministic order and draws (a function of the seed and the step, so that a resumed
// run continues exactly where the interrupted one was), and checkpoints:
//   <run>/checkpoints/step_NNNNNN.safetensors   full training state (training_checkpoint.h),
//                                              the last `keep_last` kept
//   <series>/step_NNNNNN.safetensors           fp16 weights only, every checkpoint kept —
//                                              the series Castling's mask view steps through
// Castling's masked-softmax branch runs because the model is in training mode; its
// penalty (AttentionMechanism::training_penalty) is added with weight sparse_penalty.
// Progress goes to an observer after every step; cancel is polled between steps.
#pragma once

#include <ATen/core/Tensor.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/data/image_dataset.h"
#include "models/backbone.h"
#include "models/training/adamw.h"
#include "models/training/train_settings.h"
#include "models/training/training_checkpoint.h"

namespace attnlab::training {

class Trainer {
 public:
  // Builds the model (initialised from settings.seed) and the optimiser.
  Trainer(TrainSettings settings, data::ImageDataset train_set, std::string run_dir,
          std::string series_dir = "");

  // Continue from a training checkpoint. Throws std::runtime_error when the checkpoint was
  // written by a run with other settings (it names the first field that differs).
  void resume(const std::string& checkpoint);

  // Train until total_steps() (or until *cancel turns true, after a checkpoint).
  using Observer = std::function<void(const StepRecord&)>;
  void run(const Observer& on_step = {}, const std::atomic<bool>* cancel = nullptr);

  int64_t step() const { return step_; }
  int64_t total_steps() const { return total_steps_; }
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  const TrainSettings& settings() const { return settings_; }
  models::Backbone& model() { return *model_; }
  const std::vector<StepRecord>& history() const { return history_; }
  double wall_seconds() const { return wall_s_; }  // training time, including resumed parts

  // Write a checkpoint of the current state now; returns its path.
  std::string write_checkpoint();
  // The run's newest full checkpoint ("" when none).
  static std::string latest_checkpoint(const std::string& run_dir);

 private:
  void train_step();
  void write_series_entry() const;

  TrainSettings settings_;
  data::ImageDataset train_set_;
  data::Normalisation norm_;
  std::string run_dir_, series_dir_;
  std::shared_ptr<models::Backbone> model_;
  c10::Device device_{c10::kCPU};
  std::unique_ptr<AdamW> optimizer_;
  int64_t step_ = 0, total_steps_ = 0, steps_per_epoch_ = 0;
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
  std::vector<StepRecord> history_;
  double wall_s_ = 0;
};

// Label-smoothed cross entropy, mean over the batch: (1-ε)·NLL + ε·mean_c(−log p_c).
at::Tensor smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                  double smoothing);

// The normalisation of a model config's preprocessing (models::default_preprocessing).
data::Normalisation normalisation_for(const nlohmann::json& config);

}  // namespace attnlab::training
