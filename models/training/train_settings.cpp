// TrainSettings <-> JSON.
#include "models/training/train_settings.h"

#include <stdexcept>

namespace attnlab::training {

nlohmann::json TrainSettings::to_json() const {
  return {{"model", model},
          {"train_set", train_set},
          {"test_set", test_set},
          {"epochs", epochs},
          {"steps", steps},
          {"batch", batch},
          {"lr", lr},
          {"min_lr", min_lr},
          {"warmup", warmup},
          {"weight_decay", weight_decay},
          {"label_smoothing", label_smoothing},
          {"augment", {{"max_shift", augment.max_shift}, {"hflip", augment.hflip}}},
          {"seed", seed},
          {"checkpoint_every", checkpoint_every},
          {"keep_last", keep_last},
          {"sparse_penalty", sparse_penalty}};
}

TrainSettings settings_from_json(const nlohmann::json& j) {
  try {
    TrainSettings s;
    s.model = j.at("model");
    s.train_set = j.at("train_set").get<std::string>();
    s.test_set = j.at("test_set").get<std::string>();
    s.epochs = j.at("epochs").get<double>();
    s.steps = j.at("steps").get<int64_t>();
    s.batch = j.at("batch").get<int64_t>();
    s.lr = j.at("lr").get<double>();
    s.min_lr = j.at("min_lr").get<double>();
    s.warmup = j.at("warmup").get<int64_t>();
    s.weight_decay = j.at("weight_decay").get<double>();
    s.label_smoothing = j.at("label_smoothing").get<double>();
    s.augment.max_shift = j.at("augment").at("max_shift").get<int>();
    s.augment.hflip = j.at("augment").at("hflip").get<bool>();
    s.seed = j.at("seed").get<uint64_t>();
    s.checkpoint_every = j.at("checkpoint_every").get<int64_t>();
    s.keep_last = j.at("keep_last").get<int64_t>();
    s.sparse_penalty = j.at("sparse_penalty").get<double>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("training settings record is malformed: ") + e.what());
  }
}

}  // namespace attnlab::training
