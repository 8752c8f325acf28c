// `attnlab head-importance`: every head of a model switched off alone on a labelled image
// set (models/head_ablation.h), batched: per head, the drop of the predicted class's
// probability, the rise of the cross-entropy loss against the labels and the change of
// top-1 accuracy, averaged over the images (mean and std per head), as tables (CSV, JSON,
// LaTeX) and layers × heads figures.
//   attnlab head-importance --model M [model options] --dataset folder:DIR|fashion-mnist:test
//                           --out DIR [--limit N (100)] [--batch B (25)]
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/merge_commands.h"
#include "app/cli/model_options.h"
#include "app/cli/shard_run.h"
#include "core/analysis/exact_table_json.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "core/runtime/precision.h"
#include "models/head_ablation.h"
#include "viz/figures/head_importance.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

analysis::Table image_rows(const models::AblationPlan& plan, const models::HeadAblationBatch& r,
                           int64_t b) {
  analysis::Table t;
  t.name = "head_importance";
  t.caption =
      "head importance by ablation on a labelled set: each head's output channels zeroed "
      "before its layer's output projection, one head at a time; probability_drop: p(c) "
      "unablated - ablated for the unablated prediction c; loss_increase: cross-entropy "
      "against the label, ablated - unablated; accuracy_drop: top-1 correct unablated - "
      "ablated (a mean of 0/1 per image); top1_kept: the prediction stays c";
  t.columns = {"layer",         "path",          "mechanism",     "head",     "probability_drop",
               "loss_increase", "accuracy_drop", "top1_kept"};
  t.key_columns = 4;
  const double p0 = r.probability[b].item<double>(), l0 = r.loss[b].item<double>(),
               c0 = r.correct[b].item<double>();
  for (size_t l = 0; l < plan.layers.size(); ++l)
    for (size_t h = 0; h < plan.layers[l].heads.size(); ++h) {
      const auto at = [&](const at::Tensor& x) { return x[int64_t(l)][int64_t(h)][b].item<double>(); };
      t.add_row({int64_t(l), plan.layers[l].path, plan.layers[l].mechanism, int64_t(h),
                 p0 - at(r.ablated_probability), at(r.ablated_loss) - l0,
                 c0 - at(r.ablated_correct), at(r.ablated_top1_kept)});
    }
  return t;
}

// The mean/std table (CSV, JSON, LaTeX), its two figures (SVG, PDF) and the sidecar: what
// the command and merge write.
void write_head_importance(const std::string& out_dir, const std::string& tag,
                           const analysis::Table& table, const nlohmann::json& sidecar) {
  analysis::OutputFolder out(out_dir, tag);
  out.write_table(table);
  analysis::write_table_latex(out.dir() + "/" + out.model_tag() + "__head_importance.tex", table);
  const std::vector<std::pair<std::string, analysis::Table>> tables{{tag, table}};
  viz::HeadImportanceOptions loss;
  loss.column = "loss_increase_mean";
  loss.label = "rise of the cross-entropy loss";
  for (const auto& [stem, figure] :
       {std::make_pair(std::string("head_importance"), viz::head_importance_figure(tables)),
        std::make_pair(std::string("head_importance_loss"),
                       viz::head_importance_figure(tables, loss))})
    for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf})
      viz::write_figure(
          figure.figure,
          out.dir() + "/" + out.model_tag() + "__" + stem + "." + viz::figure_format_name(format),
          format);
  out.write_sidecar(sidecar);
}

}  // namespace

int merge_head_importance(const std::vector<ShardPart>& shards, const std::string& out,
                          const nlohmann::json& record) {
  // The shards' running means and stds combined in the list's order.
  analysis::TableAccumulator acc;
  nlohmann::json sidecar = shards.front().manifest.at("sidecar");
  int64_t images = 0, skipped = 0;
  double seconds = 0;
  for (const ShardPart& p : shards) {
    try {
      acc.absorb(analysis::accumulator_from_json(p.manifest.at("table")));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(p.dir + ": " + e.what());
    }
    const nlohmann::json& s = p.manifest.at("sidecar");
    images += s.at("images").get<int64_t>();
    skipped += s.at("skipped").get<int64_t>();
    seconds += s.value("seconds", 0.0);
  }
  if (images == 0) throw std::runtime_error("merge: no shard could read an image");
  sidecar["images"] = images;
  sidecar["skipped"] = skipped;
  sidecar["seconds"] = seconds;
  sidecar["merged_from"] = record;
  write_head_importance(out, shards.front().manifest.at("model_tag").get<std::string>(),
                        acc.result(), sidecar);
  std::printf("merge: head-importance of %lld images from %zu shards in %s\n",
              static_cast<long long>(images), shards.size(), out.c_str());
  return skipped > 0 ? kExitFailure : kExitOk;
}

