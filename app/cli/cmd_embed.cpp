// `attnlab embed`: every image of a folder or a dataset as one vector (or its grid of token
// vectors) at any block of a model, for the projector, retrieval and whatever a notebook
// does with embeddings (issue 70; app/session/dataset_embedding.h writes the files).
//   attnlab embed --model M [model options] (--images DIR|FILES... | --dataset SPEC) --out DIR
//                 [--layer L] [--features output|keys|queries] [--pool head|cls|mean|tokens]
//                 [--limit N] [--batch 32] [--heads [--head-examples 8]] [--shard I/N]
// --features keys|queries embeds the block's attention keys or queries (per grid token the
// concatenation over heads; pool mean by default, head refused) instead of its output.
// --images DIR whose images sit in class sub-folders is labelled by the folder names (as
// --dataset folder:DIR); plain files and flat folders have no labels. Writes
// embeddings.npy, images.csv and embed.json (model, block, pool, counts, accuracy, time,
// peak memory). --heads adds every head's sharpness per image and the images where each
// head attends most sharply and most broadly (app/session/dataset_heads.h). Sharded (--shard I/N,
// or a Slurm array), each shard writes its rows and `attnlab merge` concatenates them: the single
// run's files, number for number (the shards split the list on whole batches).
#include <ATen/ATen.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/merge_commands.h"
#include "app/cli/model_options.h"
#include "app/cli/shard_run.h"
#include "app/session/dataset_embedding.h"
#include "app/session/dataset_heads.h"
#include "app/session/dataset_heads_figure.h"
#include "core/analysis/export.h"
#include "core/io/text.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

// --layer L: a block index, negative from the end (-1, the default, is the last block).
int64_t parse_layer(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < -1000 || v > 1000)
    throw UsageError("embed: --layer wants a block index (0, 1, ..., or -1 for the last), not '" +
                     text + "'");
  return v;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

// The head extremes figures beside the statistics (PNG and PDF; parts of 12 heads).
void write_head_figures(const std::string& out, int64_t k, const image::Preprocessing& p,
                        const data::ImageDataset* set, const std::string& model) {
  const std::vector<viz::CaptionedFigure> figures =
      session::head_extremes_figures(out, k, p, set, model);
  for (size_t i = 0; i < figures.size(); ++i) {
    const std::string stem =
        out + "/head_extremes" + (figures.size() > 1 ? "_part" + std::to_string(i + 1) : "");
    for (const auto format : {viz::FigureFormat::Png, viz::FigureFormat::Pdf})
      viz::write_figure(figures[i].figure, stem + "." + viz::figure_format_name(format), format);
  }
}

std::string embed_model_name(const ModelChoice& choice) {
  return choice.tag;
}

}  // namespace

int merge_embed(const std::vector<ShardPart>& shards, const std::string& out,
                const nlohmann::json& record) {
  std::vector<std::string> dirs;
  int64_t skipped = 0, correct = 0, judged = 0;
  double seconds = 0;
  for (const ShardPart& p : shards) {
    dirs.push_back(p.dir);
    const nlohmann::json& e = p.manifest.at("embed");
    skipped += e.at("skipped").get<int64_t>();
    correct += e.at("correct").get<int64_t>();
    judged += e.at("judged").get<int64_t>();
    seconds += e.at("seconds").get<double>();
  }
  const int64_t rows = session::concatenate_embeddings(dirs, out);
  const nlohmann::json& first = shards.front().manifest.at("embed");
  if (first.value("head_stats", false)) {
    const int64_t k = first.value("head_examples", int64_t{8});
    session::concatenate_head_stats(dirs, out, k);
    // The figures read the pictures again: the run's preprocessing (its model options; no
    // weights are loaded) and, for a dataset, the dataset.
    Args options(shards.front().manifest.at("options").get<std::vector<std::string>>());
    (void)options.take_option("--dataset");
    const ModelChoice choice = take_model_choice(options);
    const std::string spec = first.value("source", std::string());
    std::shared_ptr<data::ImageDataset> set;
    if (spec.rfind("fashion-mnist:", 0) == 0)
      set = std::make_shared<data::ImageDataset>(
          data::load_dataset(spec, int(choice.config.value("img_size", 28))));
    write_head_figures(out, k, choice.preprocessing, set.get(), embed_model_name(choice));
  }
  nlohmann::json summary = shards.front().manifest.at("embed");
  summary["images"] = rows;
  summary["shape"][0] = rows;
  summary["skipped"] = skipped;
  summary["correct"] = correct;
  summary["judged"] = judged;
  if (judged > 0) summary["accuracy_percent"] = 100.0 * double(correct) / double(judged);
  summary["seconds"] = seconds;  // the shards' own time, summed
  summary.erase("peak_rss_mib");
  summary["merged_from"] = record;
  analysis::write_json(out + "/embed.json", summary);
  std::printf("merge: %lld embedding(s) of %zu shards in %s\n", static_cast<long long>(rows),
              shards.size(), out.c_str());
  return skipped > 0 ? kExitFailure : kExitOk;
}

