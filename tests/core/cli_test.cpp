// The `attnlab` executable end to end: --help, --version, info, and inspect on every
// fixture and on a broken file (one error line, exit code 1, no crash).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/fixtures.h"

namespace {

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& args) {
  std::string cmd = std::string(ATTNLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Run r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Cli, HelpAndVersion) {
  Run h = run("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("inspect FILE"), std::string::npos);
  Run v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("attnlab " ATTNLAB_VERSION), std::string::npos);
}

TEST(Cli, Info) {
  Run r = run("--threads 2 info");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 CPU thread(s)"), std::string::npos) << r.out;
}

TEST(Cli, UsageErrors) {
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("inspect").code, 2);
  EXPECT_EQ(run("--threads zero info").code, 2);
  Run r = run("--device cuda:7 info");
  EXPECT_NE(r.code, 0);
}

TEST(Cli, InspectEveryFixture) {
  for (const auto& entry : std::filesystem::directory_iterator(attnlab::testing::parity_dir())) {
    std::string ext = entry.path().extension().string();
    if (ext != ".pth" && ext != ".safetensors") continue;
    Run r = run("inspect " + entry.path().string());
    EXPECT_EQ(r.code, 0) << entry.path() << "\n" << r.out;
    EXPECT_NE(r.out.find("tensors ("), std::string::npos) << r.out;
  }
  Run pth = run("inspect " + attnlab::testing::parity_dir() + "/deit_mini.pth");
  EXPECT_NE(pth.out.find("container keys"), std::string::npos) << pth.out;
  EXPECT_NE(pth.out.find("model.blocks.0.attn.qkv.weight F32   [192, 64]"), std::string::npos) << pth.out;
  Run st = run("inspect " + attnlab::testing::parity_dir() + "/deit_mini.safetensors");
  EXPECT_NE(st.out.find("arch = "), std::string::npos) << st.out;
}

TEST(Cli, InspectJson) {
  Run r = run("inspect --json " + attnlab::testing::parity_dir() + "/litv2_mini.pth");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"architecture\": \"litv2\""), std::string::npos) << r.out;
}

TEST(Cli, InspectBrokenFileFailsCleanly) {
  auto p = std::filesystem::temp_directory_path() / "attnlab_cli_broken.safetensors";
  std::ofstream(p, std::ios::binary) << std::string("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":", 14);
  Run r = run("inspect " + p.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(p.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attnlab: error:"), std::string::npos) << r.out;
  std::filesystem::remove(p);
}

}  // namespace
