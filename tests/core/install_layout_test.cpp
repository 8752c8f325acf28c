// Where the binary finds its data (core/runtime/data_paths.h) and what --version says,
// end to end: a build folder's binary reads the source tree; the same binary placed in an
// installed layout (<prefix>/bin/attnlab beside <prefix>/share/attnlab) reads that
// instead; ATTNLAB_ZOO / ATTNLAB_ASSETS override both. scripts/test_package.sh checks
// the real .deb the same way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/support/cli_runner.h"

namespace fs = std::filesystem;

namespace {

using attnlab::testing::CliRun;
using attnlab::testing::has_line_with;

CliRun run_binary(const std::string& binary, const std::string& args) {
  // The tests' own environment must not choose the folders for them.
  return attnlab::testing::run_shell("env -u ATTNLAB_ZOO -u ATTNLAB_ASSETS " + binary + " " + args);
}

// A prefix with bin/attnlab (a hard link to the built binary: /proc/self/exe then names
// the link, as it names /usr/bin/attnlab once installed) in the build folder, so the link
// stays on one file system. Removed at the end.
struct FakePrefix {
  fs::path root;
  FakePrefix() {
    root = fs::path(ATTNLAB_BINARY).parent_path() /
           ("install-layout-test-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "bin");
    std::error_code ec;
    fs::create_hard_link(ATTNLAB_BINARY, root / "bin" / "attnlab", ec);
    if (ec) fs::copy_file(ATTNLAB_BINARY, root / "bin" / "attnlab");
  }
  ~FakePrefix() { fs::remove_all(root); }
  std::string binary() const { return (root / "bin" / "attnlab").string(); }
  fs::path share() const { return root / "share" / "attnlab"; }
};

const std::string kInstallLayoutSource = ATTNLAB_SOURCE_DIR;

TEST(InstallLayout, VersionNamesTheGitRevision) {
  const CliRun v = run_binary(ATTNLAB_BINARY, "--version");
  ASSERT_EQ(v.code, 0) << v.out;
  EXPECT_TRUE(std::regex_match(
      v.out, std::regex(R"(attnlab \d+\.\d+\.\d+ \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n)")))
      << v.out;
  EXPECT_EQ(v.out.rfind("attnlab " ATTNLAB_VERSION " (git ", 0), 0u) << v.out;
  // info starts with the same line.
  const CliRun i = run_binary(ATTNLAB_BINARY, "info");
  ASSERT_EQ(i.code, 0) << i.out;
  EXPECT_EQ(i.out.rfind(v.out, 0), 0u) << i.out;
}

TEST(InstallLayout, BuildFolderBinaryReadsTheSourceTree) {
  const CliRun r = run_binary(ATTNLAB_BINARY, "info");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(
      has_line_with(r.out, {"zoo:", (kInstallLayoutSource + "/models/zoo (source tree)").c_str()}))
      << r.out;
  EXPECT_TRUE(
      has_line_with(r.out, {"assets:", (kInstallLayoutSource + "/assets (source tree)").c_str()}))
      << r.out;
}

TEST(InstallLayout, InstalledBinaryReadsItsOwnShareFolder) {
  FakePrefix prefix;
  fs::create_directories(prefix.share() / "assets");
  fs::create_directories(prefix.share() / "zoo");
  // One zoo model and the class names: enough for `zoo` to list it from there.
  fs::copy_file(kInstallLayoutSource + "/models/zoo/softmax.safetensors",
                prefix.share() / "zoo" / "softmax.safetensors");
  const CliRun info = run_binary(prefix.binary(), "info");
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_TRUE(has_line_with(info.out, {"executable:", prefix.binary().c_str()})) << info.out;
  EXPECT_TRUE(has_line_with(info.out,
                            {"zoo:", ((prefix.share() / "zoo").string() + " (installed)").c_str()}))
      << info.out;
  EXPECT_TRUE(has_line_with(
      info.out, {"assets:", ((prefix.share() / "assets").string() + " (installed)").c_str()}))
      << info.out;
  const CliRun zoo = run_binary(prefix.binary(), "zoo");
  ASSERT_EQ(zoo.code, 0) << zoo.out;
  EXPECT_TRUE(has_line_with(zoo.out, {"softmax", "softmax"})) << zoo.out;
  EXPECT_FALSE(has_line_with(zoo.out, {"hilo"})) << "listed the source tree's zoo:\n" << zoo.out;
}

TEST(InstallLayout, PrefixWithoutShareFallsBackAndEnvironmentOverrides) {
  FakePrefix prefix;  // bin/ only: this build may still read its source tree
  const CliRun r = run_binary(prefix.binary(), "info");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"zoo:", "(source tree)"})) << r.out;
  const fs::path mine = prefix.root / "my-zoo";
  fs::create_directories(mine);
  const CliRun e = run_binary("ATTNLAB_ZOO=" + mine.string() + " " + prefix.binary(), "info");
  ASSERT_EQ(e.code, 0) << e.out;
  EXPECT_TRUE(
      has_line_with(e.out, {"zoo:", (mine.string() + " (environment (ATTNLAB_ZOO))").c_str()}))
      << e.out;
}

}  // namespace
