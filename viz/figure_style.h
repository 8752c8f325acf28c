// The proportions every figure shares, derived from its font size: the layout reserves
// room with them and the renderer draws with them, so the two cannot disagree.
// Internal to viz (the layout and the cairo renderer).
#pragma once

namespace attnlab::viz::style {

inline constexpr const char* kFontFamily = "DejaVu Sans";  // fonts-dejavu-core; embedded in PDF/SVG

struct Metrics {
  double tick_pt, label_pt, title_pt, header_pt, figure_title_pt;
  double tick_len, pad, line_h;  // tick mark length, general padding, one text line
  double colorbar_w;
  explicit Metrics(double font_pt)
      : tick_pt(font_pt),
        label_pt(font_pt),
        title_pt(font_pt * 1.1),
        header_pt(font_pt * 1.1),
        figure_title_pt(font_pt * 1.25),
        tick_len(3.0),
        pad(font_pt * 0.5),
        line_h(font_pt * 1.25),
        colorbar_w(font_pt * 0.9) {}
};

inline constexpr double kSpineWidth = 0.8;
inline constexpr double kTickWidth = 0.8;

}  // namespace attnlab::viz::style
