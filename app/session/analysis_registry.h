// Analyses by name. Each analysis is one file in app/session/analyses/ defining
// `AnalysisInfo <name>_analysis()`: its name and summary, what it needs of a trace, its
// compute step, what it writes; and its figures (built by viz/figures, LibTorch-free), which
// analyses/<name>_figures.cpp attaches. analyses/analysis_list.h lists them, one line each.
// `attnlab analyze --analyses` and its help, `attnlab report`, the GUI's tabs and its script
// command `tab` all iterate this registry. See docs/ARCHITECTURE.md, "Adding an analysis".
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/session/analysis_options.h"
#include "app/session/results.h"
#include "core/attention/attention_trace.h"
#include "core/image/preprocess.h"
#include "models/backbone.h"

namespace attnlab::session {

class AnalysisSession;
struct AnalysisSettings;

// A traced layer the session analyses: its index among the traced layers (forward
// order), its state-dict path and its trace.
struct SessionLayer {
  int64_t index = 0;
  std::string path;
  const attention::AttentionTrace* trace = nullptr;
};

// Where an image came from, for the analyses that read more than the traces (the
// segmentation's ground truth: a mask file named as the image, or the picture's own
// foreground, brought to the model's input as the image was). Any field may be empty: a
// caller that does not know it (a test with a random tensor) leaves it so, and the
// analysis says what it could not do.
struct ImageSource {
  std::string path;                                     // the image file ("" unknown)
  const at::Tensor* input = nullptr;                    // (1, 3, H, W) preprocessed, any device
  const image::Preprocessing* preprocessing = nullptr;  // how `input` was made
};

// What an analysis step sees of one image: the settings, the image's tag, the selected
// layers whose traces offer everything the analysis needs (never empty), the forward
// result, the image's index `b` in that result's batch (the traces' and outputs' first
// axis: a batch of images goes through the model at once), and the session to hand its
// results to (emit, accumulate, add_sum, ...).
struct ImageStep {
  const AnalysisSettings& settings;
  const std::string& image;
  const std::vector<SessionLayer>& layers;
  const models::ForwardResult& result;
  int64_t b;
  AnalysisSession& session;
  const ImageSource& source;
};

// A class-specific analysis's view of one image: it runs its own forward with autograd on
// the model for the preprocessed image (1, 3, H, W). `explanations` collects the
// "explanations" table's rows (image, analysis, explained, class, logit).
struct ExplainStep {
  const AnalysisSettings& settings;
  const std::string& image;
  models::Backbone& model;
  const at::Tensor& input;
  AnalysisSession& session;
  analysis::Table& explanations;
};

// A tab of the GUI showing an analysis's figure for the current image.
struct AnalysisTab {
  std::string id;     // the tab's name (script command `tab ID`)
  std::string title;  // shown on the tab
  // Reads every model's results (a comparison), not only the current model's.
  bool all_models = false;
  // The tab shows a checkpoint series (AnalysisInfo::series) and is drawn by the GUI's
  // series view with `series_figure`; `figure` is then unused.
  bool series = false;
  std::function<viz::CaptionedFigure(const TabInputs&)> figure;  // throws when it cannot
  // A hint shown under the figure ("" = none).
  std::string hint;
  // The group of tabs it is shown in: an id of app/gui/views/tab_table.cpp's groups (maps,
  // spectral, tokens, features, explain, training, model). "" or an unknown id: the group "More".
  // Last, so that positional initialisations need not name it (its `= {}` keeps -Wextra
  // quiet then).
  std::string group = {};
};

struct AnalysisInfo {
  std::string name;     // as on the command line
  std::string summary;  // one line for --help, docs and the GUI
  // Trace capabilities (core/attention/capabilities.h) a layer must offer to be analysed;
  // a model none of whose layers offers them is skipped with a note saying so.
  std::vector<std::string> needs;
  // The tables it writes (per-image tables are folded into mean/std over the images), and
  // the keys of the arrays it writes (analysis::ResultKey, as patterns), for the docs,
  // `attnlab analyses` and the series view.
  std::vector<std::string> tables;
  std::vector<std::string> arrays;
  // The fields its array keys carry beyond the image (core/analysis/result_key.h), when
  // they carry a layer, a query, a branch or a part; registered with the analysis. The
  // shipped analyses' shapes are built into result_key.cpp (the on-disk names).
  std::optional<analysis::ResultKeyShape> key_shape;
  // The forward must record each attention module's output (ForwardOptions::record_outputs).
  bool needs_outputs = false;
  // Over a training series it is what `report --series` and the GUI's series view measure.
  bool series = false;
  // Its series figure reads a resolution sweep as well ("<table>_sizes" tables, x the input
  // size: analyze-sizes, report --img-sizes, the GUI's size sweep): a statistic of one
  // model's images, not of training (Castling's mask) nor of a series as a whole (CKA to
  // the final checkpoint).
  bool over_sizes = false;
  // The GUI runs it with every image analysis (cheap statistics its tab reads); maps and
  // rollout are answered per query from the traces instead, explanations on request.
  bool in_image_analysis = false;
  // Or only when this says the model is small enough to run it with every image (heads:
  // one forward per head); null: as in_image_analysis says.
  std::function<bool(const models::ForwardResult&)> in_image_analysis_if;
  // Not part of "all" (analyze's and report's default): it costs passes of its own per
  // image far beyond the forward (heads: one forward per head), so it runs when named.
  bool opt_in = false;
  // An opt-in analysis that `report --demo` runs anyway: cheap on the zoo's small models
  // (erf, heads), unlike faithfulness's hundreds of perturbed forwards per image.
  bool in_demo = false;

