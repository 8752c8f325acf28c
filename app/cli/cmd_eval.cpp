// `attnlab eval`: classification accuracy of a model on a labelled dataset.
//   attnlab eval --model CHECKPOINT|PRESET [model options] --dataset fashion-mnist:test
//                [--limit N] [--batch B]
// Prints "accuracy 87.30% (8730/10000) on fashion-mnist:test" (first N images when limited).
#include <ATen/ATen.h>

#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "core/data/image_dataset.h"
#include "core/runtime/device.h"
#include "models/training/evaluate.h"

namespace attnlab::cli {

int cmd_eval(Args args, const GlobalOptions& g) {
  const std::string spec = args.take_option("--dataset");
  if (spec.empty()) throw UsageError("eval needs --dataset (fashion-mnist:test, folder:DIR, ...)");
  const int limit = args.take_positive_int("--limit", 0);
  const int batch = args.take_positive_int("--batch", 250);
  const ModelChoice choice = take_model_choice(args);
  if (!args.positionals().empty()) throw UsageError("eval takes no positional arguments");

  const c10::Device device = runtime::select_device(g.device);
  const ReadyModel ready = load_chosen_model(choice, device);
  const int size = static_cast<int>(ready.config.value("img_size", 224));
  const data::ImageDataset set = data::load_dataset(spec, size);
  if (set.images.size(2) != size || set.images.size(3) != size)
    throw std::runtime_error(spec + " holds " + std::to_string(set.images.size(3)) + "×" +
                             std::to_string(set.images.size(2)) + " images; the model takes " +
                             std::to_string(size) + "×" + std::to_string(size));
  const int64_t classes = ready.config.value("num_classes", int64_t{1000});
  if (set.classes() > classes)
    throw std::runtime_error(spec + " has " + std::to_string(set.classes()) +
                             " classes; the model predicts " + std::to_string(classes));
  const training::Accuracy acc = training::evaluate(
      *ready.model, set, data::normalisation_of(choice.preprocessing), limit, batch);
  std::printf("accuracy %.2f%% (%lld/%lld) on %s%s\n", acc.percent(),
              static_cast<long long>(acc.correct), static_cast<long long>(acc.total), spec.c_str(),
              limit > 0 ? (" (first " + std::to_string(acc.total) + " images)").c_str() : "");
  return kExitOk;
}

}  // namespace attnlab::cli
