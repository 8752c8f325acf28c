// Frame-start glue between GuiState and the LoadWorker; see controller.h.
#include "app/gui/controller.h"

#include <utility>

namespace attnlab::gui {
namespace {

void apply_image(ImagePanelState& panel, JobResult& r) {
  panel.load_seconds = r.seconds;
  panel.pending_job = 0;
  if (r.error.empty() &&
      panel.texture.upload_rgb(r.image.rgb.data(), r.image.width, r.image.height, &r.error)) {
    panel.status = LoadStatus::Ready;
    panel.error.clear();
    return;
  }
  panel.status = LoadStatus::Failed;
  panel.error = std::move(r.error);
  panel.texture.reset();
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

}  // namespace

void route_dropped_files(GuiState& state) {
  for (std::string& path : state.dropped_paths) {
    const FileKind kind = classify_path(path);
    if (kind == FileKind::Unknown) {
      state.status.notice = "Ignored " + path +
                            ": not an image (.png .jpg .bmp .tif .webp ...) or a checkpoint "
                            "(.pth .pt .safetensors .bin)";
      state.status.notice_is_error = true;
      continue;
    }
    state.open_requests.push_back(OpenRequest{kind, std::move(path)});
  }
  state.dropped_paths.clear();
}

void submit_open_requests(GuiState& state, LoadWorker& worker) {
  for (OpenRequest& req : state.open_requests) {
    if (req.kind == FileKind::Image) {
      ImagePanelState& panel = state.image;
      panel.status = LoadStatus::Loading;
      panel.path = std::move(req.path);
      panel.error.clear();
      // A newer request supersedes an older one still running: its result will not
      // match pending_job and is dropped in apply_results.
      panel.pending_job = worker.submit(JobKind::Image, panel.path);
    } else if (req.kind == FileKind::Checkpoint) {
      CheckpointPanelState& panel = state.checkpoint;
      panel.status = LoadStatus::Loading;
      panel.path = std::move(req.path);
      panel.error.clear();
      panel.pending_job = worker.submit(JobKind::Checkpoint, panel.path);
    }
  }
  state.open_requests.clear();
}

void apply_results(GuiState& state, LoadWorker& worker) {
  for (JobResult& r : worker.take_results()) {
    switch (r.kind) {
      case JobKind::Image:
        if (r.id == state.image.pending_job) apply_image(state.image, r);
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

}  // namespace attnlab::gui
