// `attnlab faithfulness`: how faithful is each relevance map (issue 27)? For every model,
// image and map kind, the deletion and insertion curves (target class probability) and
// the positive and negative perturbation curves (top-1 against the label, or agreement
// with the unperturbed prediction without labels) over the cells of the first attention
// layer's grid, with their areas; and the model-randomisation check (Spearman correlation
// of the map with the map of the model whose top 1, L/2 and L blocks are re-initialised).
// Protocol: docs/ANALYSIS.md, "Faithfulness". Writes per-image and per-step CSVs, the
// summary (mean and std per model and map kind, CSV/JSON/LaTeX) and a sidecar.
//   faithfulness --models M1 M2... (--images FILES|DIR | --dataset folder:DIR|fashion-mnist:test
//                [--limit N]) --out DIR [--maps cls,rollout,gradcam,gradrollout,random,centre]
//                [--step 0.05] [--baseline blur|mean|zeros] [--batch 32]
//                [--randomisation on|off] [--seed 1] [--per-image on|off]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/merge_commands.h"
#include "app/cli/model_options.h"
#include "app/cli/shard_run.h"
#include "app/session/faithfulness_run.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "core/io/text.h"
#include "core/runtime/precision.h"
#include "models/faithfulness_run.h"
#include "viz/figures/faithfulness.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

// The images of the run: files (labelled when they come from a class folder) or an
// in-memory labelled set read at each model's input size.
struct ImageSource {
  std::string spec;                      // --dataset, "" for --images
  std::vector<data::LabelledFile> files;  // --images or folder:DIR
  std::vector<std::string> tags;
  bool labelled = false;
  int64_t limit = 0;
};

struct ScoredImage {
  at::Tensor image;  // (1, 3, H, W) on the device
  int64_t label = -1;
  std::string tag;
};

}  // namespace

namespace {

// The command's options, which merge reads back from a shard's manifest.
struct FaithfulnessOptions {
  std::vector<std::string> model_args, image_args;
  ImageSource source;
  std::string out_dir;
  session::FaithfulnessSettings settings;
};

FaithfulnessOptions take_faithfulness_options(Args& args) {
  FaithfulnessOptions o;
  o.model_args = args.take_list("--models");
  o.image_args = args.take_list("--images");
  ImageSource& source = o.source;
  source.spec = args.take_option("--dataset");
  source.limit = args.take_positive_int("--limit", 100);
  o.out_dir = args.take_option("--out");
  const std::string maps_text = args.take_option("--maps");
  models::PerturbationRequest request;
  request.step = args.take_real("--step", 0.05);
  const std::string baseline_text = args.take_option("--baseline");
  const int64_t batch = args.take_positive_int("--batch", 32);
  const std::string randomisation = args.take_option("--randomisation");
  const std::string per_image = args.take_option("--per-image");
  // The random maps, the order of equal cells and the re-initialised weights.
  request.seed = uint64_t(args.take_positive_int("--seed", 1));
  const auto rest = args.positionals();
  o.image_args.insert(o.image_args.end(), rest.begin(), rest.end());
  if (o.model_args.empty()) throw UsageError("faithfulness needs --models M1 [M2...]");
  if (o.image_args.empty() == source.spec.empty())
    throw UsageError("faithfulness takes either --images FILES|DIR or --dataset SPEC (labels)");
  std::vector<std::string> kinds;
  try {
    kinds = session::parse_faithfulness_maps(
        maps_text.empty() ? "cls,rollout,gradcam,gradrollout,random,centre" : maps_text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--maps: ") + e.what());
  }
  request.batch = batch;
  if (!(request.step > 0 && request.step <= 0.5))
    throw UsageError("--step is the fraction of cells per step, in (0, 0.5]");
  models::PerturbBaseline baseline = models::PerturbBaseline::Blur;
  if (!baseline_text.empty()) {
    try {
      baseline = models::parse_perturb_baseline(baseline_text);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--baseline: ") + e.what());
    }
  }
  if (!randomisation.empty() && randomisation != "on" && randomisation != "off")
    throw UsageError("--randomisation takes on or off");
  if (!per_image.empty() && per_image != "on" && per_image != "off")
    throw UsageError("--per-image takes on or off");
  session::FaithfulnessSettings& fs = o.settings;
  fs.kinds = kinds;
  fs.kinds_named = !maps_text.empty();
  fs.request = request;
  fs.baseline = baseline;
  fs.randomise = randomisation != "off";
  fs.labelled = !source.spec.empty();
  fs.per_image = per_image != "off";
  return o;
}

// The tables (CSV, JSON, the summary also LaTeX), the curves and the scoreboard (SVG, PDF,
// PNG) and the sidecar (`extra` added to the run's): what the command and merge write.
size_t write_faithfulness_results(const std::string& out_dir, const session::FaithfulnessRun& run,
                                  const nlohmann::json& extra) {
  analysis::OutputFolder out(out_dir, "faithfulness");
  const std::vector<analysis::Table> tables = run.tables();
  const analysis::Table* checks = nullptr;  // the randomisation summary, for the curves figure
  for (const auto& t : tables) {
    out.write_table(t);
    if (t.name == "faithfulness")
      analysis::write_table_latex(out.dir() + "/" + out.model_tag() + "__faithfulness.tex", t);
    if (t.name == "faithfulness_randomisation_summary") checks = &t;
  }
  const auto named = [&](const char* name) -> const analysis::Table& {
    for (const auto& t : tables)
      if (t.name == name) return t;
    throw std::logic_error(std::string("faithfulness: no table ") + name);
  };
  const analysis::Table& curves_t = named("faithfulness_curves");
  const analysis::Table& summary_t = named("faithfulness");
  // The curves and the scoreboard, SVG/PDF/PNG.
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& [stem, figure] :
       {std::make_pair(std::string("faithfulness_curves"),
                       viz::faithfulness_curves_figure(curves_t, {}, checks)),
        std::make_pair(std::string("faithfulness_scoreboard"),
                       viz::faithfulness_scoreboard_figure(summary_t))})
    for (const auto format :
         {viz::FigureFormat::Svg, viz::FigureFormat::Pdf, viz::FigureFormat::Png}) {
      const std::string path =
          out.dir() + "/" + out.model_tag() + "__" + stem + "." + viz::figure_format_name(format);
      viz::write_figure(figure.figure, path, format);
      figures.push_back({{"file", path}, {"caption", figure.caption}});
    }
  nlohmann::json sidecar = run.sidecar();
  sidecar["figures"] = figures;
  for (const auto& [key, value] : extra.items()) {
    if (key != "notes")
      sidecar[key] = value;
    else
      for (const auto& note : value) sidecar["notes"].push_back(note);  // models not loaded
  }
  out.write_sidecar(sidecar);
  std::printf("faithfulness: %zu summary rows and %zu figure files in %s\n", summary_t.rows.size(),
              figures.size(), out.dir().c_str());
  return summary_t.rows.size();
}

}  // namespace

