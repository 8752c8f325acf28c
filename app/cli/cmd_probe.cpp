// `attnlab probe`: linear probes (Alain and Bengio 2016) on every block of a frozen model —
// per block a multinomial logistic regression (core/analysis/linear_probe.h) on the
// block's readout features (the class token, or the mean of the grid tokens, as the
// model's head pools them: models/lens_run.h) of a labelled image set, trained on 4/5 of
// each class and tested on every 5th image (--every) — beside the logit lens's top-1
// accuracy (the model's own head on the same block) on the same held-out images.
//   attnlab probe --model M [model options] --dataset folder:DIR|fashion-mnist:test --out DIR
//                 [--layers LIST] [--every 5] [--l2 1e-3] [--max-iterations 200]
//                 [--limit N] [--batch 32]
// A folder's labels are its sorted class folders (as `eval`): the lens's accuracy compares
// the model's own classes with them, so it is NaN (and said) when the folder has more
// classes than the model predicts, and for a model without a classifier (DINO, CLIP): the
// probes still run. One forward per batch keeps every block's output; features are kept
// as float32 (n images × blocks × width), the probes fit in float64 afterwards.
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <limits>
#include <set>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "core/analysis/linear_probe.h"
#include "core/analysis/output_folder.h"
#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "core/io/text.h"
#include "core/runtime/precision.h"
#include "models/lens_run.h"
#include "viz/figures/lens.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

// What one pass over the images keeps, per selected block (forward order).
struct ProbePass {
  std::vector<std::string> blocks;                // every block of the forward
  std::vector<int64_t> selected;                  // the probed blocks' indices
  std::vector<std::vector<at::Tensor>> features;  // [selected] -> (B, F) float32 chunks
  std::vector<at::Tensor> labels;                 // (B) int64 chunks
  std::string lens_note;                          // why there is no lens ("" = there is)
  std::vector<int64_t> lens_depth;                // the blocks the lens reads
  std::vector<at::Tensor> lens_top1;              // (B, lens blocks) int64 chunks
  int64_t images = 0, skipped = 0;
};

// The first batch fixes the blocks and checks --layers against them.
void select_blocks(ProbePass& p, const std::vector<std::string>& blocks,
                   const std::vector<int64_t>& layers) {
  p.blocks = blocks;
  for (const int64_t l : layers)
    if (l >= int64_t(blocks.size()))
      throw UsageError("probe: --layers " + std::to_string(l) + ": the model has " +
                       std::to_string(blocks.size()) + " blocks (0-" +
                       std::to_string(blocks.size() - 1) + ")");
  p.selected = layers;
  if (p.selected.empty())
    for (int64_t i = 0; i < int64_t(blocks.size()); ++i) p.selected.push_back(i);
  p.features.resize(p.selected.size());
}

void add_batch(ProbePass& p, models::Backbone& model, const at::Tensor& x, const at::Tensor& y,
               const std::vector<int64_t>& layers) {
  models::ForwardResult r;
  {
    const at::NoGradGuard no_grad;
    r = model.run(x, models::lens_forward_options());
  }
  if (p.blocks.empty()) select_blocks(p, models::forward_blocks(r), layers);
  const auto features = models::block_readout_features(model, r);
  for (size_t s = 0; s < p.selected.size(); ++s)
    p.features[s].push_back(features[size_t(p.selected[s])].features.to(at::kFloat));
  p.labels.push_back(y.to(at::kLong));
  p.images += x.size(0);
  if (!p.lens_note.empty()) return;
  try {
    std::vector<at::Tensor> rows;
    for (int64_t b = 0; b < x.size(0); ++b) {
      const models::LensLogits lens = models::lens_logits(model, r, b);
      if (p.lens_depth.empty()) p.lens_depth = lens.depth;
      rows.push_back(lens.logits.argmax(1));
    }
    p.lens_top1.push_back(at::stack(rows));
  } catch (const models::ModelError& e) {  // a family that does not read its blocks out
    p.lens_note = e.what();
    p.lens_top1.clear();
  }
}

// The share of `rows` whose lens top-1 at lens block `column` is the label.
double lens_accuracy(const at::Tensor& top1, const at::Tensor& labels, const at::Tensor& rows,
                     int64_t column) {
  const at::Tensor hits =
      top1.index_select(0, rows).select(1, column).eq(labels.index_select(0, rows));
  return hits.to(at::kDouble).mean().item<double>();
}

