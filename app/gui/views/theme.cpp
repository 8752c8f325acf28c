// Style colours and font choice; see theme.h.
#include "app/gui/views/theme.h"

#include <fstream>

namespace attnlab::gui {
namespace {

constexpr float kFontPixels = 15.0f;

// Common locations of a plain sans-serif font with wide coverage, Debian first.
constexpr const char* kFontCandidates[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
};

// Beyond Latin: Greek (alpha, beta in names), General Punctuation (dashes, ellipsis,
// bullets), arrows and math operators (x, <=, infinity). Zero-terminated pairs.
constexpr ImWchar kExtraRanges[] = {
    0x0370, 0x03FF,  // Greek
    0x2000, 0x206F,  // General Punctuation
    0x2190, 0x21FF,  // Arrows
    0x2200, 0x22FF,  // Mathematical Operators
    0,
};

bool readable(const char* path) {
  return std::ifstream(path).good();
}

void load_font(ThemeState& theme) {
  ImGuiIO& io = ImGui::GetIO();
  for (const char* path : kFontCandidates) {
    // AddFontFromFileTTF asserts on a missing file, so look before asking it.
    if (!readable(path)) continue;
    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(io.Fonts->GetGlyphRangesDefault());
    builder.AddRanges(kExtraRanges);
    builder.BuildRanges(&theme.glyph_ranges);
    if (io.Fonts->AddFontFromFileTTF(path, kFontPixels, nullptr, theme.glyph_ranges.Data)) {
      theme.font_path = path;
      return;
    }
  }
  io.Fonts->AddFontDefault();
}

}  // namespace

void apply_theme(ThemeState& theme) {
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.Colors[ImGuiCol_TitleBg] = style.Colors[ImGuiCol_TitleBgActive];
  style.WindowBorderSize = 1.0f;
  style.FrameRounding = 3.0f;
  load_font(theme);
}

}  // namespace attnlab::gui
