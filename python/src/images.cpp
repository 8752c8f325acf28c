// Image arguments of the binding; see images.h.
#include "python/src/images.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "app/session/image_list.h"

namespace attnlab::python {
namespace {

io::RgbImage array_pixels(const py::array& a, size_t index) {
  const std::string where = "images[" + std::to_string(index) + "]";
  if (!py::dtype::of<uint8_t>().is(a.dtype()) || a.ndim() != 3 || a.shape(2) != 3)
    throw std::invalid_argument(where + ": an array image is H×W×3 uint8 (RGB), not " +
                                std::string(py::str(a.dtype())) + " of shape " +
                                std::string(py::str(py::tuple(py::cast(
                                    std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()))))));
  if (a.shape(0) < 1 || a.shape(1) < 1) throw std::invalid_argument(where + ": an empty image");
  const auto c = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>::ensure(a);
  io::RgbImage im;
  im.height = int(a.shape(0));
  im.width = int(a.shape(1));
  im.rgb.assign(c.data(), c.data() + c.size());
  return im;
}

}  // namespace

std::vector<ImageItem> image_items(const py::handle& images) {
  std::vector<py::object> given;
  const bool one = py::isinstance<py::str>(images) || py::isinstance<py::array>(images) ||
                   py::hasattr(images, "__fspath__");
  if (one) {
    given.push_back(py::reinterpret_borrow<py::object>(images));
  } else if (py::isinstance<py::sequence>(images)) {
    for (const auto& item : images.cast<py::sequence>())
      given.push_back(py::reinterpret_borrow<py::object>(item));
  } else {
    throw std::invalid_argument("images: a path, a folder, an H×W×3 uint8 array or a list of them");
  }
  if (given.empty()) throw std::invalid_argument("images: no image given");
  std::vector<ImageItem> out;
  int arrays = 0;
  for (size_t k = 0; k < given.size(); ++k) {
    const py::object& g = given[k];
    if (py::isinstance<py::array>(g)) {
      ImageItem item;
      item.tag = "array" + std::to_string(arrays++);
      item.pixels = array_pixels(g.cast<py::array>(), k);
      out.push_back(std::move(item));
      continue;
    }
    if (!py::isinstance<py::str>(g) && !py::hasattr(g, "__fspath__"))
      throw std::invalid_argument("images[" + std::to_string(k) +
                                  "]: a path, a folder or an H×W×3 uint8 array");
    const std::string path = py::str(py::module_::import("os").attr("fspath")(g));
    try {
      for (auto& f : session::image_files(path)) out.push_back({f, "", std::nullopt});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("images: ") + e.what());
    }
  }
  std::vector<std::string> paths;  // the CLI's tags, given to the files alone
  for (const ImageItem& item : out)
    if (!item.pixels) paths.push_back(item.path);
  const std::vector<std::string> tags = session::image_tags(paths);
  size_t next = 0;
  for (ImageItem& item : out)
    if (!item.pixels) item.tag = tags[next++];
  return out;
}

io::RgbImage item_picture(const ImageItem& item) {
  return item.pixels ? *item.pixels : io::load_rgb_image(item.path);
}

}  // namespace attnlab::python
