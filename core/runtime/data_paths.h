// Where attnlab's read-only data lives: the demo images and ImageNet class names
// ("assets") and the trained model zoo ("zoo"). The same binary runs from a build folder
// and installed from the .deb, so each is looked for in order, first found wins:
//   1. the environment: ATTNLAB_ASSETS, ATTNLAB_ZOO;
//   2. installed: <prefix>/share/attnlab/{assets,zoo}, <prefix> being the folder above the
//      executable's bin/ (so a package unpacked anywhere, e.g. by `dpkg -x`, finds its own
//      data, and an installed binary never reads a source tree);
//   3. the source tree the binary was built from (compiled in): a build folder's binary.
// No LibTorch, no GL: core, models, the CLI and the GUI all ask here.
#pragma once

#include <string>

namespace attnlab::runtime {

struct DataDir {
  std::string path;    // "" when none of the three places has it
  std::string origin;  // "environment (ATTNLAB_ZOO)", "installed", "source tree", "not found"
};

DataDir assets_data_dir();
DataDir zoo_data_dir();

// The running executable's absolute path (/proc/self/exe), or "" where it cannot be read.
std::string executable_path();

}  // namespace attnlab::runtime
