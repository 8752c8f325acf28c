// The desktop file chooser plumbing (app/gui/workspace/native_dialog): the command lines given to
// zenity and kdialog, and a chooser run as a child process whose output becomes paths
// (a stand-in "zenity" script on PATH plays the user).
#include "app/gui/workspace/native_dialog.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/temp_path.h"

namespace fs = std::filesystem;
using attnlab::gui::FileKind;
using attnlab::gui::native_dialog_command;
using attnlab::gui::NativeDialog;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// PATH holding only a fake zenity that runs `body` (sh), restored afterwards.
class FakeChooser {
 public:
  explicit FakeChooser(const std::string& body) {
    const fs::path exe = dir_.path / "zenity";
    std::ofstream(exe) << "#!/bin/sh\n" << body << "\n";
    ::chmod(exe.c_str(), 0755);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", dir_.path.c_str(), 1);
    ::unsetenv("ATTNLAB_NO_NATIVE_DIALOG");
  }
  ~FakeChooser() { ::setenv("PATH", old_path_.c_str(), 1); }

 private:
  attnlab::testing::TempDir dir_{"chooser"};
  std::string old_path_;
};

NativeDialog::Result wait_for_answer(NativeDialog& d) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto r = d.take()) return *r;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "the chooser never answered";
  return {};
}

}  // namespace

TEST(NativeDialog, ZenityIsAskedForSeveralFilesOfTheKindFromTheFolder) {
  const auto c = native_dialog_command("/usr/bin/zenity", FileKind::Image, "/data/cats");
  EXPECT_EQ(c.front(), "/usr/bin/zenity");
  EXPECT_TRUE(has(c, "--file-selection"));
  EXPECT_TRUE(has(c, "--multiple"));
  EXPECT_TRUE(has(c, "--filename=/data/cats/"));  // the trailing slash: open in the folder
  EXPECT_TRUE(has(c,
                  "--file-filter=Images | *.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp "
                  "*.ppm *.pgm *.pnm"));
  const auto m = native_dialog_command("zenity", FileKind::Model, "");
  EXPECT_TRUE(has(m, "--filename=./"));
  EXPECT_TRUE(has(m,
                  "--file-filter=Checkpoints and model configs | *.safetensors *.pth *.pt "
                  "*.bin *.json"));
}

TEST(NativeDialog, KdialogGetsItsOwnSyntax) {
  const auto c = native_dialog_command("/usr/bin/kdialog", FileKind::Model, "/runs");
  EXPECT_TRUE(has(c, "--getopenfilename"));
  EXPECT_TRUE(has(c, "--separate-output"));
  EXPECT_TRUE(has(c, "/runs/"));
  EXPECT_TRUE(has(c, "*.safetensors *.pth *.pt *.bin *.json|Checkpoints and model configs"));
}

TEST(NativeDialog, ThePickedFilesComeBackAsPaths) {
  FakeChooser fake("printf '/a/one.png\\n/b/two words.png\\n'");
  NativeDialog d;
  ASSERT_TRUE(d.open(FileKind::Image, "/tmp"));
  const auto r = wait_for_answer(d);
  EXPECT_EQ(r.kind, FileKind::Image);
  EXPECT_EQ(r.paths, (std::vector<std::string>{"/a/one.png", "/b/two words.png"}));
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(d.is_open());
}

TEST(NativeDialog, CancelGivesNothingAndAFailureSaysSo) {
  {
    FakeChooser fake("exit 1");  // zenity and kdialog: 1 = cancelled
    NativeDialog d;
    ASSERT_TRUE(d.open(FileKind::Model, ""));
    const auto r = wait_for_answer(d);
    EXPECT_TRUE(r.paths.empty());
    EXPECT_TRUE(r.error.empty());
  }
  {
    FakeChooser fake("exit 5");
    NativeDialog d;
    ASSERT_TRUE(d.open(FileKind::Model, ""));
    const auto r = wait_for_answer(d);
    EXPECT_TRUE(r.paths.empty());
    EXPECT_NE(r.error.find("exit status 5"), std::string::npos) << r.error;
  }
}

TEST(NativeDialog, WithoutAChooserTheCallerFallsBack) {
  FakeChooser fake("exit 0");
  ::setenv("ATTNLAB_NO_NATIVE_DIALOG", "1", 1);
  NativeDialog d;
  EXPECT_FALSE(d.open(FileKind::Image, ""));
  ::unsetenv("ATTNLAB_NO_NATIVE_DIALOG");
}
