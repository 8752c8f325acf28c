// expand_images: see image_list.h.
#include "app/cli/image_list.h"

#include <stdexcept>

#include "app/cli/cli_common.h"

namespace attnlab::cli {

std::vector<ImageInput> expand_images(const std::vector<std::string>& args) {
  try {
    return session::expand_images(args);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace attnlab::cli
