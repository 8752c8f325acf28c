// Entry point of the desktop GUI (`attnlab gui`): opens the window, runs the frame loop
// until the user quits (or max_frames for smoke tests), optionally saves a screenshot.
// With no files given it opens the bundled zoo and demo images, analyses running.
#pragma once

#include <string>
#include <vector>

namespace attnlab::gui {

struct GuiOptions {
  std::vector<std::string> images;  // images (or folders) to open at start
  std::vector<std::string> models;  // checkpoints or presets to open at start
  bool no_demo = false;             // start empty even without files
  int max_frames = 0;               // >0: quit after this many frames (smoke tests)
  std::string screenshot_path;      // non-empty: save the last frame as PNG before quitting
  std::string script_path;          // non-empty: run this GUI script (gui_script.h)
  std::string device = "auto";      // where models run at start (--device, ATTNLAB_DEVICE)
  std::string dtype = "fp32";       // their forward's precision (--dtype, ATTNLAB_DTYPE)
  int64_t merge = -1;               // token merging r of the models opened (--merge); -1: none
};

int run_gui(const GuiOptions& options);  // returns the process exit code

}  // namespace attnlab::gui
