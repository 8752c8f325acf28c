// The training loop (see trainer.h).
#include "models/training/trainer.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/attention/mechanism.h"
#include "core/nn/state_loading.h"
#include "core/runtime/device.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "models/training/training_checkpoint.h"

namespace attnlab::training {
namespace fs = std::filesystem;

namespace {

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%06lld.safetensors", static_cast<long long>(step));
  return buf;
}

// The first top-level field in which two settings records differ ("" when none).
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  for (const auto& [key, value] : a.items())
    if (!b.contains(key) || b.at(key) != value) return key;
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return key;
  return "";
}

// A run's step_NNNNNN.safetensors files in step order (zero-padded names sort by step).
std::vector<fs::path> checkpoint_files(const fs::path& dir) {
  std::vector<fs::path> all;
  if (!fs::is_directory(dir)) return all;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("step_", 0) == 0 &&
        e.path().extension() == ".safetensors")
      all.push_back(e.path());
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

at::Tensor smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                  double smoothing) {
  at::Tensor logp = at::log_softmax(logits, -1);
  at::Tensor nll = -logp.gather(1, labels.reshape({-1, 1})).squeeze(1);
  if (smoothing <= 0) return nll.mean();
  return ((1.0 - smoothing) * nll - smoothing * logp.mean(-1)).mean();
}

data::Normalisation normalisation_for(const nlohmann::json& config) {
  return data::normalisation_of(models::default_preprocessing(config));
}

Trainer::Trainer(TrainSettings settings, data::ImageDataset train_set, std::string run_dir,
                 std::string series_dir)
    : settings_(std::move(settings)),
      train_set_(std::move(train_set)),
      run_dir_(std::move(run_dir)),
      series_dir_(std::move(series_dir)) {
  if (settings_.batch < 1) throw std::invalid_argument("batch size must be at least 1");
  if (train_set_.size() < settings_.batch)
    throw std::invalid_argument("the training set (" + std::to_string(train_set_.size()) +
                                " images) is smaller than one batch (" +
                                std::to_string(settings_.batch) + ")");
  const int64_t classes = models::get_int(settings_.model, "num_classes", "model", 1000);
  if (train_set_.classes() > classes)
    throw std::invalid_argument("the training set has " + std::to_string(train_set_.classes()) +
                                " classes but the model config has num_classes " +
                                std::to_string(classes));
  const int64_t size = models::get_int(settings_.model, "img_size", "model", 224);
  if (train_set_.images.size(2) != size || train_set_.images.size(3) != size)
    throw std::invalid_argument(
        "the training images are " + std::to_string(train_set_.images.size(3)) + "×" +
        std::to_string(train_set_.images.size(2)) + " but the model takes " + std::to_string(size) +
        "×" + std::to_string(size) + " (img_size): load a folder set at that size " +
        "(--folder-image-size) or give a config with img_size " +
        std::to_string(train_set_.images.size(2)));
  norm_ = normalisation_for(settings_.model);
  steps_per_epoch_ = train_set_.size() / settings_.batch;  // the last partial batch is dropped
  total_steps_ =
      settings_.steps > 0
          ? settings_.steps
          : std::max<int64_t>(
                1, static_cast<int64_t>(settings_.epochs * static_cast<double>(steps_per_epoch_)));
  at::manual_seed(settings_.seed);
  model_ = models::make_backbone(settings_.model);
  // A classification run: a backbone without a classifier (DINO's) has no class scores.
  models::require_classes(*model_, "training");
  device_ = runtime::select_device(settings_.device);
  model_->to(device_);
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (const auto& p : model_->named_parameters(true)) params.emplace_back(p.key(), p.value());
  AdamWOptions o;
  o.weight_decay = settings_.weight_decay;
  optimizer_ = std::make_unique<AdamW>(std::move(params), o);
}

void Trainer::resume(const std::string& checkpoint) {
  TrainingCheckpoint c = read_training_checkpoint(checkpoint);
  const std::string diff = first_difference(c.settings.to_json(), settings_.to_json());
  if (!diff.empty())
    throw std::runtime_error(checkpoint + " was written by a run with another '" + diff +
                             "' setting; resume with the settings it records, or start a new run");
  nn::load_state(*model_, c.model);
  optimizer_->load_state(c.optimizer, c.step);
  step_ = c.step;
  history_ = std::move(c.history);
  wall_s_ = c.wall_s;
}

