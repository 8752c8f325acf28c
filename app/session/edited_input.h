// A model's input with what-if edits (core/image/image_edits.h) applied where they belong:
// after the preprocessing's resize and crop, before its normalisation, in the token units
// of the model's first layer (its grid's cell, in pixels, is the brush's unit). The CLI's
// `--edit`, the GUI's painting and a paste's source picture all go through here, so an
// edit made in the GUI replays exactly in a copied command.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/image/image_edits.h"
#include "core/image/preprocess.h"

namespace attnlab::models {
class Backbone;
}
namespace attnlab::analysis {
class OutputFolder;
}

namespace attnlab::session {

// The side, in pixels, of a token of `model`'s first layer on a height × width input (16
// for a ViT-B/16, 4 for Swin's and LITv2's first stage). Throws std::runtime_error for a
// model that does not say its token grid.
int edit_patch(const models::Backbone& model, int64_t height, int64_t width);

// The picture `image` becomes through `p`'s resize and crop, with `edits` applied (none:
// the plain picture); a paste's source file is read and brought through the same resize
// and crop. Throws std::invalid_argument naming what is wrong (an edit off the grid, a
// paste source that cannot be read).
io::RgbImage edited_picture(const io::RgbImage& image, const image::Preprocessing& p,
                            const models::Backbone& model, const std::vector<image::EditOp>& edits);

// edited_picture, normalised: the (1, 3, H, W) float32 input the model runs on.
at::Tensor edited_input(const io::RgbImage& image, const image::Preprocessing& p,
                        const models::Backbone& model, const std::vector<image::EditOp>& edits);

// The edits file written beside figures and statistics (edits.txt, <figure>.edits.txt): a
// comment saying what the edits are (of `image`, when one is named) and how to replay
// them, then the edits in --edit's text form on a line of their own.
std::string edits_file_text(const std::vector<image::EditOp>& edits, const std::string& image = "");
inline constexpr const char* kEditsFile = "edits.txt";
// edits.txt into an analysis output folder, listed in its sidecar, when there are edits:
// what a run with --edit (or the module's Results.save) writes beside its tables. Returns
// the file's path, "" when there are no edits.
std::string write_edits_file(analysis::OutputFolder& folder,
                             const std::vector<image::EditOp>& edits);

}  // namespace attnlab::session