analysis::Table probe_table(const ProbePass& p, const analysis::ProbeOptions& options,
                            int64_t every, Progress& progress) {
  const at::Tensor labels = at::cat(p.labels);
  analysis::ProbeSplit split;
  try {
    split = analysis::split_for_probe(labels.size(0), labels, every);
  } catch (const std::invalid_argument&) {
    const std::string e = std::to_string(every);
    throw UsageError("probe: --every " + e + ": no class has " + e +
                     " readable images, so none is held out for testing (give a smaller "
                     "--every, at least 2)");
  }
  const at::Tensor top1 = p.lens_note.empty() ? at::cat(p.lens_top1) : at::Tensor();
  analysis::Table t;
  t.name = "probe";
  t.caption =
      "linear probe per block: multinomial logistic regression (float64, "
      "standardised features, L-BFGS, L2 ";
  t.caption += text::format_g(options.l2) + " on the weights) on the block's readout features, ";
  t.caption += "tested on each class's every " + std::to_string(every) + "th image, trained on ";
  t.caption +=
      "the others; top-1 accuracies, the final objective (loss), L-BFGS iterations, "
      "convergence; lens_test_accuracy: the model's own final norm and head on the "
      "same block, top-1 against the same test labels (nan: ";
  t.caption += (p.lens_note.empty() ? "a block the head cannot read" : p.lens_note) + ")";
  t.columns = {"layer",       "block",          "features",          "train_images",
               "test_images", "train_accuracy", "test_accuracy",     "loss",
               "iterations",  "converged",      "lens_test_accuracy"};
  t.key_columns = 2;
  for (size_t s = 0; s < p.selected.size(); ++s) {
    const int64_t block = p.selected[s];
    const at::Tensor x = at::cat(p.features[s]);
    progress.update(int64_t(s), p.blocks[size_t(block)]);
    const analysis::ProbeResult r = analysis::train_linear_probe(
        x.index_select(0, split.train), labels.index_select(0, split.train),
        x.index_select(0, split.test), labels.index_select(0, split.test), options);
    double lens = std::numeric_limits<double>::quiet_NaN();
    for (size_t c = 0; top1.defined() && c < p.lens_depth.size(); ++c)
      if (p.lens_depth[c] == block) lens = lens_accuracy(top1, labels, split.test, int64_t(c));
    t.add_row({block, p.blocks[size_t(block)], x.size(1), split.train.size(0), split.test.size(0),
               r.train_accuracy, r.test_accuracy, r.loss, r.iterations, int64_t(r.converged),
               lens});
  }
  progress.update(int64_t(p.selected.size()), "done");
  return t;
}

}  // namespace

