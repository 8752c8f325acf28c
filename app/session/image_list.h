// The images an analysis command or the Python module is given: files and folders (a
// folder contributes its image files, sorted by name, not recursing), each with a
// file-name-safe tag unique within the list. One definition, so the CLI's and the
// module's results name the same images the same way.
#pragma once

#include <string>
#include <vector>

namespace attnlab::session {

struct ImageInput {
  std::string path;
  std::string tag;  // file stem, made file-safe, "_2", "_3", ... appended on repeats
};

// What one argument names: a folder's image files (sorted by name) or the file itself.
// Throws std::invalid_argument for a missing path or a folder with no image file in it.
std::vector<std::string> image_files(const std::string& arg);
// The tags of `paths`, in order (the stems, file-safe, with "_2", "_3" on repeats).
std::vector<std::string> image_tags(const std::vector<std::string>& paths);
// image_files of every argument, in order, with their tags.
std::vector<ImageInput> expand_images(const std::vector<std::string>& args);

}  // namespace attnlab::session
