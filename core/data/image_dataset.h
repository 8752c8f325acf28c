// Labelled image sets for training and evaluation, held in memory as uint8 pixels:
//   fashion-mnist:train | fashion-mnist:test   the IDX files Debian's dataset-fashion-mnist
//                                              installs (or ATTNLAB_FASHION_MNIST=DIR)
//   folder:DIR (or a directory path)           an ImageFolder tree: DIR/<class>/<image>,
//                                              classes sorted by name, every image resized
//                                              (bilinear, PIL-exact) to the size asked for
// Pixels stay uint8 (60k Fashion-MNIST images are 47 MB) and are normalised per batch.
// A folder can also be listed without decoding anything (list_image_folder), for
// evaluation that reads it a batch at a time (batches.h: load_file_batch).
#pragma once

#include <ATen/core/Tensor.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::data {

struct DatasetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ImageDataset {
  std::string name;                      // "fashion-mnist:test", "folder:/data/pets"
  at::Tensor images;                     // (N, C, H, W) uint8, C = 1 (grey) or 3 (RGB)
  at::Tensor labels;                     // (N,) int64 in [0, classes)
  std::vector<std::string> class_names;  // index = label

  int64_t size() const { return images.defined() ? images.size(0) : 0; }
  int64_t classes() const { return static_cast<int64_t>(class_names.size()); }
};

// The ten Fashion-MNIST classes, in label order.
const std::vector<std::string>& fashion_mnist_classes();

// Where the Fashion-MNIST IDX files are: $ATTNLAB_FASHION_MNIST or
// /usr/share/datasets/fashion-mnist. Empty when the four files are not there.
std::string fashion_mnist_dir();

// split: "train" (60000 images) or "test" (10000). Checks counts, shapes and labels.
ImageDataset load_fashion_mnist(const std::string& dir, const std::string& split);

// ImageFolder: one sub-directory per class; images of any format OpenCV reads, resized to
// size × size, RGB. Unreadable images are an error naming the file.
ImageDataset load_image_folder(const std::string& dir, int size);

// One file of an ImageFolder tree and its class.
struct LabelledFile {
  std::string path;
  int64_t label = 0;
};

// An ImageFolder tree's classes and files, nothing decoded: classes are the
// sub-directories that hold at least one regular file, sorted by name (label = index);
// files are listed class by class, sorted by name — the order load_image_folder uses.
struct FolderListing {
  std::string name;  // "folder:DIR"
  std::vector<std::string> class_names;
  std::vector<LabelledFile> files;
};
// Throws DatasetError when DIR is not a directory or has no class sub-directory with files.
FolderListing list_image_folder(const std::string& dir);

// The directory a dataset spec names ("folder:DIR", or an existing directory), or "" for
// the other specs (fashion-mnist:...).
std::string folder_of_spec(const std::string& spec);

// "fashion-mnist:train", "fashion-mnist:test", "folder:DIR" or a directory. `size` is the
// image size for folders (Fashion-MNIST is always 28).
ImageDataset load_dataset(const std::string& spec, int size);

}  // namespace attnlab::data
