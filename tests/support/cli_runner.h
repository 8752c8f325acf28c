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

// `attnlab --threads 1 ARGS` with `env_vars` ("A=1 B=2 ") set and no Slurm array variables:
// a test run inside a Slurm job array would otherwise take its task as a --shard. One
// thread: what the tests compare is then the same whatever the machine's core count.
// `cwd`: the directory it runs in ("": the test's).
inline CliRun run_cli_single(const std::string& args, const std::string& env_vars = "",
                             const std::string& cwd = "") {
  return run_shell((cwd.empty() ? std::string() : "cd '" + cwd + "' && ") +
                   "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
                   "-u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_STEP " +
                   env_vars + ATTNLAB_BINARY + " --threads 1 " + args);
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