int cmd_probe(Args args, const GlobalOptions& g) {
  const std::string spec = args.take_option("--dataset");
  if (spec.empty()) throw UsageError("probe needs --dataset folder:DIR (one folder per class)");
  const std::string out_dir = args.take_option("--out");
  if (out_dir.empty()) throw UsageError("probe needs --out DIR");
  const std::string layers_text = args.take_option("--layers");
  const std::vector<int64_t> layers =
      layers_text.empty() ? std::vector<int64_t>{} : parse_layers(layers_text);
  const int64_t every = args.take_positive_int("--every", 5);
  if (every < 2)
    throw UsageError("probe: --every must be at least 2 (every Nth image is held out)");
  analysis::ProbeOptions options;
  options.l2 = args.take_real("--l2", options.l2);
  if (!(options.l2 >= 0)) throw UsageError("probe: --l2 must be >= 0");
  options.max_iterations = args.take_positive_int("--max-iterations", int(options.max_iterations));
  const int64_t limit = args.take_positive_int("--limit", 0);
  const int64_t batch = args.take_positive_int("--batch", 32);
  const ModelChoice choice = take_model_choice(args);
  if (!args.positionals().empty()) throw UsageError("probe takes no positional arguments");

  // A folder is listed before the model loads, so a wrong path or a one-class folder fails
  // at once.
  const std::string folder = data::folder_of_spec(spec);
  if (folder.empty() && spec.rfind("fashion-mnist:", 0) != 0)
    throw UsageError("probe: --dataset " + spec +
                     ": no such folder (folder:DIR, DIR/<class>/<image>, or fashion-mnist:test)");
  data::FolderListing listing;
  if (!folder.empty()) {
    try {
      listing = data::list_image_folder(folder);
    } catch (const data::DatasetError& e) {
      throw UsageError(std::string("probe: ") + e.what());
    }
    if (listing.class_names.size() < 2)
      throw UsageError("probe: " + spec + " has " + std::to_string(listing.class_names.size()) +
                       " class folder (" + listing.class_names.front() +
                       "): a probe needs at least 2 classes, one sub-folder each");
  }
  const runtime::ComputeTarget target = compute_target(g);
  const ReadyModel ready = load_ready_model(choice, target);
  data::ImageDataset set;
  if (folder.empty()) set = data::load_dataset(spec, int(ready.config.value("img_size", 224)));
  const int64_t classes = folder.empty() ? set.classes() : int64_t(listing.class_names.size());
  const int64_t available = folder.empty() ? set.size() : int64_t(listing.files.size());
  const int64_t n = limit > 0 ? std::min(limit, available) : available;
  options.classes = classes;

  ProbePass pass;
  if (ready.model->output_kind() == models::OutputKind::embedding)
    pass.lens_note = models::embedding_output_note("the logit lens", 0, ready.model->arch());
  else if (const int64_t k = ready.config.value("num_classes", int64_t{1000}); classes > k)
    pass.lens_note = spec + " has " + std::to_string(classes) + " classes, the model predicts " +
                     std::to_string(k) + ": its head's top-1 cannot be scored against them";
  std::fprintf(stderr, "probe: %lld images in %lld classes, preprocessing: %s\n", (long long)n,
               (long long)classes, choice.preprocessing.describe().c_str());

  const auto t0 = std::chrono::steady_clock::now();
  std::array<int64_t, 2> shape{0, 0};
  Progress progress("probe", n);
  bool lens_said = false;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t count = std::min(batch, n - start);
    at::Tensor x, y;
    std::vector<std::string> names;  // of the images in the batch, for the progress line
    if (folder.empty()) {
      std::vector<int64_t> idx;
      for (int64_t i = start; i < start + count; ++i)
        idx.push_back(i), names.push_back(spec + " #" + std::to_string(i));
      x = data::make_batch(set, idx, data::normalisation_of(choice.preprocessing), nullptr, 0);
      y = data::batch_labels(set, idx);
    } else {
      const data::FileBatch fb = data::load_file_batch(listing.files, size_t(start), size_t(count),
                                                       choice.preprocessing, shape);
      std::set<std::string> failed;
      for (const auto& f : fb.failed) {
        progress.break_line();
        std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", f.path.c_str(), f.error.c_str());
        failed.insert(f.path);
        ++pass.skipped;
      }
      for (int64_t i = start; i < start + count; ++i)
        if (!failed.count(listing.files[size_t(i)].path))
          names.push_back(listing.files[size_t(i)].path);
      if (fb.size() == 0) continue;
      x = fb.images;
      y = fb.labels;
    }
    add_batch(pass, *ready.model, x.to(target.device), y, layers);
    if (!pass.lens_note.empty() && !lens_said) {
      progress.break_line();
      std::fprintf(stderr, "probe: no logit lens (probes only): %s\n", pass.lens_note.c_str());
      lens_said = true;
    }
    const int64_t failed = count - x.size(0);  // counted as done, so the line ends at n
    for (int64_t b = 0; b < x.size(0); ++b)
      progress.update(start + failed + b + 1, names[size_t(b)]);
  }
  progress.finish();
  if (pass.images == 0) throw std::runtime_error(spec + ": no image could be read");
  const double forward_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Progress training("probe: training", int64_t(pass.selected.size()), "block");
  const analysis::Table table = probe_table(pass, options, every, training);
  training.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  analysis::OutputFolder out(out_dir, choice.tag);
  out.write_table(table);
  const viz::CaptionedFigure figure = viz::probe_figure({{choice.tag, table}});
  for (const auto format : {viz::FigureFormat::Png, viz::FigureFormat::Svg, viz::FigureFormat::Pdf})
    viz::write_figure(
        figure.figure,
        out.dir() + "/" + out.model_tag() + "__probe." + viz::figure_format_name(format), format);
  out.write_sidecar(
      {{"command", "probe"},
       {"model", ready.description()},
       {"dataset", spec},
       {"classes", classes},
       {"images", pass.images},
       {"skipped", pass.skipped},
       {"every", every},
       {"l2", options.l2},
       {"max_iterations", options.max_iterations},
       {"logit_lens", pass.lens_note.empty() ? "model's final norm and head" : pass.lens_note},
       {"figure", {{"caption", figure.caption}}},
       {"seconds", {{"forward_and_features", forward_seconds}, {"total", seconds}}},
       {"device", target.device.str()},
       {"dtype", runtime::dtype_name(target.dtype)}});
  std::printf(
      "probe: %lld images, %zu blocks in %.2f s (forwards %.2f s, probes %.2f s); wrote %s\n",
      (long long)pass.images, pass.selected.size(), seconds, forward_seconds,
      seconds - forward_seconds, out_dir.c_str());
  return pass.skipped > 0 ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
