// The whole content of a file as a string (bytes as they are; empty if it cannot be read),
// for tests that check what a writer produced.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace attnlab::testing {

inline std::string read_text(const std::string& path) {
  // Through rdbuf(), not istreambuf_iterator: GCC 12 warns of a null dereference inside
  // the iterator's inlined code once several test files share a unity unit.
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace attnlab::testing
