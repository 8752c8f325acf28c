// EmbeddedImagePaths; see embedded_images.h.
#include "app/session/embedded_images.h"

#include <cstdlib>
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

std::optional<image::Preprocessing> embedded_image_preprocessing(const nlohmann::json& record) {
  if (!record.is_object()) return std::nullopt;
  const auto model = record.find("model");
  if (model == record.end() || !model->is_object()) return std::nullopt;
  const nlohmann::json& m = *model;
  const auto crop = m.find("preprocessing_crop");
  if (crop == m.end() || !crop->is_number_integer()) return std::nullopt;
  image::Preprocessing p;
  p.crop = crop->get<int>();
  const auto resize = m.find("preprocessing_resize_short");
  p.resize_short = resize != m.end() && resize->is_number_integer() ? resize->get<int>() : 0;
  // The filter and a non-square crop are only in the description (Preprocessing::describe:
  // "bilinear resize 32, center crop 224x320, ...").
  const auto how = m.find("preprocessing");
  const std::string describe = how != m.end() && how->is_string() ? how->get<std::string>() : "";
  if (describe.rfind("bilinear", 0) == 0) p.filter = image::Filter::Bilinear;
  const std::string square = "center crop " + std::to_string(p.crop) + "x";
  if (const size_t at = describe.find(square); at != std::string::npos)
    p.crop_width = std::atoi(describe.c_str() + at + square.size());
  return p;
}

std::string embedding_working_directory() {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  return ec ? std::string() : cwd.string();
}

}  // namespace attnlab::session
