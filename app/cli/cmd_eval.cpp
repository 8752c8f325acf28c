// `attnlab eval`: classification accuracy of a model on a labelled dataset.
//   attnlab eval --model CHECKPOINT|PRESET [model options] --dataset fashion-mnist:test|folder:DIR
//                [--limit N] [--batch B]
// Prints "accuracy 87.30% (8730/10000) on fashion-mnist:test" (first N images when limited).
// Fashion-MNIST is held in memory (47 MB) and normalised with the model's mean/std. A folder
// (DIR/<class>/<image>, classes sorted by name) is streamed: listed, then read a batch at a
// time, each image through the model's own preprocessing (its preset's or config's resize,
// centre crop, mean/std: what `classify` does), so memory does not grow with the number of
// images; progress goes to stderr, an unreadable image is reported and skipped, and the exit
// status is then 1.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "core/data/image_dataset.h"
#include "core/runtime/precision.h"
#include "models/training/evaluate.h"

namespace attnlab::cli {
namespace {

void print_accuracy(const training::Accuracy& acc, const std::string& spec, int limit,
                    int64_t considered) {
  std::string notes;
  if (limit > 0) notes += "first " + std::to_string(considered) + " images";
  if (acc.skipped > 0)
    notes += (notes.empty() ? "" : ", ") + std::to_string(acc.skipped) + " unreadable skipped";
  std::printf("accuracy %.2f%% (%lld/%lld) on %s%s\n", acc.percent(),
              static_cast<long long>(acc.correct), static_cast<long long>(acc.total), spec.c_str(),
              notes.empty() ? "" : (" (" + notes + ")").c_str());
}

}  // namespace

int cmd_eval(Args args, const GlobalOptions& g) {
  const std::string spec = args.take_option("--dataset");
  if (spec.empty()) throw UsageError("eval needs --dataset (fashion-mnist:test, folder:DIR, ...)");
  const int limit = args.take_positive_int("--limit", 0);
  const int batch = args.take_positive_int("--batch", 250);
  const ModelChoice choice = take_model_choice(args);
  if (!args.positionals().empty()) throw UsageError("eval takes no positional arguments");

  const runtime::ComputeTarget target = compute_target(g);
  const std::string folder = data::folder_of_spec(spec);
  if (!folder.empty()) {
    // Listed before the model loads, so a wrong path fails at once.
    const data::FolderListing listing = data::list_image_folder(folder);
    const ReadyModel ready = load_ready_model(choice, target);
    check_dataset_classes(spec, static_cast<int64_t>(listing.class_names.size()), ready);
    const int64_t n = limit > 0 ? std::min<int64_t>(limit, int64_t(listing.files.size()))
                                : int64_t(listing.files.size());
    std::fprintf(stderr, "eval: %lld images in %zu classes, preprocessing: %s\n",
                 static_cast<long long>(n), listing.class_names.size(),
                 choice.preprocessing.describe().c_str());
    Progress progress("eval", n);
    const training::Accuracy acc = training::evaluate_files(
        *ready.model, listing.files, choice.preprocessing, limit, batch,
        [&](const std::string& path, const std::string& error) {
          progress.break_line();
          std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", path.c_str(), error.c_str());
        },
        [&](int64_t done, int64_t, const std::string& last) { progress.update(done, last); });
    progress.finish();
    if (acc.total == 0) throw std::runtime_error(spec + ": no image could be read");
    print_accuracy(acc, spec, limit, n);
    return acc.skipped > 0 ? kExitFailure : kExitOk;
  }

  const ReadyModel ready = load_ready_model(choice, target);
  const data::ImageDataset set = load_dataset_for(spec, ready);
  const training::Accuracy acc = training::evaluate(
      *ready.model, set, data::normalisation_of(choice.preprocessing), limit, batch);
  print_accuracy(acc, spec, limit, acc.total);
  return kExitOk;
}

}  // namespace attnlab::cli