  // The compute step from one image's traces (null for a class-specific analysis).
  std::function<void(ImageStep&)> add;
  // Called once after the last image (AnalysisSession::finish): an analysis fitted on all
  // images together (feature PCA's shared basis) emits its per-image results here.
  std::function<void(AnalysisSession&)> finish;
  // For an analysis with a finish, in a run split into shards (AnalysisSession::save_state):
  // what it keeps for finish saved into a folder of its own (returning what names it), and
  // a saved one added to this session's, shard after shard (attnlab merge), so that finish
  // fits on every image of the run. Without them the analysis cannot be sharded.
  std::function<nlohmann::json(AnalysisSession&, const std::string& dir)> save_shard;
  std::function<void(AnalysisSession&, const nlohmann::json&, const std::string& dir)> absorb_shard;
  // Tables that are a function of the image-averaged arrays rather than a mean of per-image
  // tables (CKA: a ratio of mean HSICs). AnalysisSession::tables() appends them; an
  // analysis with no such array yet returns none.
  std::function<std::vector<analysis::Table>(const std::vector<analysis::Array>&)> derived_tables;
  // The class-specific step: needs the model and the image (null for the others).
  std::function<void(ExplainStep&)> explain;
  // It explains or scores a class: a model whose output is an embedding (DINO, CLIP) is
  // skipped with a note saying so (models::OutputKind).
  bool needs_classes = false;
  // It reads a model's text prompts (models/image_text.h: a whole CLIP given --text or
  // class names): any other model skips it with a note saying why (a model that reads no
  // text; one that reads text but was given no prompts: how to give them).
  bool needs_prompts = false;

  // Its settings (analysis_options.h): the CLI's options and help, the sidecar, the GUI's
  // controls and File > Copy settings as command iterate them. `reads_options` names
  // options another analysis declares that this one reads too (gradrollout: the rollout
  // switches and the explained class).
  std::vector<AnalysisOption> options;
  std::vector<std::string> reads_options;
  // What the run's sidecar says of how it computes, beyond the option values (rank: the
  // definitions of its columns); written under the analysis's name when it runs.
  std::function<nlohmann::json(const AnalysisSettings&)> describe;

  // The report's figures: the kinds (index sections) in order, and the jobs.
  std::vector<FigureKind> figure_kinds;
  std::function<void(const ReportInputs&, std::vector<FigureJob>&)> report_figures;
  // The series figure (from the "<table>_series" tables) of a series analysis.
  std::function<viz::CaptionedFigure(const SeriesResults&)> series_figure;
  std::optional<AnalysisTab> tab;
};

// Every registered analysis, in registry order (then any added by register_analysis).
const std::vector<AnalysisInfo>& analyses();
std::vector<std::string> analysis_names();
// nullptr when no analysis has this name.
const AnalysisInfo* find_analysis(const std::string& name);
// Adds an analysis at run time (a test's toy analysis, an embedding program's own);
// throws std::invalid_argument for an empty or taken name. Call before the analyses run.
void register_analysis(AnalysisInfo info);

// Parses "maps,rank" (or "all": every analysis but the opt-in ones, which are named);
// throws std::invalid_argument naming unknown ones.
std::set<std::string> parse_analyses(const std::string& list);

// The report's figures (defined in analysis_figures.cpp, so not in a GPU-check-only build,
// which has no figures). Every report figure kind, in the order the index shows them
// (registry order, each kind once: gradcam and gradrollout share "explanations").
std::vector<FigureKind> figure_kinds();
// Every report figure the results allow, ordered by kind as figure_kinds(); `sweeps` are
// resolution sweeps (report --img-sizes, one per model), drawn by the over_sizes analyses.
std::vector<FigureJob> report_figure_jobs(const std::vector<ModelResults>& models,
                                          const std::optional<SeriesResults>& series,
                                          const FigureOptions& options,
                                          const std::vector<SeriesResults>& sweeps = {});

}  // namespace attnlab::session
