// SHA-256 of bytes and of files (lowercase hex), for the settings sidecar's checkpoint
// hash. Throws io::IoError naming the file when it cannot be read.
#pragma once

#include <cstddef>
#include <string>

namespace attnlab::analysis {

std::string sha256_file(const std::string& path);
std::string sha256_hex(const void* data, size_t n);

}  // namespace attnlab::analysis
