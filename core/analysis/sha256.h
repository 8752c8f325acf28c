// SHA-256 of bytes and of files (lowercase hex), for the settings sidecar's checkpoint
// hash. Throws io::IoError naming the file when it cannot be read.
#pragma once

#include <cstddef>
#include <string>

namespace attnlab::analysis {

std::string sha256_file(const std::string& path);
std::string sha256_hex(const void* data, size_t n);

// For tests: the portable code, or the CPU's SHA instructions when it has them (what the
// functions above use). Both give the same digest.
enum class Sha256Code { Portable, Fastest };
std::string sha256_hex(const void* data, size_t n, Sha256Code code);
bool sha256_extensions_available();

}  // namespace attnlab::analysis
