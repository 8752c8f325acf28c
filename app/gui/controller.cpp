// Frame-start glue between the GUI's state and the workers; see controller.h.
#include "app/gui/controller.h"

#include <filesystem>
#include <utility>
#include <variant>

#include "app/gui/projector/patch_retrieval.h"
#include "app/gui/projector/projector.h"
#include "app/gui/projector/projector_groups.h"
#include "app/gui/views/cost_view.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/schedule_compute.h"
#include "app/gui/workspace/settings_store.h"
#include "app/gui/workspace/workspace.h"
#include "app/gui/workspace/workspace_io.h"

namespace attnlab::gui {
namespace {

void apply_image(Workspace& ws, StatusBarState& status, JobResult& r) {
  for (auto& slot : ws.images) {
    if (slot.job != r.id) continue;
    slot.job = 0;
    if (r.error.empty() &&
        slot.thumb.upload_rgb(r.image.rgb.data(), r.image.width, r.image.height, &r.error)) {
      slot.status = LoadStatus::Ready;
      return;
    }
    slot.status = LoadStatus::Failed;
    slot.error = r.error;
    status.notice = "Could not open image " + slot.path + ": " + r.error;
    status.notice_is_error = true;
    return;
  }
}

void apply_checkpoint(CheckpointPanelState& panel, JobResult& r) {
  panel.load_seconds = r.seconds;
  panel.pending_job = 0;
  if (r.error.empty()) {
    panel.status = LoadStatus::Ready;
    panel.error.clear();
    panel.lines = std::move(r.lines);
    panel.warnings = std::move(r.warnings);
  } else {
    panel.status = LoadStatus::Failed;
    panel.error = std::move(r.error);
    panel.lines.clear();
    panel.warnings.clear();
  }
}

// Routes each kind of the compute worker's answers to the function that applies it, with
// the concerns that kind of answer changes.
struct ApplyWorkerResult {
  GuiState& s;
  void operator()(const ModelLoaded& r) const { apply_result(s.workspace, s.series, r); }
  void operator()(const ModelLoadFailed& r) const {
    apply_result(s.workspace, s.device, s.status, r);
  }
  void operator()(const AnalysisDone& r) const { apply_result(s.workspace, r); }
  void operator()(const AnalysisFailed& r) const { apply_result(s.workspace, r); }
  void operator()(const MapsAnswered& r) const { apply_result(s.workspace, s.status, r); }
  void operator()(const RolloutAnswered& r) const { apply_result(s.workspace, s.status, r); }
  void operator()(const ExplanationAnswered& r) const { apply_result(s.workspace, s.status, r); }
  void operator()(const SeriesCheckpointDone& r) const { apply_result(s.series, r); }
  void operator()(const SeriesDone& r) const { apply_result(s.series, r); }
  void operator()(const SweepSizeDone& r) const { apply_result(s.sweep, r); }
  void operator()(const SweepSizeFailed& r) const { apply_result(s.sweep, r); }
  void operator()(const SweepDone& r) const { apply_result(s.sweep, r); }
  void operator()(const ComplexityCounted& r) const { apply_result(s.cost, r); }
  void operator()(const AttentionBenched& r) const { apply_result(s.cost, r); }
  void operator()(const CostFailed& r) const { apply_result(s.cost, s.status, r); }
  void operator()(const ProjectorLoaded& r) const { apply_result(s.projector, s.status, r); }
  void operator()(const ProjectorProjected& r) const { apply_result(s.projector, s.status, r); }
  void operator()(const ProjectorGroupMapsDone& r) const { apply_result(s.projector, s.status, r); }
  void operator()(const ProjectorRetrieved& r) const { apply_result(s.projector, s.status, r); }
  void operator()(const ProjectorCropCut& r) const { apply_result(s.projector, s.status, r); }
  void operator()(const JobNotice& r) const {
    s.status.notice = r.message;
    s.status.notice_is_error = true;
  }
};

}  // namespace

void take_native_dialog_answer(NativeDialog& native, StatusBarState& status,
                               FrameRequests& requests) {
  std::optional<NativeDialog::Result> r = native.take();
  if (!r) return;
  if (!r->error.empty()) {
    status.notice = r->error;
    status.notice_is_error = true;
  }
  for (const std::string& p : r->paths) {
    // What the user picked in "Open image" / "Open model" is opened as that; a folder
    // opens the images in it.
    if (std::filesystem::is_directory(p))
      requests.dropped_paths.push_back(p);
    else
      requests.open.push_back(OpenRequest{r->kind, p});
  }
}

void route_dropped_files(FrameRequests& requests, StatusBarState& status) {
  for (std::string& path : requests.dropped_paths) {
    if (std::filesystem::is_directory(path)) {  // a folder: every image in it, by name
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(path))
        if (e.is_regular_file() && classify_path(e.path().string()) == FileKind::Image)
          files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      for (auto& f : files) requests.open.push_back(OpenRequest{FileKind::Image, f});
      continue;
    }
    const FileKind kind = classify_path(path);
    if (kind == FileKind::Unknown) {
      status.notice = "Ignored " + path +
                      ": not an image (.png .jpg .bmp .tif .webp ...), a checkpoint "
                      "(.pth .pt .safetensors .bin), a model config (.json) or a "
                      "workspace (.attnlab)";
      status.notice_is_error = true;
      continue;
    }
    requests.open.push_back(OpenRequest{kind, std::move(path)});
  }
  requests.dropped_paths.clear();
}