int cmd_embed(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "embed");
  const std::string out = args.take_option("--out");
  if (out.empty()) throw UsageError("embed needs --out DIR");
  const std::string spec = args.take_option("--dataset");
  const std::vector<std::string> image_args = args.take_list("--images");
  session::EmbeddingOptions options;
  options.layer = parse_layer(args.take_option("--layer"));
  try {
    const std::string features = args.take_option("--features");
    options.features = models::parse_embedding_features(features.empty() ? "output" : features);
    const std::string pool = args.take_option("--pool");
    options.pool = pool.empty() ? models::default_embedding_pool(options.features)
                                : models::parse_embedding_pool(pool);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("embed: ") + e.what());
  }
  const int64_t limit = args.take_positive_int("--limit", 0);
  options.batch = args.take_positive_int("--batch", 32);
  options.heads = args.take_flag("--heads");
  options.head_examples = args.take_positive_int("--head-examples", 8);
  const ModelChoice choice = take_model_choice(args);
  std::vector<std::string> images = image_args;
  for (const auto& p : args.positionals()) images.push_back(p);
  if (spec.empty() && images.empty())
    throw UsageError(
        "embed needs --images DIR|FILES or --dataset SPEC (fashion-mnist:test, "
        "folder:DIR)");
  if (!spec.empty() && !images.empty())
    throw UsageError("embed takes --dataset or images, not both");

  const auto t0 = std::chrono::steady_clock::now();
  const runtime::ComputeTarget target = compute_target(g);
  // Folders are listed before the model loads (a wrong path fails at once); the dataset
  // after, at the model's image size.
  const auto source_for = [&](int64_t img_size, int64_t classes) {
    try {
      return session::embedding_source(images, spec, img_size, classes);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("embed: ") + e.what());
    }
  };
  if (spec.empty() || !data::folder_of_spec(spec).empty()) source_for(0, 0);
  const ReadyModel ready = load_ready_model(choice, target);
  const bool classes = ready.model->output_kind() == models::OutputKind::classes;
  const int64_t k = classes ? ready.config.value("num_classes", int64_t{0}) : 0;
  const session::EmbeddingSource all = source_for(ready.config.value("img_size", int64_t{224}), k);
  const int64_t n = limit > 0 ? std::min<int64_t>(limit, all.size()) : all.size();
  const analysis::ShardRange part = shard_part(shard, n, "images", options.batch);
  const session::EmbeddingSource source = all.part(part.begin, part.end);
  const std::string& what = all.what;
  const std::vector<std::string> class_names =
      k > 0 ? session::model_class_names(choice, ready.config, k) : std::vector<std::string>{};
  std::fprintf(stderr, "embed: %lld images of %s, features %s, pool %s, preprocessing: %s\n",
               static_cast<long long>(part.end - part.begin), what.c_str(),
               models::embedding_features_name(options.features).c_str(),
               models::embedding_pool_name(options.pool).c_str(),
               choice.preprocessing.describe().c_str());

  Progress progress("embed", part.end - part.begin);
  session::EmbeddingCallbacks cb;
  cb.on_error = [&](const std::string& path, const std::string& error) {
    progress.break_line();
    std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", path.c_str(), error.c_str());
  };
  cb.on_progress = [&](int64_t done, int64_t, const std::string& last) {
    progress.update(done, last);
  };
  const session::EmbeddingSummary s = session::write_embeddings(
      *ready.model, choice.preprocessing, class_names, source, options, out, cb);
  progress.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::json summary = session::embedding_record(s, source, options, class_names);
  summary["source"] = what;
  summary["model"] = ready.describe;
  summary["limit"] = limit;
  summary["seconds"] = seconds;
  summary["peak_rss_mib"] = peak_rss_mib();
  summary["device"] = target.str();
  if (options.heads)
    write_head_figures(out, options.head_examples, choice.preprocessing, source.set.get(),
                       embed_model_name(choice));
  const int rc = s.skipped > 0 ? kExitFailure : kExitOk;
  if (shard.sharded()) {
    std::vector<std::string> list;
    for (int64_t i = 0; i < n; ++i) list.push_back(what + "#" + std::to_string(i));
    write_shard_manifest(shard, g, out, "images", list, part, {{"embed", summary}, {"exit", rc}},
                         options.batch);
  } else {
    analysis::write_json(out + "/embed.json", summary);
  }
  std::printf(
      "embed: %lld x %s at %s (%s%s) in %s/%s, %.1f s, peak %.0f MiB%s\n",
      static_cast<long long>(s.embedded),
      nlohmann::json(std::vector<int64_t>(s.shape.begin() + 1, s.shape.end())).dump().c_str(),
      s.block.c_str(),
      options.features == models::EmbeddingFeatures::output
          ? ""
          : (models::embedding_features_name(options.features) + " of " + s.attention + ", ")
                .c_str(),
      models::embedding_pool_name(options.pool).c_str(), out.c_str(), session::kEmbeddingsNpy,
      seconds, peak_rss_mib(),
      s.labelled_predicted > 0
          ? (", accuracy " + text::format_g(summary["accuracy_percent"].get<double>(), 4) + "%")
                .c_str()
          : "");
  return rc;
}

}  // namespace attnlab::cli
