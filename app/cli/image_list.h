// Image arguments of the analysis commands: files and folders (a folder contributes its
// image files, sorted by name, not recursing), each with a file-name-safe tag that is
// unique within the list.
#pragma once

#include <string>
#include <vector>

namespace attnlab::cli {

struct ImageInput {
  std::string path;
  std::string tag;  // file stem, made file-safe, "_2", "_3", ... appended on repeats
};

// Throws UsageError for a missing path or a folder with no image file in it.
std::vector<ImageInput> expand_images(const std::vector<std::string>& args);

}  // namespace attnlab::cli
