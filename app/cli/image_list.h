// Image arguments of the analysis commands (session/image_list.h), with a bad one refused
// as a usage error (exit 2).
#pragma once

#include <string>
#include <vector>

#include "app/session/image_list.h"

namespace attnlab::cli {

using session::ImageInput;

// session::expand_images; throws UsageError for a missing path or a folder with no image.
std::vector<ImageInput> expand_images(const std::vector<std::string>& args);

}  // namespace attnlab::cli
