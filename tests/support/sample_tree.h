// The committed Fashion-MNIST samples (assets/fashion-mnist/NN-class-K.png, three per class)
// copied as a class tree DIR/NN-class/NN-class-K.png: the layout `eval`, `embed` and the
// report read labels from (the sorted class folders are the labels 0..9).
#pragma once

#include <filesystem>
#include <string>

namespace attnlab::testing {

inline void copy_sample_tree(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  for (const auto& e :
       fs::directory_iterator(fs::path(ATTNLAB_SOURCE_DIR) / "assets" / "fashion-mnist")) {
    if (e.path().extension() != ".png") continue;
    const std::string name = e.path().filename().string();
    const std::string cls = name.substr(0, name.rfind('-'));
    fs::create_directories(dir / cls);
    fs::copy_file(e.path(), dir / cls / name);
  }
}

}  // namespace attnlab::testing
