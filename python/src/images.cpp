// Image arguments of the binding; see images.h.
#include "python/src/images.h"

#include <ATen/ATen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "app/session/edited_input.h"
#include "app/session/image_list.h"
#include "python/src/dlpack_input.h"

namespace attnlab::python {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (const int64_t d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "(" + s + (shape.size() == 1 ? ",)" : ")");
}

io::RgbImage array_pixels(const py::array& a, size_t index) {
  const std::string where = "images[" + std::to_string(index) + "]";
  if (!py::dtype::of<uint8_t>().is(a.dtype()) || a.ndim() != 3 || a.shape(2) != 3)
    throw std::invalid_argument(where + ": an array image is H×W×3 uint8 (RGB), not " +
                                std::string(py::str(a.dtype())) + " of shape " +
                                shape_text(std::vector<int64_t>(a.shape(), a.shape() + a.ndim())));
  if (a.shape(0) < 1 || a.shape(1) < 1) throw std::invalid_argument(where + ": an empty image");
  const auto c = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>::ensure(a);
  io::RgbImage im;
  im.height = int(a.shape(0));
  im.width = int(a.shape(1));
  im.rgb.assign(c.data(), c.data() + c.size());
  return im;
}

// A tensor argument: an H×W×3 uint8 picture (copied to the CPU, as an array's pixels), or
// a preprocessed N×3×H×W float batch, one item per image, kept on its device.
void tensor_items(const py::object& given, size_t index, const image::Preprocessing& p,
                  int& tensors, std::vector<ImageItem>& out) {
  const std::string where = "images[" + std::to_string(index) + "]";
  const at::Tensor t = take_dlpack(given, where);
  const std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  if (t.scalar_type() == at::kByte && t.dim() == 3 && t.size(2) == 3) {
    if (t.size(0) < 1 || t.size(1) < 1) throw std::invalid_argument(where + ": an empty image");
    const at::Tensor c = t.to(at::kCPU).contiguous();
    io::RgbImage im;
    im.height = int(t.size(0));
    im.width = int(t.size(1));
    im.rgb.assign(c.data_ptr<uint8_t>(), c.data_ptr<uint8_t>() + c.numel());
    out.push_back({"", "tensor" + std::to_string(tensors++), std::move(im), {}});
    return;
  }
  if (at::isFloatingType(t.scalar_type()) && t.dim() == 4 && t.size(1) == 3) {
    if (t.size(0) < 1) throw std::invalid_argument(where + ": an empty batch (N = 0)");
    // The crop fixes the model's input size; without one the resize decides it, and the
    // model's forward says what it refuses.
    if (p.crop > 0) {
      const int64_t h = p.crop, w = p.crop_width > 0 ? p.crop_width : p.crop;
      if (t.size(2) != h || t.size(3) != w)
        throw std::invalid_argument(
            where + ": a preprocessed batch for this model is N×3×" + std::to_string(h) + "×" +
            std::to_string(w) + " (its preprocessing: " + p.describe() + "), not " +
            shape_text(shape) + "; give the pictures as H×W×3 uint8 to have them preprocessed");
    }
    const at::Tensor x = t.to(at::kFloat).contiguous();  // as edited_input makes it
    for (int64_t b = 0; b < x.size(0); ++b)
      out.push_back({"", "tensor" + std::to_string(tensors++), std::nullopt, x.narrow(0, b, 1)});
    return;
  }
  const std::string dtype = py::hasattr(given, "dtype") ? std::string(py::str(given.attr("dtype")))
                                                        : std::string(c10::toString(t.scalar_type()));
  throw std::invalid_argument(where +
                              ": a tensor image is H×W×3 uint8 (RGB) or a preprocessed N×3×H×W "
                              "float batch, not " +
                              dtype + " of shape " + shape_text(shape));
}

io::RgbImage item_picture(const ImageItem& item) {
  return item.pixels ? *item.pixels : io::load_rgb_image(item.path);
}

}  // namespace

std::vector<ImageItem> image_items(const py::handle& images, const image::Preprocessing& p) {
  const char* kinds = "a path, a folder, an H×W×3 uint8 array or tensor, an N×3×H×W float tensor";
  std::vector<py::object> given;
  // A tensor is also a sequence (it has __getitem__): it is one argument, not a list.
  const bool one = py::isinstance<py::str>(images) || py::isinstance<py::array>(images) ||
                   py::hasattr(images, "__fspath__") || offers_dlpack(images);
  if (one) {
    given.push_back(py::reinterpret_borrow<py::object>(images));
  } else if (py::isinstance<py::sequence>(images)) {
    for (const auto& item : images.cast<py::sequence>())
      given.push_back(py::reinterpret_borrow<py::object>(item));
  } else {
    throw std::invalid_argument(std::string("images: ") + kinds + ", or a list of them");
  }
  if (given.empty()) throw std::invalid_argument("images: no image given");
  std::vector<ImageItem> out;
  int arrays = 0, tensors = 0;
  for (size_t k = 0; k < given.size(); ++k) {
    const py::object& g = given[k];
    if (py::isinstance<py::array>(g)) {
      ImageItem item;
      item.tag = "array" + std::to_string(arrays++);
      item.pixels = array_pixels(g.cast<py::array>(), k);
      out.push_back(std::move(item));
      continue;
    }
    if (offers_dlpack(g)) {
      tensor_items(g, k, p, tensors, out);
      continue;
    }
    if (!py::isinstance<py::str>(g) && !py::hasattr(g, "__fspath__"))
      throw std::invalid_argument("images[" + std::to_string(k) + "]: " + kinds);
    const std::string path = py::str(py::module_::import("os").attr("fspath")(g));
    try {
      for (auto& f : session::image_files(path)) out.push_back({f, "", std::nullopt, {}});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("images: ") + e.what());
    }
  }
  std::vector<std::string> paths;  // the CLI's tags, given to the files alone
  for (const ImageItem& item : out)
    if (!item.path.empty()) paths.push_back(item.path);
  const std::vector<std::string> tags = session::image_tags(paths);
  size_t next = 0;
  for (ImageItem& item : out)
    if (!item.path.empty()) item.tag = tags[next++];
  return out;
}

at::Tensor item_input(const ImageItem& item, const image::Preprocessing& p,
                      const models::Backbone& model, const std::vector<image::EditOp>& edits) {
  if (item.input.defined()) {
    require_pictures_for_edits({item}, edits);
    return item.input;
  }
  return session::edited_input(item_picture(item), p, model, edits);
}

void require_pictures_for_edits(const std::vector<ImageItem>& items,
                                const std::vector<image::EditOp>& edits) {
  if (edits.empty()) return;
  for (const ImageItem& item : items)
    if (item.input.defined())
      throw std::invalid_argument(
          "edits: " + item.tag +
          " is a preprocessed tensor, and edits change a picture before its normalisation; "
          "give it as an H×W×3 uint8 picture to edit it");
}

}  // namespace attnlab::python