int merge_faithfulness(const std::vector<ShardPart>& shards, const std::string& out,
                       const nlohmann::json& record) {
  const nlohmann::json& first = shards.front().manifest;
  Args options(first.at("options").get<std::vector<std::string>>());
  FaithfulnessOptions o = take_faithfulness_options(options);
  o.settings.labelled = first.at("labelled").get<bool>();
  session::FaithfulnessRun run(o.settings);
  std::vector<nlohmann::json> states;
  nlohmann::json extra = first.at("sidecar");
  double seconds = 0;
  for (const ShardPart& p : shards) {
    states.push_back(p.manifest.at("state"));
    seconds += p.manifest.at("sidecar").value("seconds", 0.0);
  }
  run.absorb_states(states);
  if (run.empty()) throw std::runtime_error("merge: the shards scored no map");
  extra["seconds"] = seconds;
  extra["merged_from"] = record;
  write_faithfulness_results(out, run, extra);
  return run.any_error() ? kExitFailure : kExitOk;
}

int cmd_faithfulness(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "faithfulness");
  FaithfulnessOptions o = take_faithfulness_options(args);
  if (o.out_dir.empty()) throw UsageError("faithfulness needs --out DIR");
  ImageSource& source = o.source;
  const std::vector<std::string>& model_args = o.model_args;
  const std::vector<std::string>& image_args = o.image_args;
  const std::string& out_dir = o.out_dir;

  const std::string folder = source.spec.empty() ? "" : data::folder_of_spec(source.spec);
  if (!image_args.empty()) {
    for (const auto& in : expand_images(image_args)) {
      source.files.push_back({in.path, -1});
      source.tags.push_back(in.tag);
    }
  } else if (!folder.empty()) {
    const data::FolderListing listing = data::list_image_folder(folder);
    for (const auto& f : listing.files) {
      if (int64_t(source.files.size()) == source.limit) break;
      source.files.push_back(f);
      source.tags.push_back(std::filesystem::path(f.path).stem().string());
    }
  }  // else an in-memory dataset, read at each model's input size

  const runtime::ComputeTarget target = compute_target(g);
  source.labelled = o.settings.labelled;
  session::FaithfulnessSettings& fs = o.settings;
  Progress* current = nullptr;  // the model's progress bar, broken by a note
  session::FaithfulnessRun run(fs, [&](const std::string& note, bool error) {
    if (current) current->break_line();
    std::fprintf(stderr, "attnlab: %s%s\n", error ? "error: " : "note: ", note.c_str());
  });
  std::vector<std::string> notes;  // models that could not be loaded
  if (shard.sharded()) run.keep_log();
  std::vector<std::string> list;  // the work list: the images, as every shard numbers them
  analysis::ShardRange part{0, 0};
  bool any_failed = false;
  const auto t0 = std::chrono::steady_clock::now();

  for (const auto& m : model_args) {
    ModelChoice choice;
    ReadyModel ready;
    try {
      session::ModelRequest r = session::model_entry_request(m);
      r.hash_checkpoint = true;
      choice = choose_request(r);
      ready = load_ready_model(choice, target);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnlab: error: model %s: %s (skipped)\n", m.c_str(), e.what());
      notes.push_back("model " + m + ": " + e.what());
      any_failed = true;
      continue;
    }
    data::ImageDataset set;
    if (source.labelled && folder.empty()) set = load_dataset_for(source.spec, ready);
    const int64_t n = folder.empty() && source.labelled
                          ? std::min<int64_t>(source.limit, set.size())
                          : int64_t(source.files.size());
    if (list.empty()) {  // the same for every model: the files, or the dataset's first n
      for (int64_t i = 0; i < n; ++i)
        list.push_back(source.files.empty() ? source.spec + "#" + std::to_string(i)
                                            : source.files[size_t(i)].path);
      part = shard_part(shard, n, "images");
    }
    Progress progress("faithfulness " + choice.tag, part.end - part.begin);
    current = &progress;
    run.begin_model(choice.tag);
    const auto t_model = std::chrono::steady_clock::now();
    std::array<int64_t, 2> shape{0, 0};
    for (int64_t i = part.begin; i < std::min(n, part.end); ++i) {
      ScoredImage im;
      if (folder.empty() && source.labelled) {
        im.image = data::make_batch(set, {i}, data::normalisation_of(choice.preprocessing), nullptr, 0);
        im.label = data::batch_labels(set, {i})[0].item<int64_t>();
        im.tag = "image" + std::to_string(i);
      } else {
        const data::FileBatch fb =
            data::load_file_batch(source.files, size_t(i), 1, choice.preprocessing, shape);
        if (fb.size() == 0) {
          progress.break_line();
          std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", source.files[size_t(i)].path.c_str(),
                       fb.failed.empty() ? "unreadable" : fb.failed.front().error.c_str());
          any_failed = true;
          continue;
        }
        im.image = fb.images;
        im.label = source.labelled ? fb.labels[0].item<int64_t>() : -1;
        im.tag = source.tags[size_t(i)];
      }
      progress.update(i - part.begin, im.tag);
      try {
        run.score(*ready.model, im.image.to(target.device), im.label, im.tag, i);
      } catch (const std::exception& e) {
        progress.break_line();
        std::fprintf(stderr, "attnlab: error: %s, %s: %s (skipped)\n", choice.tag.c_str(),
                     im.tag.c_str(), e.what());
        any_failed = true;
      }
    }
    progress.finish();
    current = nullptr;
    run.end_model(
        ready.description(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_model).count());
  }
  if (run.empty()) throw std::runtime_error("faithfulness: no map could be scored");
  any_failed = any_failed || run.any_error();
  nlohmann::json extra = {
      {"notes", notes},
      {"device", target.device.str()},
      {"dtype", runtime::dtype_name(target.dtype)},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  if (shard.sharded()) {
    std::filesystem::create_directories(out_dir);
    write_shard_manifest(
        shard, g, out_dir, "images", list, part,
        {{"labelled", source.labelled}, {"sidecar", extra}, {"state", run.save_state()}});
    std::printf(
        "faithfulness: shard %s: images %lld-%lld scored into %s (merge with attnlab "
        "merge)\n",
        shard.shard.text().c_str(), static_cast<long long>(part.begin),
        static_cast<long long>(part.end - 1), out_dir.c_str());
    return any_failed ? kExitFailure : kExitOk;
  }
  write_faithfulness_results(out_dir, run, extra);
  return any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
