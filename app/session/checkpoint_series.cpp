// checkpoint_step; see checkpoint_series.h.
#include "app/session/checkpoint_series.h"

#include <filesystem>

#include "core/io/tensor_file.h"
#include "models/model_config.h"

namespace attnlab::session {

nlohmann::json checkpoint_step(const std::string& path) {
  if (std::filesystem::path(path).extension() != ".safetensors") return nullptr;
  try {
    const int64_t step = models::metadata_step(io::read_tensor_file(path).metadata);
    if (step >= 0) return step;
  } catch (const std::exception&) {
    // Unreadable metadata: the loader reports the file itself.
  }
  return nullptr;
}

}  // namespace attnlab::session
