// The desktop's own file chooser for File > Open: zenity (GNOME and most desktops) or
// kdialog (KDE), run as a child process on a thread of its own, so the window keeps
// drawing while it is open. Where neither is installed (or ATTNLAB_NO_NATIVE_DIALOG is
// set) the GUI uses its in-app file list instead. Nothing from the chooser is executed:
// its output is read as paths, one per line.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/workspace/file_kinds.h"

namespace attnlab::gui {

// The chooser program found on PATH ("" when there is none, or it is switched off).
std::string find_native_dialog_program();

// The command line that asks `program` (zenity or kdialog, by its file name) for files of
// `kind`, starting in `start_dir`; several files may be picked.
std::vector<std::string> native_dialog_command(const std::string& program, FileKind kind,
                                               const std::string& start_dir);

class NativeDialog {
 public:
  struct Result {
    FileKind kind = FileKind::Image;
    std::vector<std::string> paths;  // empty: cancelled
    std::string error;               // the chooser could not be run
  };

  NativeDialog() = default;
  ~NativeDialog();  // closes a chooser still open
  NativeDialog(const NativeDialog&) = delete;
  NativeDialog& operator=(const NativeDialog&) = delete;

  // Opens the chooser unless one is open already; false when there is no chooser program.
  bool open(FileKind kind, const std::string& start_dir);
  bool is_open() const;
  // The answer, once (main thread, each frame).
  std::optional<Result> take();

 private:
  void run(std::vector<std::string> command, FileKind kind);

  mutable std::mutex mutex_;
  std::thread thread_;
  bool open_ = false;
  pid_t child_ = -1;
  std::optional<Result> result_;
};

}  // namespace attnlab::gui
