// What `attnlab --version` and `attnlab info` say this build is: the project version and
// the git revision it was built from (computed at build time, cmake/GitRevision.cmake).
#pragma once

#include <string>

namespace attnlab::cli {

// "0.1.0"
std::string version();
// "3f2a9c1d0b7e", "3f2a9c1d0b7e-dirty" or "unknown" (not built from a git checkout).
std::string git_revision();
// "attnlab 0.1.0 (git 3f2a9c1d0b7e)"
std::string version_line();

}  // namespace attnlab::cli
