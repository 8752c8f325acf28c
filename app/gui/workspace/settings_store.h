// What the GUI remembers between runs (window size, recent files, what was open, view
// options), kept in one JSON file in the user's config folder. Plain C++ with no GL or
// ImGui, so it is tested on its own. A settings file is a convenience, never a reason to
// fail: loading falls back to defaults with a warning, saving reports failure as text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlab::gui {

// The value of the file's "format" key; a file that names another format is not read.
inline constexpr const char* kSettingsFormat = "attnlab gui settings 1";
// The recent lists keep this many entries; loading trims every list to it.
inline constexpr size_t kMaxRecent = 10;

struct GuiSettings {
  int window_width = 1280, window_height = 800;  // loading clamps both to 320..16384
  std::vector<std::string> recent_images;        // most recent first, at most 10, unique
  std::vector<std::string> recent_models;        // same
  std::vector<std::string> last_images;          // what was open at exit, reopened at start
  std::vector<std::string> last_models;          // same
  std::string colormap = "viridis";              // a colormap name; the GUI checks it exists
  double alpha = 0.6;                            // overlay opacity, clamped to 0..1
  bool bilinear = true;                          // upsampling of maps: bilinear or nearest
  std::string normalisation = "minmax";          // how maps are scaled to the colormap
  std::string layout = "single";                 // "single" or "compare"
  bool shared_scale = false;                     // compare: one colour scale for all maps
  // The analyses' settings changed from their defaults (the rollout's switches, the Settings
  // section), a JSON object {"residual": 0.3, ...} as text; the GUI checks each entry
  // against what the analyses declare (app/session/analysis_options.h) and drops the rest.
  std::string analysis_options = "{}";
  int left_panel_width = 320;                    // clamped to 100..4096
};

// Where the settings live: $ATTNLAB_SETTINGS when set (tests and CI point it at a
// temporary file so they never touch the real home), else
// $XDG_CONFIG_HOME/attnlab/settings.json (an absolute $XDG_CONFIG_HOME only, as the XDG
// spec asks), else $HOME/.config/attnlab/settings.json. "" when none of them is set: the
// GUI then runs with defaults and saves nothing.
std::string settings_path();

// Reads the settings; never throws. A missing file (or path "") gives the defaults and no
// warning. A file that cannot be read, is not JSON, is not an object or names another
// format gives the defaults and a warning. Otherwise each known key is read on its own:
// a key of the wrong type keeps its default, an out-of-range value is clamped, and both
// are named in the warning; unknown keys are ignored. The warning (when `warning` is not
// null) names the file and every problem found, "" when there was none.
GuiSettings load_settings(const std::string& path, std::string* warning);

// Writes the settings as JSON, creating the folder if needed; the write is atomic (a
// temporary beside the file, then a rename), so a crash never leaves half a file. Returns
// false and sets `error` (when not null) to the reason instead of throwing.
bool save_settings(const std::string& path, const GuiSettings& settings, std::string* error);

// Puts `path` at the front of a recent list, removing any earlier copy (and any other
// duplicate, should a caller have added one) and keeping at most kMaxRecent entries. An
// empty path leaves the list unchanged.
void remember_recent(std::vector<std::string>& list, const std::string& path);

}  // namespace attnlab::gui
