// See native_dialog.h.
#include "app/gui/workspace/native_dialog.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>

extern char** environ;

namespace attnlab::gui {
namespace {

constexpr const char* kImagePatterns =
    "*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp *.ppm *.pgm *.pnm";
constexpr const char* kModelPatterns = "*.safetensors *.pth *.pt *.bin *.json";

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Runs `command`, returns its standard output; *status gets the exit status (-1 when it
// could not be started). The child's pid is published through `on_start` while it runs.
std::string run_and_read(const std::vector<std::string>& command, int* status,
                         const std::function<void(pid_t)>& on_start) {
  *status = -1;
  int out[2];
  if (::pipe(out) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return "";
  }
  on_start(pid);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, size_t(n));
  }
  ::close(out[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  on_start(-1);
  *status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128;
  return text;
}

}  // namespace

std::string find_native_dialog_program() {
  if (std::getenv("ATTNLAB_NO_NATIVE_DIALOG") != nullptr) return "";
  for (const char* name : {"zenity", "kdialog"})
    if (std::string p = on_path(name); !p.empty()) return p;
  return "";
}

std::vector<std::string> native_dialog_command(const std::string& program, FileKind kind,
                                               const std::string& start_dir) {
  const bool image = kind == FileKind::Image;
  const std::string title = image ? "attnlab: open images" : "attnlab: open models";
  const std::string patterns = image ? kImagePatterns : kModelPatterns;
  const std::string label = image ? "Images" : "Checkpoints and model configs";
  std::string dir = start_dir.empty() ? "." : start_dir;
  if (dir.back() != '/') dir += '/';
  if (std::filesystem::path(program).filename() == "kdialog")
    return {program,
            "--title",
            title,
            "--multiple",
            "--separate-output",
            "--getopenfilename",
            dir,
            patterns + "|" + label};
  return {program,
          "--file-selection",
          "--multiple",
          "--separator=\n",
          "--title=" + title,
          "--filename=" + dir,
          "--file-filter=" + label + " | " + patterns,
          "--file-filter=All files | *"};
}

NativeDialog::~NativeDialog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (child_ > 0) ::kill(child_, SIGTERM);  // the chooser closes with the app
  }
  if (thread_.joinable()) thread_.join();
}

bool NativeDialog::open(FileKind kind, const std::string& start_dir) {
  const std::string program = find_native_dialog_program();
  if (program.empty()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) return true;
  if (thread_.joinable()) thread_.join();  // the last chooser's thread has finished
  open_ = true;
  thread_ =
      std::thread(&NativeDialog::run, this, native_dialog_command(program, kind, start_dir), kind);
  return true;
}

bool NativeDialog::is_open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

std::optional<NativeDialog::Result> NativeDialog::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<Result> r = std::move(result_);
  result_.reset();
  return r;
}

void NativeDialog::run(std::vector<std::string> command, FileKind kind) {
  int status = -1;
  const std::string text = run_and_read(command, &status, [this](pid_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    child_ = pid;
  });
  Result r;
  r.kind = kind;
  if (status == 0) {
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) r.paths.push_back(line);
  } else if (status != 1) {  // 1: the user cancelled
    r.error = "the file chooser " + command.front() + " failed (exit status " +
              std::to_string(status) + ")";
  }
  std::lock_guard<std::mutex> lock(mutex_);
  result_ = std::move(r);
  open_ = false;
}

}  // namespace attnlab::gui
