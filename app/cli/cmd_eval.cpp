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
#include <filesystem>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/merge_commands.h"
#include "app/cli/model_options.h"
#include "app/cli/shard_run.h"
#include "core/analysis/export.h"
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

// A sharded eval's part: its counts in shard.json; merge adds them and prints the line.
void write_eval_shard(const ShardRun& shard, const GlobalOptions& g, const std::string& out,
                      const std::string& spec, int limit, int batch, int64_t n,
                      const analysis::ShardRange& part, const training::Accuracy& acc) {
  std::vector<std::string> list;
  for (int64_t i = 0; i < n; ++i) list.push_back(spec + "#" + std::to_string(i));
  std::filesystem::create_directories(out);
  write_shard_manifest(shard, g, out, "images", list, part,
                       {{"spec", spec},
                        {"limit", limit},
                        {"correct", acc.correct},
                        {"total", acc.total},
                        {"skipped", acc.skipped},
                        {"exit", acc.skipped > 0 ? kExitFailure : kExitOk}},
                       batch);
  std::printf("eval: shard %s: %lld/%lld correct, %lld unreadable (merge with attnlab merge)\n",
              shard.shard.text().c_str(), static_cast<long long>(acc.correct),
              static_cast<long long>(acc.total), static_cast<long long>(acc.skipped));
}

}  // namespace

int merge_eval(const std::vector<ShardPart>& shards, const std::string& out,
               const nlohmann::json& record) {
  training::Accuracy acc;
  for (const ShardPart& p : shards) {
    acc.correct += p.manifest.at("correct").get<int64_t>();
    acc.total += p.manifest.at("total").get<int64_t>();
    acc.skipped += p.manifest.at("skipped").get<int64_t>();
  }
  const nlohmann::json& first = shards.front().manifest;
  const std::string spec = first.at("spec").get<std::string>();
  if (acc.total == 0) throw std::runtime_error(spec + ": no image could be read in any shard");
  std::filesystem::create_directories(out);
  analysis::write_json(out + "/eval.json", {{"dataset", spec},
                                            {"accuracy_percent", acc.percent()},
                                            {"correct", acc.correct},
                                            {"total", acc.total},
                                            {"skipped", acc.skipped},
                                            {"merged_from", record}});
  // As the single run says it: the images considered are the list's, read or not.
  print_accuracy(acc, spec, first.value("limit", 0), first.at("list").at("size").get<int64_t>());
  return acc.skipped > 0 ? kExitFailure : kExitOk;
}

int cmd_eval(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "eval");
  const std::string shard_out = args.take_option("--out");
  if (shard.sharded() && shard_out.empty())
    throw UsageError("a sharded eval needs --out DIR (the shard's folder, for attnlab merge)");
  if (!shard.sharded() && !shard_out.empty())
    throw UsageError("eval prints its accuracy; --out is a shard's folder (with --shard I/N)");
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
    const analysis::ShardRange part = shard_part(shard, n, "images", batch);
    const std::vector<data::LabelledFile> files(listing.files.begin() + part.begin,
                                                listing.files.begin() + part.end);
    Progress progress("eval", part.end - part.begin);
    const training::Accuracy acc = training::evaluate_files(
        *ready.model, files, choice.preprocessing, 0, batch,
        [&](const std::string& path, const std::string& error) {
          progress.break_line();
          std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", path.c_str(), error.c_str());
        },
        [&](int64_t done, int64_t, const std::string& last) { progress.update(done, last); });
    progress.finish();
    if (shard.sharded()) {
      write_eval_shard(shard, g, shard_out, spec, limit, batch, n, part, acc);
      return acc.skipped > 0 ? kExitFailure : kExitOk;
    }
    if (acc.total == 0) throw std::runtime_error(spec + ": no image could be read");
    print_accuracy(acc, spec, limit, n);
    return acc.skipped > 0 ? kExitFailure : kExitOk;
  }

  const ReadyModel ready = load_ready_model(choice, target);
  data::ImageDataset set = load_dataset_for(spec, ready);
  const int64_t n = limit > 0 ? std::min<int64_t>(limit, set.size()) : set.size();
  const analysis::ShardRange part = shard_part(shard, n, "images", batch);
  if (shard.sharded()) {  // its part of the first n images
    set.images = set.images.slice(0, part.begin, part.end);
    set.labels = set.labels.slice(0, part.begin, part.end);
  }
  const training::Accuracy acc =
      training::evaluate(*ready.model, set, data::normalisation_of(choice.preprocessing),
                         shard.sharded() ? 0 : limit, batch);
  if (shard.sharded()) {
    write_eval_shard(shard, g, shard_out, spec, limit, batch, n, part, acc);
    return kExitOk;
  }
  print_accuracy(acc, spec, limit, acc.total);
  return kExitOk;
}

}  // namespace attnlab::cli
