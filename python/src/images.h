// The images Model.analyze takes: a path, a folder (its image files, sorted by name, as
// the CLI reads --images), a numpy array H×W×3 uint8 (RGB), or a list of these. Each gets
// the tag the CLI would give it (the file stem made file-safe, "_2", "_3" on repeats;
// "array0", "array1", ... for arrays), so results name images as `attnlab analyze` does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/io/image_io.h"
#include "python/src/common.h"

namespace attnlab::python {

struct ImageItem {
  std::string path;  // "" for an array
  std::string tag;
  std::optional<io::RgbImage> pixels;  // an array's pixels, copied while the GIL is held
};

// Throws std::invalid_argument naming what is wrong (a missing path, an empty folder, an
// array of another shape or dtype) and the argument, `images`.
std::vector<ImageItem> image_items(const py::handle& images);
// The item's picture: its pixels, or its file decoded (io::load_rgb_image's limits).
io::RgbImage item_picture(const ImageItem& item);

}  // namespace attnlab::python
