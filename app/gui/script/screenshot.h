// Saves what the GL context just drew as a PNG: used by `attnlab gui --screenshot` so
// smoke tests and docs can see the real window. Main thread, GL context current, called
// after rendering a frame and before swapping buffers (it reads the back buffer).
#pragma once

#include <string>

namespace attnlab::gui {

// Reads the width x height framebuffer and writes it to path atomically (a temporary
// file renamed into place), so a reader never sees half a PNG. On failure returns false
// with the reason in *error.
// `crop` (top-down pixels, clamped to the framebuffer): only that region, e.g. the figure
// a view shows, to compare with the same figure exported at the screen's resolution.
struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
};
bool save_framebuffer_png(int width, int height, const std::string& path, std::string* error,
                          const PixelRect* crop = nullptr);

}  // namespace attnlab::gui
