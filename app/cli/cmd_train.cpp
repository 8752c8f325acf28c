// `attnlab train`: train a model (the zoo skeleton with any mechanism, a config file or a
// preset) on Fashion-MNIST or an ImageFolder directory. See docs/TRAINING.md.
//   attnlab train --mechanism NAME | --config JSON | --preset NAME  --out RUN_DIR
//                 [--dataset fashion-mnist:train|folder:DIR] [--test-dataset SPEC|none]
//                 [--epochs E | --steps N] [--batch B] [--lr LR] [--min-lr LR] [--warmup N]
//                 [--weight-decay W] [--label-smoothing S] [--shift PX] [--no-flip]
//                 [--seed S] [--checkpoint-every K] [--keep-last K] [--series DIR]
//                 [--threshold EPS] [--sparse-penalty L] [--option NAME=VALUE ...]
//                 [--width C --depth L --heads H --patch P --mlp-ratio R]
//                 [--export FILE] [--resume [CHECKPOINT]]
// Ctrl-C is not trapped: the last checkpoint is at most --checkpoint-every steps old and
// --resume (no value: the run's newest checkpoint) continues exactly.
#include <ATen/ATen.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/cli/cli_common.h"
#include "app/cli/train_report.h"
#include "core/data/image_dataset.h"
#include "core/runtime/device.h"
#include "core/runtime/precision.h"
#include "models/model_config.h"
#include "models/presets.h"
#include "models/training/trainer.h"
#include "models/training/zoo_skeleton.h"

namespace attnlab::cli {
namespace fs = std::filesystem;
namespace {

nlohmann::json parse_value(const std::string& text) {
  nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
  return v.is_discarded() ? nlohmann::json(text) : v;
}

// The model config: the zoo skeleton with --mechanism, a --config file or a --preset.
nlohmann::json model_config(Args& args, const data::ImageDataset& train_set) {
  const std::string mechanism = args.take_option("--mechanism");
  const std::string config_path = args.take_option("--config");
  const std::string preset = args.take_option("--preset");
  const int given = !mechanism.empty() + !config_path.empty() + !preset.empty();
  if (given != 1) throw UsageError("train needs exactly one of --mechanism, --config, --preset");
  nlohmann::json options = nlohmann::json::object();
  for (const std::string& kv : args.take_list("--option")) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--option wants NAME=VALUE, got '" + kv + "'");
    options[kv.substr(0, eq)] = parse_value(kv.substr(eq + 1));
  }
  const double threshold = args.take_real("--threshold", -1.0);
  if (threshold >= 0) options["threshold"] = threshold;
  training::SkeletonShape shape;
  shape.width = args.take_positive_int("--width", static_cast<int>(shape.width));
  shape.depth = args.take_positive_int("--depth", static_cast<int>(shape.depth));
  shape.heads = args.take_positive_int("--heads", static_cast<int>(shape.heads));
  shape.patch_size = args.take_positive_int("--patch", static_cast<int>(shape.patch_size));
  shape.mlp_ratio = args.take_real("--mlp-ratio", shape.mlp_ratio);
  shape.img_size =
      args.take_positive_int("--image-size", static_cast<int>(train_set.images.size(2)));
  if (!mechanism.empty())
    return training::zoo_skeleton_config(mechanism, train_set.class_names, shape, options);
  nlohmann::json c = config_path.empty() ? models::find_preset(preset).config
                                         : models::config_from_file(config_path);
  c["num_classes"] = train_set.classes();
  c["class_names"] = train_set.class_names;
  if (!options.empty())
    for (const auto& [k, v] : options.items()) c["attention_options"][k] = v;
  return c;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s = "attnlab train";
  for (const auto& a : argv) s += " " + a;
  return s;
}

}  // namespace

