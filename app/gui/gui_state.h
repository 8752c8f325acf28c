// Everything the GUI shows or edits, as plain structs owned by run_gui and passed down
// explicitly: no function-local statics, so any panel's state can be inspected, reset
// or (later) saved, and a frame is a pure function of this state plus input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/file_kinds.h"
#include "app/gui/gl_texture.h"

namespace attnlab::gui {

enum class LoadStatus { Empty, Loading, Ready, Failed };

struct ImagePanelState {
  LoadStatus status = LoadStatus::Empty;
  std::string path;          // the file shown, or being loaded
  std::string error;         // full message, when Failed
  uint64_t pending_job = 0;  // the load whose result we wait for; older results are stale
  double load_seconds = 0.0;
  GlTexture texture;  // the image itself, when Ready
};

struct CheckpointPanelState {
  LoadStatus status = LoadStatus::Empty;
  std::string path;
  std::string error;
  uint64_t pending_job = 0;
  double load_seconds = 0.0;
  std::vector<std::string> lines;     // summarize_checkpoint(...).lines, when Ready
  std::vector<std::string> warnings;  // summarize_checkpoint(...).warnings, when Ready
};

// The File > Open... popup. ImGui wants OpenPopup() called at the ID-stack level where
// the popup is drawn, not inside the menu, so the menu only sets open_requested.
struct OpenDialogState {
  bool open_requested = false;
  FileKind kind = FileKind::Image;  // what the typed path will be opened as
  std::string path_input;
};

struct StatusBarState {
  std::string runtime;  // torch device / threads line from a worker job ("" = not known)
  uint64_t runtime_job = 0;
  std::string notice;  // the last thing worth telling the user (e.g. a file we ignored)
  bool notice_is_error = false;
};

// A file to open, from the command line, the Open popup or a drop.
struct OpenRequest {
  FileKind kind = FileKind::Image;
  std::string path;
};

struct GuiState {
  ImagePanelState image;
  CheckpointPanelState checkpoint;
  OpenDialogState open_dialog;
  StatusBarState status;
  std::vector<OpenRequest> open_requests;  // turned into worker jobs at the next frame start
  std::vector<std::string> dropped_paths;  // filled by the GLFW drop callback
  bool quit_requested = false;             // File > Quit
};

}  // namespace attnlab::gui
