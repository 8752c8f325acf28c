// expand_images: see image_list.h. Extensions are those OpenCV's imread decodes here.
#include "app/session/image_list.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/analysis/output_folder.h"

namespace attnlab::session {
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

std::vector<std::string> image_files(const std::string& arg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(arg, ec))
      if (e.is_regular_file() && looks_like_image(e.path())) found.push_back(e.path().string());
    if (found.empty()) throw std::invalid_argument("the folder " + arg + " holds no image file");
    std::sort(found.begin(), found.end());
    return found;
  }
  if (fs::exists(arg, ec)) return {arg};
  throw std::invalid_argument("no such image or folder: " + arg);
}

std::vector<std::string> image_tags(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  for (const auto& p : paths) {
    std::string tag = analysis::file_safe(std::filesystem::path(p).stem().string());
    const int n = ++seen[tag];
    if (n > 1) tag += "_" + std::to_string(n);
    out.push_back(tag);
  }
  return out;
}

std::vector<ImageInput> expand_images(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  for (const auto& a : args) {
    const auto files = image_files(a);
    paths.insert(paths.end(), files.begin(), files.end());
  }
  const std::vector<std::string> tags = image_tags(paths);
  std::vector<ImageInput> out;
  for (size_t i = 0; i < paths.size(); ++i) out.push_back({paths[i], tags[i]});
  return out;
}

}  // namespace attnlab::session