int cmd_head_importance(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "head-importance");
  const std::string spec = args.take_option("--dataset");
  if (spec.empty())
    throw UsageError("head-importance needs --dataset folder:DIR or fashion-mnist:test (labels)");
  const std::string out_dir = args.take_option("--out");
  if (out_dir.empty()) throw UsageError("head-importance needs --out DIR");
  const int64_t limit = args.take_positive_int("--limit", 100);
  const int64_t batch = args.take_positive_int("--batch", 25);
  const ModelChoice choice = take_model_choice(args);
  if (!args.positionals().empty()) throw UsageError("head-importance takes no positional arguments");

  const runtime::ComputeTarget target = compute_target(g);
  // A folder is listed before the model loads, so a wrong path fails at once; an
  // in-memory set is read at the model's input size.
  const std::string folder = data::folder_of_spec(spec);
  data::FolderListing listing;
  data::ImageDataset set;
  if (!folder.empty()) listing = data::list_image_folder(folder);
  const ReadyModel ready = load_ready_model(choice, target);
  if (folder.empty())
    set = load_dataset_for(spec, ready);
  else
    check_dataset_classes(spec, int64_t(listing.class_names.size()), ready);
  const int64_t available = folder.empty() ? set.size() : int64_t(listing.files.size());
  const int64_t n = std::min(limit, available);
  // A shard does whole batches of the list: each image with every head.
  const analysis::ShardRange part = shard_part(shard, n, "images", batch);

  const models::AblationPlan plan = models::plan_head_ablation(*ready.model);
  for (const auto& u : plan.unsupported)
    std::fprintf(stderr, "head-importance: %s does not say where its heads enter its output "
                         "projection; its heads are left out\n", u.c_str());
  std::fprintf(stderr, "head-importance: %lld images, %lld heads in %zu layers: %lld forward "
                       "passes of %lld images\n",
               (long long)n, (long long)plan.heads(), plan.layers.size(),
               (long long)((plan.heads() + 1) * ((n + batch - 1) / batch)), (long long)batch);

  analysis::TableAccumulator acc;
  int64_t images = 0, skipped = 0;
  std::array<int64_t, 2> shape{0, 0};
  Progress progress("head-importance", part.end - part.begin);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t start = part.begin; start < part.end; start += batch) {
    const int64_t count = std::min(batch, part.end - start);
    at::Tensor x, y;
    if (folder.empty()) {
      std::vector<int64_t> idx(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) idx[size_t(i)] = start + i;
      x = data::make_batch(set, idx, data::normalisation_of(choice.preprocessing), nullptr, 0);
      y = data::batch_labels(set, idx);
    } else {
      const data::FileBatch fb =
          data::load_file_batch(listing.files, size_t(start), size_t(count), choice.preprocessing, shape);
      for (const auto& f : fb.failed) {
        progress.break_line();
        std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", f.path.c_str(), f.error.c_str());
        ++skipped;
      }
      if (fb.size() == 0) continue;
      x = fb.images;
      y = fb.labels;
    }
    const models::HeadAblationBatch r = models::ablate_heads(
        *ready.model, plan, x.to(target.device), y, [&](int64_t done, int64_t total) {
          progress.update(start - part.begin + count * done / total,
                          "head " + std::to_string(done) + "/" + std::to_string(total));
        });
    for (int64_t b = 0; b < x.size(0); ++b) acc.add(image_rows(plan, r, b));
    images += x.size(0);
  }
  progress.finish();
  if (images == 0) throw std::runtime_error(spec + ": no image could be read");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const nlohmann::json sidecar = {{"command", "head-importance"},
                                  {"dataset", spec},
                                  {"images", images},
                                  {"skipped", skipped},
                                  {"batch", batch},
                                  {"heads", plan.heads()},
                                  {"unsupported_layers", plan.unsupported},
                                  {"seconds", seconds},
                                  {"device", target.device.str()},
                                  {"dtype", runtime::dtype_name(target.dtype)}};
  if (shard.sharded()) {
    std::vector<std::string> list;
    for (int64_t i = 0; i < n; ++i)
      list.push_back(folder.empty() ? spec + "#" + std::to_string(i)
                                    : listing.files[size_t(i)].path);
    std::filesystem::create_directories(out_dir);
    write_shard_manifest(shard, g, out_dir, "images", list, part,
                         {{"model_tag", choice.tag},
                          {"exit", skipped > 0 ? kExitFailure : kExitOk},
                          {"sidecar", sidecar},
                          {"table", analysis::accumulator_json(acc)}},
                         batch);
  } else {
    write_head_importance(out_dir, choice.tag, acc.result(), sidecar);
  }
  std::printf("head-importance: %lld images x %lld heads in %.1f s (%.2f ms per image and head); "
              "wrote %s\n",
              (long long)images, (long long)plan.heads(), seconds,
              1e3 * seconds / double(images * (plan.heads() + 1)), out_dir.c_str());
  return skipped > 0 ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
