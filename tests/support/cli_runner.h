// Runs the `attnlab` executable (ATTNLAB_BINARY, set by CMake) with arguments and captures
// its exit code and combined stdout + stderr, for the end-to-end CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <string>

namespace attnlab::testing {

struct CliRun {
  int code;
  std::string out;
};

inline CliRun run_cli(const std::string& args) {
  std::string cmd = std::string(ATTNLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliRun r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
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
