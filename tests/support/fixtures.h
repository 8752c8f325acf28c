// Where the shared reference fixtures live: ../shared/fixtures beside the repository
// (ATTNLAB_SHARED_DIR, set by CMake), or $ATTNLAB_SHARED when set. Tests that need them
// fail (not skip) when they are missing: a parity test that silently skips proves nothing.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace attnlab::testing {

inline std::string shared_dir() {
  if (const char* env = std::getenv("ATTNLAB_SHARED"); env && *env) return env;
  return ATTNLAB_SHARED_DIR;
}
inline std::string parity_dir() {
  return shared_dir() + "/fixtures/parity";
}

// The fixture NAMEs that have both a .pth and a .safetensors.
inline std::vector<std::string> parity_names_with_pth() {
  return {"deit_mini", "litv2_mini", "ravlt_mini", "anchor_deit_mini", "swin_mini"};
}
// Every NAME (module-only fixtures have no .pth).
inline std::vector<std::string> parity_names() {
  return {"deit_mini",     "litv2_mini",  "ravlt_mini", "anchor_deit_mini",
          "castling_attn", "hilo_padded", "swin_mini"};
}

}  // namespace attnlab::testing