int cmd_train(Args args, const GlobalOptions& g) {
  // Refused first, before anything is read. Training keeps fp32 master weights and gradients;
  // --dtype sets the precision of the analysis commands' forward passes, which a reduced-precision
  // training run would not be.
  if (runtime::parse_dtype(g.dtype) != c10::kFloat)
    throw UsageError(
        "train runs at fp32 (--dtype " + g.dtype +
        " is for the forward of analyze, report, eval, ...); drop --dtype or ATTNLAB_DTYPE");
  const std::vector<std::string> argv = args.remaining();
  const std::string out = args.take_option("--out");
  if (out.empty()) throw UsageError("train needs --out RUN_DIR (checkpoints and metrics go there)");
  const std::string train_spec = [&] {
    const std::string s = args.take_option("--dataset");
    return s.empty() ? std::string("fashion-mnist:train") : s;
  }();
  std::string test_spec = args.take_option("--test-dataset");
  if (test_spec.empty())
    test_spec = train_spec.rfind("fashion-mnist:", 0) == 0 ? "fashion-mnist:test" : "none";
  const int folder_size = args.take_positive_int("--folder-image-size", 28);

  std::fprintf(stderr, "train: loading %s\n", train_spec.c_str());
  data::ImageDataset train_set = data::load_dataset(train_spec, folder_size);

  training::TrainSettings s;
  s.model = model_config(args, train_set);
  s.train_set = train_spec;
  s.test_set = test_spec == "none" ? "" : test_spec;
  s.epochs = args.take_real("--epochs", s.epochs);
  s.steps = args.take_positive_int("--steps", 0);
  s.batch = args.take_positive_int("--batch", static_cast<int>(s.batch));
  s.lr = args.take_real("--lr", s.lr);
  s.min_lr = args.take_real("--min-lr", s.min_lr);
  s.warmup = static_cast<int64_t>(args.take_real("--warmup", static_cast<double>(s.warmup)));
  s.weight_decay = args.take_real("--weight-decay", s.weight_decay);
  s.label_smoothing = args.take_real("--label-smoothing", s.label_smoothing);
  s.augment.max_shift = static_cast<int>(args.take_real("--shift", s.augment.max_shift));
  s.augment.hflip = !args.take_flag("--no-flip");
  const double seed = args.take_real("--seed", 0);
  if (seed < 0 || seed != std::floor(seed) || seed > 9.0e15)
    throw UsageError("--seed needs a whole number >= 0");
  s.seed = static_cast<uint64_t>(seed);
  s.checkpoint_every = static_cast<int64_t>(args.take_real("--checkpoint-every", 0));
  s.keep_last = args.take_positive_int("--keep-last", static_cast<int>(s.keep_last));
  s.sparse_penalty = args.take_real("--sparse-penalty", 0.0);
  s.device = g.device == "auto" ? (runtime::cuda_available() ? "cuda" : "cpu") : g.device;
  const std::string series = args.take_option("--series");
  const std::string export_path = args.take_option("--export");
  const bool resume = args.has_flag("--resume");
  std::string resume_from = resume ? args.take_optional_value("--resume") : "";
  if (!(s.lr > 0) || s.min_lr < 0 || s.warmup < 0 || s.weight_decay < 0 || s.label_smoothing < 0 ||
      s.label_smoothing >= 1 || s.augment.max_shift < 0 || !(s.epochs > 0) || s.sparse_penalty < 0)
    throw UsageError(
        "train: a numeric option is out of range (lr > 0, min-lr/warmup/"
        "weight-decay/shift/sparse-penalty >= 0, 0 <= label-smoothing < 1, epochs > 0)");
  if (!args.positionals().empty()) throw UsageError("train takes no positional arguments");

  training::Trainer trainer(s, std::move(train_set), out, series);
  if (resume) {
    if (resume_from.empty()) resume_from = training::Trainer::latest_checkpoint(out);
    if (resume_from.empty()) throw UsageError("--resume: no checkpoint in " + out + "/checkpoints");
    trainer.resume(resume_from);
    std::fprintf(stderr, "train: resumed from %s at step %lld\n", resume_from.c_str(),
                 static_cast<long long>(trainer.step()));
  } else if (!training::Trainer::latest_checkpoint(out).empty()) {
    throw UsageError(out +
                     " already holds checkpoints: add --resume to continue that run, or "
                     "choose another --out");
  }
  std::fprintf(stderr, "train: %s, %lld steps (%lld per epoch, batch %lld), device %s, %s\n",
               s.model.value("attention", s.model.value("arch", "")).c_str(),
               static_cast<long long>(trainer.total_steps()),
               static_cast<long long>(trainer.steps_per_epoch()), static_cast<long long>(s.batch),
               s.device.c_str(), runtime::describe_runtime().c_str());

  TrainProgress progress(trainer.total_steps(), trainer.step());
  trainer.run([&](const training::StepRecord& r) { progress.update(r); });
  progress.finish();
  write_metrics(out, trainer);
  finish_training_run(trainer, out, export_path, command_line(argv), g);
  return kExitOk;
}

}  // namespace attnlab::cli
