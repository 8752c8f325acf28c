// Labelled image sets: Fashion-MNIST from its IDX files and ImageFolder trees.
#include "core/data/image_dataset.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/image/resample.h"
#include "core/io/idx.h"
#include "core/io/image_io.h"
#include "core/io/torch_bridge.h"

namespace attnlab::data {
namespace fs = std::filesystem;

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

namespace {

std::string idx_file(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".gz", ""}) {
    const fs::path p = fs::path(dir) / (stem + ext);
    if (fs::exists(p)) return p.string();
  }
  return "";
}

const char* images_stem(const std::string& split) {
  return split == "train" ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte";
}
const char* labels_stem(const std::string& split) {
  return split == "train" ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte";
}

}  // namespace

std::string fashion_mnist_dir() {
  const char* env = std::getenv("ATTNLAB_FASHION_MNIST");
  const std::string dir = env && *env ? env : "/usr/share/datasets/fashion-mnist";
  for (const char* split : {"train", "test"})
    if (idx_file(dir, images_stem(split)).empty() || idx_file(dir, labels_stem(split)).empty())
      return "";
  return dir;
}

ImageDataset load_fashion_mnist(const std::string& dir, const std::string& split) {
  if (split != "train" && split != "test")
    throw DatasetError("fashion-mnist: split must be 'train' or 'test' (got '" + split + "')");
  const std::string images_path = idx_file(dir, images_stem(split));
  const std::string labels_path = idx_file(dir, labels_stem(split));
  if (images_path.empty() || labels_path.empty())
    throw DatasetError("fashion-mnist: no " + std::string(images_stem(split)) + "[.gz] and " +
                       labels_stem(split) + "[.gz] in " + dir +
                       " (install Debian's dataset-fashion-mnist, or set ATTNLAB_FASHION_MNIST)");
  const io::RawTensor images = io::read_idx(images_path);
  const io::RawTensor labels = io::read_idx(labels_path);
  const int64_t expected = split == "train" ? 60000 : 10000;
  if (images.dtype != io::DType::U8 || images.shape != std::vector<int64_t>{expected, 28, 28})
    throw DatasetError(images_path + ": expected U8[" + std::to_string(expected) +
                       ", 28, 28], found " + images.describe());
  if (labels.dtype != io::DType::U8 || labels.shape != std::vector<int64_t>{expected})
    throw DatasetError(labels_path + ": expected U8[" + std::to_string(expected) + "], found " +
                       labels.describe());
  ImageDataset d;
  d.name = "fashion-mnist:" + split;
  d.class_names = fashion_mnist_classes();
  d.images = io::to_torch(images).reshape({expected, 1, 28, 28}).contiguous();
  d.labels = io::to_torch(labels).to(at::kLong);
  const int64_t top = d.labels.max().item<int64_t>();
  if (top >= d.classes())
    throw DatasetError(labels_path + ": label " + std::to_string(top) + " outside 0..9");
  return d;
}

FolderListing list_image_folder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw DatasetError("image folder: " + dir + " is not a directory");
  FolderListing listing;
  listing.name = "folder:" + dir;
  std::vector<fs::path> class_dirs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) class_dirs.push_back(e.path());
  std::sort(class_dirs.begin(), class_dirs.end());
  for (const fs::path& cd : class_dirs) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cd))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) continue;
    const auto label = static_cast<int64_t>(listing.class_names.size());
    listing.class_names.push_back(cd.filename().string());
    for (const fs::path& f : files) listing.files.push_back({f.string(), label});
  }
  if (listing.files.empty())
    throw DatasetError("image folder: " + dir + " has no class sub-directory with images " +
                       "(expected DIR/<class>/<image>)");
  return listing;
}

ImageDataset load_image_folder(const std::string& dir, int size) {
  if (!fs::is_directory(dir)) throw DatasetError("image folder: " + dir + " is not a directory");
  if (size < 1 || size > 4096)
    throw DatasetError("image folder: image size " + std::to_string(size) + " is not usable");
  FolderListing listing = list_image_folder(dir);
  ImageDataset d;
  d.name = listing.name;
  d.class_names = std::move(listing.class_names);
  std::vector<at::Tensor> images;
  std::vector<int64_t> labels;
  for (const LabelledFile& f : listing.files) {
    io::RgbImage img = io::load_rgb_image(f.path);
    if (img.width != size || img.height != size)
      img = image::resize_like_pil(img, size, size, image::Filter::Bilinear);
    at::Tensor t = at::empty({size, size, 3}, at::kByte);
    std::memcpy(t.data_ptr<uint8_t>(), img.rgb.data(), img.rgb.size());
    images.push_back(t.permute({2, 0, 1}));
    labels.push_back(f.label);
  }
  d.images = at::stack(images).contiguous();
  d.labels = at::tensor(labels, at::kLong);
  return d;
}

std::string folder_of_spec(const std::string& spec) {
  if (spec.rfind("folder:", 0) == 0) return spec.substr(7);
  if (spec.rfind("fashion-mnist:", 0) != 0 && fs::is_directory(spec)) return spec;
  return "";
}

ImageDataset load_dataset(const std::string& spec, int size) {
  const std::string fm = "fashion-mnist:";
  if (spec.rfind(fm, 0) == 0) {
    const std::string dir = fashion_mnist_dir();
    if (dir.empty())
      throw DatasetError(
          "fashion-mnist: the IDX files are not installed (apt-get install "
          "dataset-fashion-mnist, or set ATTNLAB_FASHION_MNIST=DIR)");
    return load_fashion_mnist(dir, spec.substr(fm.size()));
  }
  if (const std::string dir = folder_of_spec(spec); !dir.empty())
    return load_image_folder(dir, size);
  throw DatasetError("unknown dataset '" + spec +
                     "': use fashion-mnist:train, fashion-mnist:test, folder:DIR or a directory");
}

}  // namespace attnlab::data
