// See data_paths.h. The source-tree folders are compiled into this one file only
// (core/CMakeLists.txt), so moving the checkout rebuilds one object.
#include "core/runtime/data_paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace attnlab::runtime {
namespace fs = std::filesystem;
namespace {

#ifdef ATTNLAB_SOURCE_ASSETS_DIR
constexpr const char* kSourceAssets = ATTNLAB_SOURCE_ASSETS_DIR;
constexpr const char* kSourceZoo = ATTNLAB_SOURCE_ZOO_DIR;
#else  // a package build: an installed binary never reads a source tree
constexpr const char* kSourceAssets = nullptr;
constexpr const char* kSourceZoo = nullptr;
#endif

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// env, then <prefix>/share/attnlab/<name>, then the source tree's folder.
DataDir find_data_dir(const char* env_name, const char* installed_name, const char* source_dir) {
  const char* env = std::getenv(env_name);
  if (env && *env) return {env, std::string("environment (") + env_name + ")"};
  const std::string exe = executable_path();
  if (!exe.empty()) {
    // <prefix>/bin/attnlab -> <prefix>/share/attnlab/<name>
    const fs::path installed =
        fs::path(exe).parent_path().parent_path() / "share" / "attnlab" / installed_name;
    if (is_dir(installed)) return {installed.string(), "installed"};
  }
  if (source_dir && is_dir(source_dir)) return {source_dir, "source tree"};
  return {"", "not found"};
}

}  // namespace

std::string executable_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

DataDir assets_data_dir() {
  return find_data_dir("ATTNLAB_ASSETS", "assets", kSourceAssets);
}

DataDir zoo_data_dir() {
  return find_data_dir("ATTNLAB_ZOO", "zoo", kSourceZoo);
}

}  // namespace attnlab::runtime
