// expand_images: see image_list.h. Extensions are those OpenCV's imread decodes here.
#include "app/cli/image_list.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "app/cli/cli_common.h"
#include "core/analysis/output_folder.h"

namespace attnlab::cli {
namespace {

bool looks_like_image(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  static const char* kExts[] = {".png",  ".jpg", ".jpeg", ".bmp", ".tif", ".tiff",
                                ".webp", ".ppm", ".pgm",  ".pbm", ".pnm"};
  return std::find(std::begin(kExts), std::end(kExts), ext) != std::end(kExts);
}

}  // namespace

std::vector<ImageInput> expand_images(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(a, ec))
        if (e.is_regular_file() && looks_like_image(e.path())) found.push_back(e.path().string());
      if (found.empty()) throw UsageError("the folder " + a + " holds no image file");
      std::sort(found.begin(), found.end());
      paths.insert(paths.end(), found.begin(), found.end());
    } else if (fs::exists(a, ec)) {
      paths.push_back(a);
    } else {
      throw UsageError("no such image or folder: " + a);
    }
  }
  std::vector<ImageInput> out;
  std::map<std::string, int> seen;
  for (const auto& p : paths) {
    std::string tag = analysis::file_safe(fs::path(p).stem().string());
    const int n = ++seen[tag];
    if (n > 1) tag += "_" + std::to_string(n);
    out.push_back({p, tag});
  }
  return out;
}

}  // namespace attnlab::cli
