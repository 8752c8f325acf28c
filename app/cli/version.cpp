// See version.h. The only file that includes the generated revision header, so a commit
// recompiles this file and relinks, nothing else.
#include "app/cli/version.h"

#include "attnlab_git_revision.h"

namespace attnlab::cli {

std::string version() {
  return ATTNLAB_VERSION;
}

std::string git_revision() {
  return ATTNLAB_GIT_REVISION;
}

std::string version_line() {
  return "attnlab " + version() + " (git " + git_revision() + ")";
}

}  // namespace attnlab::cli
