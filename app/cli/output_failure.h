// A failure to write the output (a full or read-only disk, a folder removed underneath)
// is not one item's problem: every later write fails the same way. The commands that
// skip a bad model, image or figure and go on (report, analyze) rethrow it instead, so
// the user gets one message naming the file and the reason, not a skip per item and a
// report with holes.
#pragma once

#include <exception>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/io/io_error.h"

namespace attnlab::cli {

inline bool is_output_failure(const std::exception& e) {
  const auto* io = dynamic_cast<const io::IoError*>(&e);
  return io && io->kind() == io::IoErrorKind::WriteFailed;
}

// Creates an output folder (and its parents), or throws such a failure naming it.
inline void create_output_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw io::IoError(
        io::IoErrorKind::WriteFailed, dir.string(),
        "cannot create the output folder: " + (ec ? ec.message() : std::string("not a directory")));
}

}  // namespace attnlab::cli
