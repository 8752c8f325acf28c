// Look of the GUI: ImGui's dark style with the tiled panels' title bars always in the
// "active" colour (fixed tiles have no focus order worth showing), and a system TrueType
// font when one is installed. ImGui's built-in font covers only ASCII and Latin-1, so
// checkpoint summaries and paper names ("—", "α", "→") would render as '?'.
#pragma once

#include <imgui.h>

#include <string>

namespace attnlab::gui {

struct ThemeState {
  ImVector<ImWchar> glyph_ranges;  // must outlive the font atlas build (first frame)
  std::string font_path;           // the system font in use ("" = ImGui's built-in one)
};

// Text colour of errors: a failed load, a refused option, a failed export.
inline const ImVec4 kErrorColor(1.0f, 0.42f, 0.42f, 1.0f);

// Call once after ImGui::CreateContext() and before the first frame.
void apply_theme(ThemeState& theme);

}  // namespace attnlab::gui
