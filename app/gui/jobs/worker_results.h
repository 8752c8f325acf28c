// What the compute worker's jobs hand back to the main thread: one plain value per kind of
// answer. A job posts one (JobContext::post); the frame loop takes them at the start of a
// frame and applies each with the one function written for its kind (controller.h:
// apply_worker_result), which changes only the state that kind of answer is about. A job
// cannot reach the GUI's state itself: it names what it answered (a slot id, a run, the
// analysis a query was asked of) and the apply function decides whether that still
// exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "app/gui/jobs/analysis_jobs.h"
#include "app/gui/jobs/explain_jobs.h"
#include "app/gui/projector/projector_results.h"
#include "app/gui/projector/retrieval_results.h"
#include "app/session/cost_figures.h"
#include "core/analysis/table.h"

namespace attnlab::gui {

// A model's load (or load with new options) ended: the model, or why not.
struct ModelLoaded {
  uint64_t model_id = 0;  // ModelSlot::id
  std::shared_ptr<LoadedModel> model;
  ModelInfo info;
};
struct ModelLoadFailed {
  uint64_t model_id = 0;
  bool replacing = false;  // new options for an open model (which stays as it was)
  std::string error;
};

// Which analysis of (model, image) an answer is for: the slots are found by id, and the
// answer is dropped when the model was loaded again or the image's edits changed.
struct AnalysisTarget {
  uint64_t model_id = 0, image_id = 0;
  std::shared_ptr<LoadedModel> model;  // the model it ran on
  std::string edits_key;               // image::edits_text() of the picture's edits
};
struct AnalysisDone {
  AnalysisTarget target;
  std::shared_ptr<const ImageAnalysis> analysis;
};
struct AnalysisFailed {
  AnalysisTarget target;
  std::string error;
};

// An answer computed from one analysis of (model, image): the query's maps, its rollout or
// a class explanation. It goes to the slot that still holds that analysis (the slot
// itself, or its `original` while the image has edits), under `key`.
struct QueryTarget {
  int model = 0, image = 0;
  bool original = false;
  std::shared_ptr<const ImageAnalysis> analysis;
};
template <typename Value>
struct QueryAnswer {
  QueryTarget target;
  std::string key;
  std::shared_ptr<const Value> value;  // null when it failed
  std::string error;
};
using MapsAnswered = QueryAnswer<QueryMaps>;
using RolloutAnswered = QueryAnswer<QueryRollout>;
using ExplanationAnswered = QueryAnswer<ClassExplanation>;

// The training series (series_view.h), run `run`: checkpoint k analysed, then the end
// with the tables across checkpoints.
struct SeriesCheckpointDone {
  uint64_t run = 0;
  size_t k = 0;
  std::shared_ptr<const ImageAnalysis> analysis;
  int64_t step = 0;
};
struct SeriesDone {
  uint64_t run = 0;
  std::vector<std::vector<analysis::Table>> across;
};

// The size sweep (size_sweep_view.h), run `run`: size k analysed, a size failed, the end.
struct SweepSizeDone {
  uint64_t run = 0;
  size_t k = 0;
  std::shared_ptr<const ImageAnalysis> analysis;
};
struct SweepSizeFailed {
  uint64_t run = 0;
  std::string error;
};
struct SweepDone {
  uint64_t run = 0;
};

// The Cost tab (cost_view.h): the MACs counted for the models named by `key`, the
// attention bench measured with `settings`, or why either failed.
struct ComplexityCounted {
  std::shared_ptr<const session::ComplexitySweep> sweep;
  std::string key;
};
struct AttentionBenched {
  std::shared_ptr<const analysis::Table> table;
  session::AttentionBenchSettings settings;
};
struct CostFailed {
  std::string error;
};

// Something worth telling the user that belongs to no slot (a checkpoint of a series
// that failed, a job that threw): the status bar shows it as an error.
struct JobNotice {
  std::string message;
};

using WorkerResult =
    std::variant<ModelLoaded, ModelLoadFailed, AnalysisDone, AnalysisFailed, MapsAnswered,
                 RolloutAnswered, ExplanationAnswered, SeriesCheckpointDone, SeriesDone,
                 SweepSizeDone, SweepSizeFailed, SweepDone, ComplexityCounted, AttentionBenched,
                 CostFailed, JobNotice, ProjectorLoaded, ProjectorProjected, ProjectorGroupMapsDone,
                 ProjectorRetrieved, ProjectorCropCut>;

}  // namespace attnlab::gui