void submit_open_requests(GuiState& state, LoadWorker& loader, ComputeWorker& compute) {
  bool first_image = true;
  for (OpenRequest& req : state.requests.open) {
    if (req.kind == FileKind::Image) {
      remember_recent(state.recent.images, req.path);
      bool already_open = false;
      const int index = add_image(state.workspace, loader, req.path, &already_open);
      if (already_open) {
        state.status.notice =
            std::filesystem::path(req.path).filename().string() + " is already open";
        state.status.notice_is_error = false;
      }
      // Show the first image of what was just opened (a folder opens at its first file).
      if (first_image) state.view.image = index;
      first_image = false;
    } else if (req.kind == FileKind::Workspace) {  // its models and images, edits and all
      std::string message;
      if (open_workspace(state.workspace, state.view, state.device, loader, compute, req.path,
                         &message)) {
        state.status.notice = message;
        state.status.notice_is_error = false;
        first_image = false;  // it says which image to show
      } else {
        state.status.notice = message;
        state.status.notice_is_error = true;
      }
    } else if (req.kind == FileKind::Model) {
      remember_recent(state.recent.models, req.path);
      ModelOptions merged;
      merged.merge = req.merge;
      add_model(state.workspace, state.device, compute, req.path,
                req.merge >= 0 ? &merged : nullptr);
      if (lower_extension(req.path) == ".json") continue;  // a config: no tensors to summarise
      CheckpointPanelState& panel = state.checkpoint;
      panel.status = LoadStatus::Loading;
      panel.path = req.path;
      panel.error.clear();
      panel.pending_job = loader.submit(JobKind::Checkpoint, panel.path);
    }
  }
  state.requests.open.clear();
}

void apply_load_results(GuiState& state, LoadWorker& loader) {
  for (JobResult& r : loader.take_results()) {
    switch (r.kind) {
      case JobKind::Image:
        if (apply_projector_thumbnail(state.projector, r)) break;  // the Projector's tooltip
        apply_image(state.workspace, state.status, r);
        break;
      case JobKind::Checkpoint:
        if (r.id == state.checkpoint.pending_job) apply_checkpoint(state.checkpoint, r);
        break;
      case JobKind::Runtime:
        if (r.id == state.status.runtime_job) {
          state.status.runtime_job = 0;
          if (r.error.empty() && !r.lines.empty()) state.status.runtime = r.lines.front();
        }
        break;
    }
  }
}

void apply_worker_results(GuiState& state, ComputeWorker& compute) {
  for (const WorkerResult& result : compute.take_posted())
    std::visit(ApplyWorkerResult{state}, result);
}

}  // namespace attnlab::gui
