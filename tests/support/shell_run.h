// Runs a shell command line (sh -c, through popen) and captures its exit code and its
// standard output and error together: the end-to-end tests of the binary, bash and groff.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace attnlab::testing {

struct CliRun {
  int code;         // the exit code; -1 when it did not exit normally or could not start
  std::string out;  // stdout and stderr, interleaved as written
};

inline CliRun run_shell(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  CliRun r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace attnlab::testing
