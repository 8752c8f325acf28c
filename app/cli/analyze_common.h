// What `analyze` and `analyze-series` share: their options, the per-image loop with
// progress on stderr, and the run description that opens every sidecar.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/image_list.h"
#include "app/cli/model_options.h"
#include "app/session/analysis_session.h"
#include "core/analysis/output_folder.h"
#include "core/analysis/work_shard.h"

namespace attnlab::cli {

struct AnalyzeRequest {
  ModelChoice model;
  session::ModelRequest model_request;   // what `model` was resolved from (not a series)
  std::vector<std::string> checkpoints;  // analyze-series only
  std::vector<ImageInput> images;
  std::string out;
  session::AnalysisSettings settings;
};

// "0,2-4,7" -> {0, 2, 3, 4, 7} (--layers of analyze and probe); UsageError otherwise.
std::vector<int64_t> parse_layers(const std::string& text);

// Parses the analysis options (--analyses, --query, --layers, rollout, rank and mask
// switches); `default_analyses` when --analyses is absent.
session::AnalysisSettings take_analysis_settings(Args& args, const std::string& default_analyses);

// Parses the model, image, output and analysis options (see `attnlab --help`);
// `default_analyses` when --analyses is absent ("": analyze's all, analyze-series' own).
AnalyzeRequest take_analyze_request(Args& args, bool series,
                                    const std::string& default_analyses = "");

// "name: [12/100] image.png  3.4 img/s  ETA 26 s" on stderr; rewritten in place on a
// terminal, one line per second otherwise.
class Progress {
 public:
  // `unit` names what is counted in the rate ("img" → "2.5 img/s").
  Progress(std::string label, int64_t total, std::string unit = "img");
  void update(int64_t done, const std::string& item);
  void finish();
  // Ends the in-place line before another message goes to stderr.
  void break_line();

 private:
  std::string label_;
  int64_t total_;
  std::string unit_;
  double start_, last_print_ = -1.0;
  bool tty_;
};

// Progress of work in stages that each count their own steps (a projection: its kNN graph,
// then its optimisation): a Progress line per stage, a new one whenever the total changes.
// update() has session::ProjectionProgress's shape (always true: no cancel from the CLI,
// where Ctrl-C ends the process); finish() ends the last line.
class StagedProgress {
 public:
  explicit StagedProgress(std::string label) : label_(std::move(label)) {}
  bool update(int64_t done, int64_t total);
  void finish();

 private:
  std::string label_;
  std::optional<Progress> progress_;
  int64_t total_ = -1;
};

// Receives each analysed image's preprocessed input (1, 3, H, W) on the CPU.
using InputSink = std::function<void(const ImageInput&, const at::Tensor&)>;

// Where a run's time went (seconds, summed over the images): the sidecar's
// "stage_seconds" and the line analyze prints, so that a slow run says why.
struct StageSeconds {
  double model = 0;     // building the model and loading its weights
  double images = 0;    // decoding and preprocessing
  double forward = 0;   // the forward passes, with the traces the analyses need
  double analyses = 0;  // the analyses, with the arrays they write as they go
  int64_t count = 0;    // images analysed
  nlohmann::json to_json() const;
  std::string summary() const;  // "model 0.05 s, forward 1.62 s (0.051 s/image), ..."
};

// Runs each image through the model and the session; a failing image (unreadable, wrong
// size for the model, ...) is reported on stderr and skipped. Returns the failed paths.
// `stages`, when given, receives the time of each stage.
std::vector<std::string> analyse_images(session::AnalysisSession& session, models::Backbone& model,
                                        const runtime::ComputeTarget& target,
                                        const image::Preprocessing& preprocessing,
                                        const std::vector<ImageInput>& images, Progress& progress,
                                        const InputSink& on_input = nullptr,
                                        StageSeconds* stages = nullptr);

// The statistics of every checkpoint of a training series, in order: each table of the
// session becomes "<name>_series" with checkpoint_index, checkpoint and step columns first.
struct SeriesResult {
  std::vector<analysis::Table> tables;
  nlohmann::json checkpoints = nlohmann::json::array();
  std::vector<std::string> warnings;
  bool any_failed = false;
};
// Throws std::runtime_error when a checkpoint cannot analyse any image. `part`, when it is
// not the whole list, is a shard's: checkpoints [begin, end) keep their places in the
// list, and CKA to the final checkpoint loads the final one beside them (each HSIC entry
// is a pair's own, so the shard's are the single run's).
SeriesResult analyse_series(const ModelChoice& model, const std::vector<std::string>& checkpoints,
                            const std::vector<ImageInput>& images,
                            const session::AnalysisSettings& settings,
                            const runtime::ComputeTarget& target,
                            analysis::ShardRange part = {0, -1});

// analyze's result files beside the per-image arrays: the session's mean/std tables and
// image-averaged arrays, edits.txt, and the sidecar (`sidecar` with the session's layers,
// warnings and skipped analyses). Returns the sidecar's path. analyze and merge write
// through it, so a merged run has the single run's files.
std::string write_analyze_results(analysis::OutputFolder& folder,
                                  const session::AnalysisSession& session,
                                  const session::AnalysisSettings& settings,
                                  nlohmann::json sidecar);

// A sharded run cannot split an analysis fitted on every image together (feature_pca):
// named in --analyses (`named`) it is a UsageError, else it is left out with a note.
void restrict_to_shardable(session::AnalysisSettings& settings, bool named);

// attnlab version, LibTorch version, target, threads, dtype, and the analysis settings.
nlohmann::json run_description(const GlobalOptions& g, const runtime::ComputeTarget& target,
                               const session::AnalysisSettings& settings);

}  // namespace attnlab::cli
