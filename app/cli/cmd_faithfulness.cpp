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
//                [--randomisation on|off] [--seed 1]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "app/session/analyses/step_helpers.h"
#include "app/session/faithfulness_maps.h"
#include "core/analysis/export.h"
#include "core/analysis/faithfulness.h"
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

int cmd_faithfulness(Args args, const GlobalOptions& g) {
  const std::vector<std::string> model_args = args.take_list("--models");
  std::vector<std::string> image_args = args.take_list("--images");
  ImageSource source;
  source.spec = args.take_option("--dataset");
  source.limit = args.take_positive_int("--limit", 100);
  const std::string out_dir = args.take_option("--out");
  const std::string maps_text = args.take_option("--maps");
  models::PerturbationRequest request;
  request.step = args.take_real("--step", 0.05);
  const std::string baseline_text = args.take_option("--baseline");
  const int64_t batch = args.take_positive_int("--batch", 32);
  const std::string randomisation = args.take_option("--randomisation");
  // The random maps, the order of equal cells and the re-initialised weights.
  request.seed = uint64_t(args.take_positive_int("--seed", 1));
  const auto rest = args.positionals();
  image_args.insert(image_args.end(), rest.begin(), rest.end());
  if (model_args.empty()) throw UsageError("faithfulness needs --models M1 [M2...]");
  if (out_dir.empty()) throw UsageError("faithfulness needs --out DIR");
  if (image_args.empty() == source.spec.empty())
    throw UsageError("faithfulness takes either --images FILES|DIR or --dataset SPEC (labels)");
  std::vector<std::string> kinds;
  try {
    kinds = session::parse_faithfulness_maps(
        maps_text.empty() ? "cls,rollout,gradcam,gradrollout,random,centre" : maps_text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--maps: ") + e.what());
  }
  const bool kinds_named = !maps_text.empty();
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
  const bool randomise = randomisation != "off";

  const std::string folder = source.spec.empty() ? "" : data::folder_of_spec(source.spec);
  if (!image_args.empty()) {
    for (const auto& in : expand_images(image_args)) {
      source.files.push_back({in.path, -1});
      source.tags.push_back(in.tag);
    }
  } else if (!folder.empty()) {
    const data::FolderListing listing = data::list_image_folder(folder);
    source.labelled = true;
    for (const auto& f : listing.files) {
      if (int64_t(source.files.size()) == source.limit) break;
      source.files.push_back(f);
      source.tags.push_back(std::filesystem::path(f.path).stem().string());
    }
  } else {
    source.labelled = true;
  }

  const runtime::ComputeTarget target = compute_target(g);
  analysis::Table images_t = session::make_table(
      "faithfulness_images",
      "per image and map kind: areas under the deletion and insertion curves (target class "
      "probability; deletion low, insertion high is faithful) and the positive and negative "
      "perturbation curves (top-1 = reference; positive low, negative high is faithful)",
      {"model", "map", "image", "class", "reference", "auc_deletion", "auc_insertion",
       "auc_positive", "auc_negative"}, 5);
  analysis::Table curves_t = session::make_table(
      "faithfulness_curves", "each curve at each step: the share of cells changed and the value",
      {"model", "map", "image", "step", "fraction", "deletion", "insertion", "positive",
       "negative"}, 5);
  analysis::Table random_t = session::make_table(
      "faithfulness_randomisation",
      "model randomisation (cascading from the top): Spearman correlation of the map with the "
      "map of the model whose last `blocks` blocks carry fresh random weights",
      {"model", "map", "image", "blocks", "spearman"}, 4);
  analysis::TableAccumulator summary, random_summary;
  std::vector<std::string> notes;
  std::map<std::string, int64_t> full_cascade;  // per model: its block count
  bool any_failed = false;
  nlohmann::json per_model = nlohmann::json::array();
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
    std::vector<std::string> blocks;
    std::vector<std::string> model_kinds;
    // The randomisation cascade's models, built once (from the first image's blocks) and
    // used for every image and map kind: (re-initialised top blocks, model).
    std::vector<session::RandomisedCopy> cascade;
    Progress progress("faithfulness " + choice.tag, n);
    const auto t_model = std::chrono::steady_clock::now();
    std::array<int64_t, 2> shape{0, 0};
    for (int64_t i = 0; i < n; ++i) {
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
      progress.update(i, im.tag);
      try {
        im.image = im.image.to(target.device);
        const session::PreparedImage prepared = session::prepare_image(*ready.model, im.image);
        const int64_t predicted = prepared.predicted;
        const int64_t reference = im.label >= 0 ? im.label : predicted;
        if (randomise && cascade.empty()) {
          blocks = prepared.blocks;
          full_cascade[choice.tag] = int64_t(blocks.size());
          cascade = session::randomisation_cascade(*ready.model, blocks, request.seed);
        }
        const uint64_t map_seed = request.seed * 1000003u + uint64_t(i);
        const auto scored = session::score_maps(
            *ready.model, im.image, prepared, kinds, reference,
            models::baseline_image(im.image, baseline), request, map_seed,
            [&](const std::string& kind, const std::string& why) {  // a kind that does not apply
              const std::string note = choice.tag + ": " + kind + ": " + why;
              if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
                progress.break_line();
                std::fprintf(stderr, "attnlab: %s%s\n", kinds_named ? "error: " : "note: ",
                             note.c_str());
                notes.push_back(note);
              }
              any_failed = any_failed || kinds_named;
            });
        for (const session::ScoredMap& sm : scored) {
          const models::PerturbationCurves& c = sm.curves;
          if (std::find(model_kinds.begin(), model_kinds.end(), sm.kind) == model_kinds.end())
            model_kinds.push_back(sm.kind);
          images_t.add_row({choice.tag, sm.kind, im.tag, predicted, reference, c.auc_deletion,
                            c.auc_insertion, c.auc_positive, c.auc_negative});
          analysis::Table one = session::make_table(
              "faithfulness", "",
              {"model", "map", "auc_deletion", "auc_insertion", "auc_positive", "auc_negative"}, 2);
          one.add_row({choice.tag, sm.kind, c.auc_deletion, c.auc_insertion, c.auc_positive,
                       c.auc_negative});
          summary.add(one);
          for (size_t s = 0; s < c.counts.size(); ++s)
            curves_t.add_row({choice.tag, sm.kind, im.tag, int64_t(s),
                              double(c.counts[s]) / double(c.cells), c.deletion[s], c.insertion[s],
                              c.positive[s], c.negative[s]});
        }
        if (!cascade.empty()) {
          analysis::Table r1 = session::make_table("faithfulness_randomisation", "",
                                                   {"model", "map", "blocks", "spearman"}, 3);
          for (const session::RandomisationScore& r :
               session::randomisation_scores(cascade, scored, im.image, prepared, map_seed)) {
            random_t.add_row({choice.tag, r.kind, im.tag, r.blocks, r.spearman});
            r1.add_row({choice.tag, r.kind, r.blocks, r.spearman});
          }
          random_summary.add(r1);
        }
      } catch (const std::exception& e) {
        progress.break_line();
        std::fprintf(stderr, "attnlab: error: %s, %s: %s (skipped)\n", choice.tag.c_str(),
                     im.tag.c_str(), e.what());
        any_failed = true;
      }
    }
    progress.finish();
    per_model.push_back(
        {{"model", choice.tag},
         {"maps", model_kinds},
         {"blocks", blocks},
         {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_model).count()},
         {"description", ready.description()}});
  }
  if (images_t.rows.empty()) throw std::runtime_error("faithfulness: no map could be scored");

  analysis::Table summary_t = summary.result();
  summary_t.name = "faithfulness";
  summary_t.caption =
      "faithfulness per model and map kind, mean and std over the images: areas under the "
      "deletion (low is faithful), insertion (high), positive (low) and negative (high) "
      "perturbation curves";
  analysis::OutputFolder out(out_dir, "faithfulness");
  out.write_table(images_t);
  out.write_table(curves_t);
  out.write_table(summary_t);
  analysis::write_table_latex(out.dir() + "/" + out.model_tag() + "__faithfulness.tex", summary_t);
  std::optional<analysis::Table> checks;  // the randomisation summary, for the curves figure
  if (randomise && !random_t.rows.empty()) {
    out.write_table(random_t);
    analysis::Table rs = random_summary.result();
    rs.name = "faithfulness_randomisation_summary";
    rs.caption = "model randomisation: mean Spearman correlation with the trained model's map "
                 "per number of re-initialised top blocks; flagged when it stays >= " +
                 text::format_g(analysis::kRandomisationFlag) +
                 " with every block re-initialised";
    rs.columns.push_back("flagged");
    const size_t model_col = rs.column("model"), blocks_col = rs.column("blocks"),
                 mean_col = rs.column("spearman_mean");
    for (auto& row : rs.rows) {  // only the full cascade (every block re-initialised) flags
      const bool full = int64_t(row[blocks_col].number()) == full_cascade[row[model_col].str()];
      row.push_back(int64_t(full && row[mean_col].number() >= analysis::kRandomisationFlag));
    }
    out.write_table(rs);
    checks = std::move(rs);
  }
  // The curves and the scoreboard, SVG/PDF/PNG.
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& [stem, figure] :
       {std::make_pair(std::string("faithfulness_curves"),
                       viz::faithfulness_curves_figure(curves_t, {}, checks ? &*checks : nullptr)),
        std::make_pair(std::string("faithfulness_scoreboard"),
                       viz::faithfulness_scoreboard_figure(summary_t))})
    for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf, viz::FigureFormat::Png}) {
      const std::string path = out.dir() + "/" + out.model_tag() + "__" + stem + "." +
                               viz::figure_format_name(format);
      viz::write_figure(figure.figure, path, format);
      figures.push_back({{"file", path}, {"caption", figure.caption}});
    }
  out.write_sidecar(
      {{"command", "faithfulness"},
       {"figures", figures},
       {"maps", kinds},
       {"step", request.step},
       {"baseline", models::perturb_baseline_name(baseline)},
       {"batch", batch},
       {"seed", request.seed},
       {"labels",
        source.labelled ? "from the dataset" : "none: agreement with the unperturbed prediction"},
       {"randomisation", randomise},
       {"models", per_model},
       {"notes", notes},
       {"device", target.device.str()},
       {"dtype", runtime::dtype_name(target.dtype)},
       {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
  std::printf("faithfulness: %zu scores and %zu figure files in %s\n", images_t.rows.size(),
              figures.size(), out.dir().c_str());
  return any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
