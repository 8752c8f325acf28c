// `attnlab classify`: preprocess images exactly as the model's preset says, run the model,
// print the top-5 classes with probabilities (the user's --class-names, else the config's
// class_names, else ImageNet-1k names from assets/imagenet1k_classes.txt for 1000-class
// models), or with --out write the top-k of every image to a CSV as they are computed
// (streamed: memory does not grow with the number of images; the file appears whole at
// the end, or not at all).
//   attnlab classify --model|--checkpoint FILE [--preset NAME | --config JSON] [--key K]
//                    [--img-size H[,W]] [--class-names FILE] [--images FILES|DIR]
//                    [--out PREDS.csv] [--top K] [IMAGE...]
// The config comes from --preset / --config, the checkpoint's safetensors metadata, or is
// recognised from its keys and shapes (app/cli/model_options.h); the preprocessing from
// the preset (or, without one, the family's default at the config's img_size).
#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/image_list.h"
#include "app/cli/merge_commands.h"
#include "app/cli/model_options.h"
#include "app/cli/shard_run.h"
#include "app/session/predictions.h"
#include "core/image/preprocess.h"
#include "core/io/file_bytes.h"
#include "core/io/image_io.h"
#include "core/io/tensor_file.h"
#include "core/runtime/precision.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::cli {
namespace {

// A CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

int cmd_classify(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "classify");
  const std::vector<std::string> image_args = args.take_list("--images");
  std::string out_path = args.take_option("--out");
  // A shard's --out is its folder: its part of the CSV (kClassifyCsv) and shard.json.
  if (shard.sharded() && out_path.empty())
    throw UsageError("a sharded classify needs --out DIR (the shard's folder)");
  const std::string shard_dir = shard.sharded() ? out_path : "";
  if (shard.sharded()) {
    std::filesystem::create_directories(shard_dir);
    out_path = shard_dir + "/" + kClassifyCsv;
  }
  const int top = args.take_positive_int("--top", 5);
  if (args.has_flag("--random-init"))
    throw UsageError("classify needs trained weights: --model CHECKPOINT (not --random-init)");
  // The model, its config (given, in the file, or recognised from its keys and shapes), its
  // preprocessing and the user's class names (a bad names file fails before anything runs).
  const ModelChoice choice = take_model_choice(args);
  std::vector<std::string> images = args.positionals();
  for (const ImageInput& im : expand_images(image_args)) images.push_back(im.path);
  if (images.empty()) throw UsageError("classify needs at least one IMAGE (or --images DIR)");
  const std::vector<std::string> list = images;
  const analysis::ShardRange part = shard_part(shard, int64_t(list.size()), "images");
  images.assign(list.begin() + part.begin, list.begin() + part.end);
  if (choice.checkpoint.empty())
    throw UsageError("classify needs --model CHECKPOINT (presets carry configs, not weights)");
  const image::Preprocessing& pre = choice.preprocessing;
  const runtime::ComputeTarget target = compute_target(g);
  const ReadyModel ready = load_ready_model(choice, target);
  const auto& model = ready.model;
  models::require_classes(*model, "classify");  // DINO, CLIP: an embedding, no top-5
  std::vector<std::string> names;  // filled at the first image, when the class count is known
  std::printf("preprocessing: %s\n", pre.describe().c_str());

  int rc = kExitOk;
  at::NoGradGuard no_grad;
  Progress* progress = nullptr;  // the CSV run's progress line, when there is one
  // The top-k of one image, or nothing (the error reported, the image skipped).
  const auto classify = [&](const std::string& path) -> std::vector<session::Prediction> {
    try {
      const at::Tensor x = image::preprocess(io::load_rgb_image(path), pre).to(target.device);
      const at::Tensor logits = model->run(x).logits[0];
      if (!at::isfinite(logits).all().item<bool>())
        throw std::runtime_error(
            "the model's logits are not finite (NaN/Inf)" +
            std::string(ready.warnings.empty() ? "" : ": " + ready.warnings.front()));
      if (names.empty()) names = session::model_class_names(choice, ready.config, logits.size(0));
      return session::top_predictions(logits, names, top);
    } catch (const std::exception& e) {
      if (progress) progress->break_line();
      std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", path.c_str(), e.what());
      rc = kExitFailure;
      return {};
    }
  };
  if (out_path.empty()) {
    for (const auto& path : images) {
      const auto top_k = classify(path);
      if (top_k.empty()) continue;
      std::printf("%s\n", path.c_str());
      for (const session::Prediction& p : top_k)
        std::printf("  %6.2f%%  %4lld  %s\n", 100.0 * p.probability, static_cast<long long>(p.cls),
                    p.name.c_str());
    }
    return rc;
  }
  Progress csv_progress("classify", int64_t(images.size()));
  progress = &csv_progress;
  int64_t written = 0;
  io::write_file_atomic(out_path, [&](const io::ByteSink& sink) {
    const auto line = [&](const std::string& text) { sink(text.data(), text.size()); };
    line("image,rank,class,name,probability\n");
    for (size_t i = 0; i < images.size(); ++i) {
      const auto top_k = classify(images[i]);
      for (size_t r = 0; r < top_k.size(); ++r) {
        char prob[32];
        std::snprintf(prob, sizeof prob, "%.6g", top_k[r].probability);
        line(csv_field(images[i]) + "," + std::to_string(r + 1) + "," +
             std::to_string(top_k[r].cls) + "," + csv_field(top_k[r].name) + "," + prob + "\n");
      }
      written += !top_k.empty();
      csv_progress.update(int64_t(i + 1), images[i]);
    }
  });
  csv_progress.finish();
  if (shard.sharded()) {
    write_shard_manifest(shard, g, shard_dir, "images", list, part,
                         {{"csv", kClassifyCsv}, {"classified", written}, {"exit", rc}});
    std::printf("classify: shard %s: top-%d of %lld of %zu image(s) in %s\n",
                shard.shard.text().c_str(), top, static_cast<long long>(written), images.size(),
                out_path.c_str());
    return rc;
  }
  std::printf("classify: top-%d of %lld of %zu image(s) in %s\n", top,
              static_cast<long long>(written), images.size(), out_path.c_str());
  return rc;
}

int merge_classify(const std::vector<ShardPart>& shards, const std::string& out,
                   const nlohmann::json&) {
  // The shards' CSVs, one header, rows in the list's order: the single run's file.
  std::filesystem::create_directories(out);
  const std::string path = out + "/" + kClassifyCsv;
  int64_t rows = 0;
  io::write_file_atomic(path, [&](const io::ByteSink& sink) {
    for (size_t i = 0; i < shards.size(); ++i) {
      const std::vector<uint8_t> bytes = io::read_file_bytes(shards[i].dir + "/" + kClassifyCsv);
      const std::string part(bytes.begin(), bytes.end());
      const size_t header_end = part.find('\n');
      if (header_end == std::string::npos)
        throw std::runtime_error(shards[i].dir + "/" + kClassifyCsv + " has no header line");
      const size_t from = i == 0 ? 0 : header_end + 1;
      sink(part.data() + from, part.size() - from);
      for (size_t c = header_end + 1; c < part.size(); ++c) rows += part[c] == '\n';
    }
  });
  std::printf("merge: %lld prediction row(s) of %zu shards in %s\n", static_cast<long long>(rows),
              shards.size(), path.c_str());
  return kExitOk;
}

}  // namespace attnlab::cli
