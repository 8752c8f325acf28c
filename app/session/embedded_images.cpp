// EmbeddedImagePaths; see embedded_images.h.
#include "app/session/embedded_images.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "core/io/file_bytes.h"

namespace attnlab::session {
namespace fs = std::filesystem;

EmbeddedImagePaths::EmbeddedImagePaths(std::string dir, const nlohmann::json& record)
    : dir_(std::move(dir)) {
  if (record.is_object()) {
    const auto it = record.find("working_directory");
    if (it != record.end() && it->is_string()) working_directory_ = it->get<std::string>();
  }
}

EmbeddedImagePaths EmbeddedImagePaths::of_folder(const std::string& dir) {
  nlohmann::json record;
  const std::string path = (fs::path(dir) / "embed.json").string();
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    try {
      const std::vector<uint8_t> bytes = io::read_file_bytes(path, uint64_t(64) << 20);
      record = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    } catch (const std::exception&) {
      record = nullptr;  // unreadable: resolve without it (the folder's readers say why)
    }
  }
  return EmbeddedImagePaths(dir, record);
}

std::string EmbeddedImagePaths::resolve(const std::string& image) const {
  std::error_code ec;
  if (image.empty() || fs::exists(image, ec)) return image;
  const fs::path name(image);
  if (name.is_absolute()) return image;
  for (const std::string& base : {working_directory_, dir_}) {
    if (base.empty()) continue;
    const fs::path candidate = fs::path(base) / name;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return image;
}

std::string embedding_working_directory() {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  return ec ? std::string() : cwd.string();
}

}  // namespace attnlab::session
