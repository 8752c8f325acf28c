// --dtype end to end (issue 28): an unknown precision is a usage error; bf16 runs
// `analyze` and `report` on the CPU and says so in the sidecar, the index and on stderr;
// fp16 either runs or, where this LibTorch has no fp16 kernel on the CPU, is refused
// before anything is written, with a message naming the op.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/runtime/precision.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::run_cli;

std::string source(const std::string& rel) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/" + rel;
}

nlohmann::json dtype_cli_read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Where this LibTorch cannot run bf16 on the CPU (the probe the CLI asks says why): the
// command must be refused with that reason (exit 1, as fp16's refusal below), before
// anything is written; the test then skips with it. "" where bf16 runs.
std::string bf16_refused_as_it_should(const attnlab::testing::CliRun& r, const fs::path& out) {
  const std::string refusal =
      attnlab::runtime::precision_refusal(c10::kBFloat16, c10::Device(c10::kCPU));
  if (refusal.empty()) return "";
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(refusal), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out)) << "written though refused: " << out;
  return refusal;
}

TEST(DtypeCli, UnknownPrecisionIsAUsageError) {
  const auto r = run_cli("--dtype fp8 analyze --model " + source("models/zoo/softmax.safetensors") +
                         " --images " + source("assets/demo.png") + " --out /nonexistent");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown dtype 'fp8' (expected fp32, bf16 or fp16)"), std::string::npos)
      << r.out;
}

TEST(DtypeCli, Bf16AnalyzeSaysItsPrecision) {
  attnlab::testing::TempDir dir("dtype_analyze");
  const std::string out = dir.file("bf16");
  const auto r =
      run_cli("--device cpu --dtype bf16 analyze --model " + source("models/zoo/hilo.safetensors") +
              " --images " + source("assets/demo.png") + " --out " + out);
  if (const std::string refused = bf16_refused_as_it_should(r, out); !refused.empty())
    GTEST_SKIP() << refused;
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("weights and forward at bf16"), std::string::npos) << r.out;
  const nlohmann::json side = dtype_cli_read_json(fs::path(out) / "hilo__settings.json");
  EXPECT_EQ(side.at("dtype"), "bf16");
  EXPECT_EQ(side.at("device"), "cpu");
  EXPECT_EQ(side.at("model").at("dtype"), "bf16");
  EXPECT_NE(side.at("model").at("precision_note").get<std::string>().find("SVD"),
            std::string::npos);
  // ATTNLAB_DTYPE picks the same precision when --dtype is not given.
  const std::string by_env = dir.file("env");
  setenv("ATTNLAB_DTYPE", "bf16", 1);  // inherited by the child
  const auto e =
      run_cli("--device cpu analyze --model " + source("models/zoo/hilo.safetensors") +
              " --images " + source("assets/demo.png") + " --analyses maps --out " + by_env);
  unsetenv("ATTNLAB_DTYPE");
  ASSERT_EQ(e.code, 0) << e.out;
  EXPECT_EQ(dtype_cli_read_json(fs::path(by_env) / "hilo__settings.json").at("dtype"), "bf16");
}

TEST(DtypeCli, Bf16ReportRunsEndToEnd) {
  attnlab::testing::TempDir dir("dtype_report");
  const std::string out = dir.file("report");
  const auto r =
      run_cli("--device cpu --dtype bf16 report --models " + source("models/zoo/rala.safetensors") +
              " --images " + source("assets/fashion-mnist/09-ankle-boot-00000.png") +
              " --complexity-scales none --formats png --dpi 60 --out " + out);
  if (const std::string refused = bf16_refused_as_it_should(r, out); !refused.empty())
    GTEST_SKIP() << refused;
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string index = attnlab::testing::read_text((fs::path(out) / "index.html").string());
  EXPECT_NE(index.find("device cpu bf16"), std::string::npos);
  EXPECT_EQ(dtype_cli_read_json(fs::path(out) / "stats" / "rala__settings.json").at("dtype"),
            "bf16");
}

TEST(DtypeCli, Fp16OnTheCpuRunsOrIsRefusedNamingTheOp) {
  attnlab::testing::TempDir dir("dtype_fp16");
  const std::string out = dir.file("fp16");
  const auto r = run_cli("--device cpu --dtype fp16 analyze --model " +
                         source("models/zoo/softmax.safetensors") + " --images " +
                         source("assets/demo.png") + " --analyses maps --out " + out);
  const std::string why =
      attnlab::runtime::precision_unsupported(c10::kHalf, c10::Device(c10::kCPU));
  std::printf("fp16 on this CPU build: %s\n", why.empty() ? "supported" : why.c_str());
  if (why.empty()) {
    EXPECT_EQ(r.code, 0) << r.out;
  } else {
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("--dtype fp16 is not supported here: " + why), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("use --dtype fp32 or bf16"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out)) << "a refused run wrote " << out;
  }
}

}  // namespace

namespace {

// Training keeps fp32: a reduced --dtype is refused before anything is read.
TEST(DtypeCli, TrainRefusesAReducedPrecisionFirst) {
  const auto r = attnlab::testing::run_cli(
      "--dtype bf16 train --config /nonexistent.json "
      "--dataset fashion-mnist:train --out /nonexistent");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("train runs at fp32 (--dtype bf16"), std::string::npos) << r.out;
}

}  // namespace
