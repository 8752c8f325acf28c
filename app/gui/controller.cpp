// Frame-start glue between GuiState and the workers; see controller.h.
#include "app/gui/controller.h"

#include <filesystem>
#include <utility>

#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/settings_store.h"
#include "app/gui/workspace/workspace.h"
#include "app/gui/workspace/workspace_io.h"

namespace attnlab::gui {
namespace {

void apply_image(GuiState& state, JobResult& r) {
  for (auto& slot : state.images) {
    if (slot.job != r.id) continue;
    slot.job = 0;
    if (r.error.empty() &&
        slot.thumb.upload_rgb(r.image.rgb.data(), r.image.width, r.image.height, &r.error)) {
      slot.status = LoadStatus::Ready;
      return;
    }
    slot.status = LoadStatus::Failed;
    slot.error = r.error;
    state.status.notice = "Could not open image " + slot.path + ": " + r.error;
    state.status.notice_is_error = true;
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

}  // namespace

void take_native_dialog_answer(GuiState& state) {
  std::optional<NativeDialog::Result> r = state.dialogs.native.take();
  if (!r) return;
  if (!r->error.empty()) {
    state.status.notice = r->error;
    state.status.notice_is_error = true;
  }
  for (const std::string& p : r->paths) {
    // What the user picked in "Open image" / "Open model" is opened as that; a folder
    // opens the images in it.
    if (std::filesystem::is_directory(p))
      state.requests.dropped_paths.push_back(p);
    else
      state.requests.open.push_back(OpenRequest{r->kind, p});
  }
}

void route_dropped_files(GuiState& state) {
  for (std::string& path : state.requests.dropped_paths) {
    if (std::filesystem::is_directory(path)) {  // a folder: every image in it, by name
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(path))
        if (e.is_regular_file() && classify_path(e.path().string()) == FileKind::Image)
          files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      for (auto& f : files) state.requests.open.push_back(OpenRequest{FileKind::Image, f});
      continue;
    }
    const FileKind kind = classify_path(path);
    if (kind == FileKind::Unknown) {
      state.status.notice = "Ignored " + path +
                            ": not an image (.png .jpg .bmp .tif .webp ...), a checkpoint "
                            "(.pth .pt .safetensors .bin), a model config (.json) or a "
                            "workspace (.attnlab)";
      state.status.notice_is_error = true;
      continue;
    }
    state.requests.open.push_back(OpenRequest{kind, std::move(path)});
  }
  state.requests.dropped_paths.clear();
}

void submit_open_requests(GuiState& state, LoadWorker& loader, ComputeWorker& compute) {
  bool first_image = true;
  for (OpenRequest& req : state.requests.open) {
    if (req.kind == FileKind::Image) {
      remember_recent(state.recent.images, req.path);
      const int index = add_image(state, loader, req.path);
      // Show the first image of what was just opened (a folder opens at its first file).
      if (first_image) state.view.image = index;
      first_image = false;
    } else if (req.kind == FileKind::Workspace) {  // its models and images, edits and all
      std::string message;
      if (open_workspace(state, loader, compute, req.path, &message)) {
        state.status.notice = message;
        state.status.notice_is_error = false;
        first_image = false;  // it says which image to show
      } else {
        state.status.notice = message;
        state.status.notice_is_error = true;
      }
    } else if (req.kind == FileKind::Model) {
      remember_recent(state.recent.models, req.path);
      add_model(state, compute, req.path);
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

void apply_results(GuiState& state, LoadWorker& loader) {
  for (JobResult& r : loader.take_results()) {
    switch (r.kind) {
      case JobKind::Image:
        apply_image(state, r);
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
