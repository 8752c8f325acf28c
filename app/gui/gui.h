// Entry point of the desktop GUI (`attnlab gui`): opens the window, runs the frame loop
// until the user quits (or max_frames for smoke tests), optionally saves a screenshot.
#pragma once

#include <string>

namespace attnlab::gui {

struct GuiOptions {
  std::string image_path;       // image to show at start ("" = none)
  std::string checkpoint_path;  // checkpoint to summarise at start ("" = none)
  int max_frames = 0;           // >0: quit after this many frames (smoke tests)
  std::string screenshot_path;  // non-empty: save the last frame as PNG before quitting
};

int run_gui(const GuiOptions& options);  // returns the process exit code

}  // namespace attnlab::gui
