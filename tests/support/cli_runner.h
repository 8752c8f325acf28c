// Runs the `attnlab` executable (ATTNLAB_BINARY, set by CMake) with arguments and captures
// its exit code and combined stdout + stderr, for the end-to-end CLI tests.
#pragma once

#include <initializer_list>
#include <string>

#include "tests/support/shell_run.h"

namespace attnlab::testing {

inline CliRun run_cli(const std::string& args) {
  return run_shell(std::string(ATTNLAB_BINARY) + " " + args);
}

// True when one line of `out` contains every one of `parts` (column padding may vary).
inline bool has_line_with(const std::string& out, std::initializer_list<const char*> parts) {
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    bool all = true;
    for (const char* p : parts) all &= line.find(p) != std::string::npos;
    if (all) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace attnlab::testing
