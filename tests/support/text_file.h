// The whole content of a file as a string (bytes as they are; empty if it cannot be read),
// for tests that check what a writer produced.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace attnlab::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace attnlab::testing
