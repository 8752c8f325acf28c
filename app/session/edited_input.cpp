// What-if edits on a model's input; see edited_input.h.
#include "app/session/edited_input.h"

#include <stdexcept>

#include "core/analysis/output_folder.h"
#include "models/backbone.h"

namespace attnlab::session {

int edit_patch(const models::Backbone& model, int64_t height, int64_t width) {
  const auto stages = model.stage_shapes(height, width);
  if (stages.empty() || stages.front().layout.height <= 0)
    throw std::runtime_error("edits: " + model.arch() +
                             " does not say its token grid, so an edit's tokens have no size");
  const int64_t rows = stages.front().layout.height;
  if (height % rows != 0)
    throw std::runtime_error("edits: the " + std::to_string(height) +
                             "-pixel-high input is not a whole number of its " +
                             std::to_string(rows) + " token rows");
  return int(height / rows);
}

io::RgbImage edited_picture(const io::RgbImage& image, const image::Preprocessing& p,
                            const models::Backbone& model,
                            const std::vector<image::EditOp>& edits) {
  io::RgbImage picture = image::preprocess_picture(image, p);
  if (edits.empty()) return picture;
  const int patch = edit_patch(model, picture.height, picture.width);
  const auto load = [&p](const std::string& path) {
#ifdef ATTNLAB_SESSION_COMPUTE_ONLY
    // A GPU-check-only build has no OpenCV, so no image decoder (app/session/CMakeLists.txt).
    (void)p;
    throw std::invalid_argument("paste: the source picture " + path +
                                ": this build reads no image files (GPU-check-only)");
    return io::RgbImage{};
#else
    try {
      return image::preprocess_picture(io::load_rgb_image(path), p);
    } catch (const std::exception& e) {
      throw std::invalid_argument("paste: the source picture " + path + ": " + e.what());
    }
#endif
  };
  return image::apply_edits(picture, patch, edits, load);
}

at::Tensor edited_input(const io::RgbImage& image, const image::Preprocessing& p,
                        const models::Backbone& model, const std::vector<image::EditOp>& edits) {
  return image::normalise_picture(edited_picture(image, p, model, edits), p);
}

std::string edits_file_text(const std::vector<image::EditOp>& edits, const std::string& image) {
  return "# attnlab what-if edits (--edit)" + (image.empty() ? std::string() : " of " + image) +
         ", applied after the resize and crop, before normalisation, in the token units of "
         "each model's first layer; replay: --edit '<the next line>'\n" +
         image::edits_text(edits) + "\n";
}

std::string write_edits_file(analysis::OutputFolder& folder,
                             const std::vector<image::EditOp>& edits) {
  if (edits.empty()) return "";
  return folder.write_text(kEditsFile, edits_file_text(edits),
                           "the what-if edits applied to every image (--edit's text form)");
}

}  // namespace attnlab::session
