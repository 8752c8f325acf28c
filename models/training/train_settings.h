// Everything that decides a training run, in one struct: what `attnlab train` parses,
// what a training checkpoint records (so `--resume` can refuse a run with other
// settings), and what the zoo's zoo.json reports.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "core/data/batches.h"

namespace attnlab::training {

struct TrainSettings {
  nlohmann::json model;  // the model config (make_backbone)
  std::string train_set = "fashion-mnist:train";
  std::string test_set = "fashion-mnist:test";  // "" = no evaluation at the end
  double epochs = 1.0;                          // used when steps == 0
  int64_t steps = 0;                            // total optimiser steps; 0 = from epochs
  int64_t batch = 128;
  double lr = 1e-3, min_lr = 1e-5;
  int64_t warmup = 100;  // steps of linear warm-up
  double weight_decay = 0.05;
  double label_smoothing = 0.1;
  data::Augmentation augment;
  uint64_t seed = 0;
  int64_t checkpoint_every = 0;  // steps; 0 = at the start and the end only
  int64_t keep_last = 2;         // full training checkpoints kept in the run directory
  double sparse_penalty = 0.0;   // weight of Castling's mask regulariser (0 = off)
  std::string device = "cpu";

  // Every field but device (which may change on resume) as JSON.
  nlohmann::json to_json() const;
};

// The settings a checkpoint recorded; throws std::runtime_error on a malformed record.
TrainSettings settings_from_json(const nlohmann::json& j);

}  // namespace attnlab::training