std::string Trainer::latest_checkpoint(const std::string& run_dir) {
  const auto all = checkpoint_files(fs::path(run_dir) / "checkpoints");
  return all.empty() ? "" : all.back().string();
}

void Trainer::train_step() {
  const int64_t epoch = step_ / steps_per_epoch_;
  const int64_t pos = step_ % steps_per_epoch_;
  if (order_epoch_ != epoch) {
    order_ = data::epoch_order(train_set_.size(), settings_.seed, epoch);
    order_epoch_ = epoch;
  }
  const auto first = order_.begin() + pos * settings_.batch;
  const std::vector<int64_t> indices(first, first + settings_.batch);
  const at::Tensor images =
      data::make_batch(train_set_, indices, norm_, &settings_.augment,
                       data::mix_seed(settings_.seed ^ 0xA5A5A5A5ull, static_cast<uint64_t>(step_)))
          .to(device_);
  const at::Tensor labels = data::batch_labels(train_set_, indices).to(device_);

  const auto start = std::chrono::steady_clock::now();
  const double lr =
      warmup_cosine_lr(step_, total_steps_, settings_.warmup, settings_.lr, settings_.min_lr);
  model_->train();
  optimizer_->zero_grad();
  const at::Tensor logits = model_->run(images).logits;
  at::Tensor loss = smoothed_cross_entropy(logits, labels, settings_.label_smoothing);
  at::Tensor penalty;
  if (settings_.sparse_penalty > 0) {
    for (const auto& m : model_->modules(false))
      if (const auto* attn = dynamic_cast<const attention::AttentionMechanism*>(m.get()))
        if (attn->training_penalty().defined())
          penalty =
              penalty.defined() ? penalty + attn->training_penalty() : attn->training_penalty();
    if (penalty.defined()) loss = loss + settings_.sparse_penalty * penalty;
  }
  loss.backward();
  optimizer_->step(lr);
  ++step_;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  wall_s_ += seconds;

  StepRecord r;
  r.step = step_;
  r.epoch = static_cast<double>(step_) / static_cast<double>(steps_per_epoch_);
  r.lr = lr;
  r.loss = loss.item<double>();
  r.accuracy = logits.argmax(1).eq(labels).to(at::kDouble).mean().item<double>();
  r.penalty = penalty.defined() ? penalty.item<double>() : 0.0;
  r.images_per_second = static_cast<double>(settings_.batch) / std::max(seconds, 1e-9);
  r.elapsed_s = wall_s_;
  history_.push_back(r);
}

void Trainer::run(const Observer& on_step, const std::atomic<bool>* cancel) {
  fs::create_directories(fs::path(run_dir_) / "checkpoints");
  if (!series_dir_.empty()) fs::create_directories(series_dir_);
  if (step_ == 0) write_checkpoint();  // the untrained start of the series
  while (step_ < total_steps_) {
    train_step();
    if (on_step) on_step(history_.back());
    const bool due = settings_.checkpoint_every > 0 && step_ % settings_.checkpoint_every == 0;
    const bool stop = cancel && cancel->load();
    if (due || step_ == total_steps_ || stop) write_checkpoint();
    if (stop) return;
  }
  model_->eval();
}

std::string Trainer::write_checkpoint() {
  const fs::path dir = fs::path(run_dir_) / "checkpoints";
  fs::create_directories(dir);
  TrainingCheckpoint c;
  c.settings = settings_;
  c.step = step_;
  c.wall_s = wall_s_;
  c.history = history_;
  c.model = module_state(*model_);
  c.optimizer = optimizer_->state();
  const std::string path = (dir / step_name(step_)).string();
  write_training_checkpoint(path, c);
  if (!series_dir_.empty()) write_series_entry();
  // Keep the newest keep_last full checkpoints (names sort by step).
  std::vector<fs::path> all;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("step_", 0) == 0 &&
        e.path().extension() == ".safetensors")
      all.push_back(e.path());
  std::sort(all.begin(), all.end());
  const auto keep = static_cast<size_t>(std::max<int64_t>(1, settings_.keep_last));
  for (size_t i = 0; i + keep < all.size(); ++i) fs::remove(all[i]);
  return path;
}

void Trainer::write_series_entry() const {
  write_weights((fs::path(series_dir_) / step_name(step_)).string(), *model_, settings_.model,
                at::kHalf, {{"attnlab.step", std::to_string(step_)}});
}

}  // namespace attnlab::training
