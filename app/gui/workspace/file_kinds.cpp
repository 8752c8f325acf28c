// Extension-based routing of user-supplied paths; see file_kinds.h.
#include "app/gui/workspace/file_kinds.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace attnlab::gui {
namespace {

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::string lower_extension(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

FileKind classify_path(const std::string& path) {
  const std::string ext = lower_extension(path);
  for (const char* e :
       {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm", ".pnm"}) {
    if (ext == e) return FileKind::Image;
  }
  for (const char* e : {".pth", ".pt", ".safetensors", ".bin", ".json"}) {
    if (ext == e) return FileKind::Model;
  }
  if (ext == ".attnlab") return FileKind::Workspace;
  return FileKind::Unknown;
}

std::string normalize_user_path(const std::string& typed) {
  size_t begin = 0;
  size_t end = typed.size();
  while (begin < end && is_space(typed[begin])) ++begin;
  while (end > begin && is_space(typed[end - 1])) --end;
  std::string path = typed.substr(begin, end - begin);
  if (path.size() >= 2 && (path.front() == '"' || path.front() == '\'') &&
      path.back() == path.front()) {
    path = path.substr(1, path.size() - 2);
  }
  if (path.rfind("~/", 0) == 0) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
      path = std::string(home) + path.substr(1);
    }
  }
  return path;
}

}  // namespace attnlab::gui
