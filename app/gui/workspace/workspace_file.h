// A workspace saved to a file (File > Save workspace, `attnlab gui FILE.attnlab`): the
// models with what they were loaded with, the images with their what-if edits, and which
// of each was shown. Plain C++ and JSON with no GL, ImGui or LibTorch, tested on its own.
// Paths are written absolute; a relative one in a hand-written file is taken from the
// file's folder. Reading never executes anything, and a file that is not a workspace is
// refused with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/image/image_edits.h"

namespace attnlab::gui {

// The value of the file's "format" key; a file that names another format is not read.
inline constexpr const char* kWorkspaceFormat = "attnlab workspace 1";

struct WorkspaceModel {
  std::string arg;                   // the checkpoint, model folder, config or preset
  std::string preset;                // the architecture picked for it ("": its own)
  std::vector<int64_t> img_size;     // {H, W}; empty: its own
  std::string class_names_path;      // "": its own
  int64_t merge = -1;                // token merging's r (--merge); -1: none
  std::vector<std::string> prompts;  // a CLIP's text prompts (--text)
};

struct WorkspaceImage {
  std::string path;
  std::vector<image::EditOp> edits;  // applied in order; Undo steps back one at a time
};

struct WorkspaceFile {
  std::vector<WorkspaceModel> models;
  std::vector<WorkspaceImage> images;
  int model = 0, image = 0;  // the ones shown
};

// The file's text (JSON). Paths (images, models, paste sources) are made absolute.
std::string workspace_text(const WorkspaceFile& ws);
// Reads `text` of the file at `path` (relative paths are resolved from its folder).
// Throws std::runtime_error naming the file and what is wrong with it.
WorkspaceFile parse_workspace(const std::string& text, const std::string& path);
WorkspaceFile read_workspace(const std::string& path);
// Atomic (a temporary beside the file, then a rename). Throws std::runtime_error.
void write_workspace(const std::string& path, const WorkspaceFile& ws);

}  // namespace attnlab::gui
