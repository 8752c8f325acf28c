// The images Model.analyze takes: a path, a folder (its image files, sorted by name, as
// the CLI reads --images), a numpy array H×W×3 uint8 (RGB), a tensor (a torch.Tensor or
// any DLPack producer, dlpack_input.h) that is either such a picture or a preprocessed
// N×3×H×W float batch, or a list of these. Each gets the tag the CLI would give it (the
// file stem made file-safe, "_2", "_3" on repeats; "array0", "array1", ... for arrays,
// "tensor0", ... for tensor images, one per image of a batch), so results name images as
// `attnlab analyze` does.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "core/image/image_edits.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "python/src/common.h"

namespace attnlab::models {
class Backbone;
}

namespace attnlab::python {

struct ImageItem {
  std::string path;  // "" for an array or a tensor
  std::string tag;
  std::optional<io::RgbImage> pixels;  // an array's pixels, copied while the GIL is held
  // One image (1, 3, H, W) float32 of a preprocessed batch, on the device it was given on
  // (a view, no copy, when it was float32): the model's input as it is, past the
  // preprocessing. Undefined for the other kinds.
  at::Tensor input;
};

// Throws std::invalid_argument naming what is wrong (a missing path, an empty folder, an
// array or tensor of another shape or dtype) and the argument, `images`. A preprocessed
// batch must have the size `p` makes (its crop); a `p` without a crop takes any size.
std::vector<ImageItem> image_items(const py::handle& images, const image::Preprocessing& p);
// The model's input for an item: a preprocessed tensor as it is, else its picture (its
// pixels or its file decoded, io::load_rgb_image's limits) through `p` with `edits`
// (session::edited_input).
at::Tensor item_input(const ImageItem& item, const image::Preprocessing& p,
                      const models::Backbone& model, const std::vector<image::EditOp>& edits);
// Refuses edits when an item is a preprocessed tensor: edits change the picture before its
// normalisation, which such a tensor is already past (std::invalid_argument, `edits: ...`).
void require_pictures_for_edits(const std::vector<ImageItem>& items,
                                const std::vector<image::EditOp>& edits);

}  // namespace attnlab::python
