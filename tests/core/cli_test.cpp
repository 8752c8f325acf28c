// The `attnlab` executable end to end: --help (the whole help and each command's own),
// --version, info, mechanisms, inspect on every fixture and on a broken file (one error
// line, exit code 1, no crash), and infer reproducing every fixture's expected tensors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "app/cli/commands.h"
#include "core/io/safetensors.h"
#include "core/nn/state_loading.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace {

using attnlab::testing::CliRun;
using attnlab::testing::has_line_with;

CliRun run(const std::string& args) {
  return attnlab::testing::run_cli(args);
}

// One table (app/cli/commands.h) gives --help and the dispatch: every command in it is
// in the help text, and a word that is no command (nor a file) is refused with the list.
TEST(Cli, EveryCommandIsInTheHelpAndUnknownOnesAreListed) {
  const CliRun h = run("--help");
  ASSERT_EQ(h.code, 0);
  EXPECT_EQ(h.out, attnlab::cli::usage_text());
  for (const auto& c : attnlab::cli::commands()) {
    if (c.name.empty()) continue;
    EXPECT_NE(h.out.find("\n  " + c.name + " "), std::string::npos) << c.name;
    EXPECT_EQ(attnlab::cli::find_command(c.name), &c);
  }
  const CliRun u = run("no-such-command-or-file");
  EXPECT_EQ(u.code, 2) << u.out;
  EXPECT_NE(u.out.find("unknown command 'no-such-command-or-file' (commands: gui, inspect, info,"),
            std::string::npos)
      << u.out;
}

// stdout alone (stderr thrown away), and stderr alone: where each text goes.
attnlab::testing::CliRun stdout_of(const std::string& args) {
  return attnlab::testing::run_shell("(" ATTNLAB_BINARY " " + args + " 2>/dev/null)");
}
attnlab::testing::CliRun stderr_of(const std::string& args) {
  return attnlab::testing::run_shell("(" ATTNLAB_BINARY " " + args + " >/dev/null)");
}

// `attnlab CMD --help` and `attnlab help CMD`: that command's usage and options on stdout,
// the same text both ways, none of another command's lines; `attnlab help` and
// `attnlab --help` the whole help; an unknown command a usage error naming it.
TEST(Cli, EveryCommandAnswersItsOwnHelp) {
  for (const auto& c : attnlab::cli::commands()) {
    if (c.name.empty()) continue;
    const CliRun option = stdout_of(c.name + " --help");
    ASSERT_EQ(option.code, 0) << c.name << ": " << option.out;
    EXPECT_EQ(option.out, attnlab::cli::command_help(c.name));
    EXPECT_NE(option.out.find(c.usage.substr(0, c.usage.find('\n') + 1)), std::string::npos)
        << c.name << ":\n"
        << option.out;
    for (const auto& other : attnlab::cli::commands())
      if (!other.name.empty() && other.name != c.name) {
        EXPECT_EQ(option.out.find(other.usage.substr(0, other.usage.find('\n') + 1)),
                  std::string::npos)
            << c.name << " --help shows " << other.name << "'s usage:\n"
            << option.out;
      }
    const CliRun word = stdout_of("help " + c.name);
    EXPECT_EQ(word.code, 0) << c.name;
    EXPECT_EQ(word.out, option.out) << c.name;
  }
  // -h is --help; global options before the command change nothing.
  const std::string classify = attnlab::cli::command_help("classify");
  EXPECT_EQ(stdout_of("classify -h").out, classify);
  EXPECT_EQ(stdout_of("--threads 2 --device cpu classify --checkpoint m.pth --help").out, classify);
  // A file as the first word opens the GUI: its help is the GUI's.
  EXPECT_EQ(stdout_of(std::string(ATTNLAB_SOURCE_DIR) + "/README.md --help").out,
            attnlab::cli::command_help("gui"));
}

TEST(Cli, HelpAloneIsTheWholeHelp) {
  for (const char* args : {"--help", "-h", "help", "--threads 2 --help", "--help --version"}) {
    const CliRun h = stdout_of(args);
    EXPECT_EQ(h.code, 0) << args;
    EXPECT_EQ(h.out, attnlab::cli::usage_text()) << args;
  }
}

TEST(Cli, HelpForAnUnknownCommandIsAUsageErrorNamingIt) {
  for (const char* args : {"help frobnicate", "frobnicate --help", "frobnicate -h"}) {
    const CliRun e = stderr_of(args);
    EXPECT_EQ(e.code, 2) << args;
    EXPECT_EQ(
        e.out.rfind("attnlab: unknown command 'frobnicate' (commands: gui, inspect, info,", 0), 0u)
        << args << ": " << e.out;
    EXPECT_NE(e.out.find(", manpage, help)\n"), std::string::npos) << e.out;
    EXPECT_EQ(stdout_of(args).out, "") << args;  // nothing on stdout
  }
  const CliRun two = run("help inspect info");
  EXPECT_EQ(two.code, 2) << two.out;
  EXPECT_NE(two.out.find("help takes one command"), std::string::npos) << two.out;
}

TEST(Cli, HelpAndVersion) {
  CliRun h = run("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("inspect FILE"), std::string::npos);
  CliRun v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("attnlab " ATTNLAB_VERSION), std::string::npos);
}

TEST(Cli, Info) {
  CliRun r = run("--threads 2 info");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 CPU thread(s)"), std::string::npos) << r.out;
  // It tells the truth about the GUI this build has.
#ifdef ATTNLAB_EXPECT_GUI
  EXPECT_NE(r.out.find("gui: built"), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("gui: not built"), std::string::npos) << r.out;
#endif
}

TEST(Cli, MechanismsListsEveryRegisteredMechanismWithItsOptions) {
  CliRun r = run("mechanisms");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* name :
       {"softmax", "softmax_rope", "linear", "castling", "rala", "hilo", "anchor"})
    EXPECT_TRUE(has_line_with(r.out, {name, "\xE2\x80\x94"})) << name << "\n" << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"window", "integer", "default 2"})) << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"threshold", "default 0.02"})) << r.out;
  EXPECT_EQ(run("mechanisms extra").code, 2);
}

// The analysis registry as a user reads it: every analysis with its needs and outputs.
TEST(Cli, AnalysesListsEveryRegisteredAnalysis) {
  CliRun r = run("analyses");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* name : {"maps", "rollout", "gradcam", "gradrollout", "spectra", "rank",
                           "anchors", "mask", "locality"})
    EXPECT_TRUE(has_line_with(r.out, {name, "\xE2\x80\x94"})) << name << "\n" << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"needs:", "anchor assignment"})) << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"writes:", "rank_layers"})) << r.out;
  EXPECT_TRUE(has_line_with(r.out, {"GUI tab:", "Castling mask", "training series"})) << r.out;
  EXPECT_EQ(run("analyses extra").code, 2);
}

// `attnlab infer` on every parity fixture (weights from .pth and .safetensors; config from
// the .config.json, or from the safetensors metadata when no --config is given) writes
// every tensor of the fixture's expected file, matching it (logits max |Δ| ≤ 1e-4, other
// tensors ‖Δ‖/‖ref‖ ≤ 1e-4).
TEST(Cli, InferReproducesEveryFixturesExpectedTensors) {
  const std::string dir = attnlab::testing::parity_dir();
  for (const auto& name : attnlab::testing::parity_names()) {
    std::vector<std::string> runs = {"--checkpoint " + dir + "/" + name + ".safetensors",
                                     "--checkpoint " + dir + "/" + name + ".safetensors --config " +
                                         dir + "/" + name + ".config.json"};
    if (std::filesystem::exists(dir + "/" + name + ".pth"))
      runs.push_back("--checkpoint " + dir + "/" + name + ".pth --config " + dir + "/" + name +
                     ".config.json");
    const auto expected = attnlab::nn::read_tensor_map(dir + "/" + name + ".expected.safetensors");
    for (const auto& source : runs) {
      const std::string out = attnlab::testing::unique_temp_path(name + "_infer.safetensors");
      CliRun r = run("--device cpu infer " + source + " --input " + dir + "/" + name +
                     ".expected.safetensors --out " + out);
      ASSERT_EQ(r.code, 0) << source << "\n" << r.out;
      const auto got = attnlab::nn::read_tensor_map(out);
      std::remove(out.c_str());
      for (const auto& [key, ref] : expected) {
        if (key == "input") continue;
        ASSERT_TRUE(got.count(key)) << name << ": infer wrote no " << key << " (" << source << ")";
        const at::Tensor diff = got.at(key).to(at::kDouble) - ref.to(at::kDouble);
        if (key == "logits")
          EXPECT_LE(diff.abs().max().item<double>(), 1e-4) << name << " " << source;
        else
          EXPECT_LE(diff.norm().item<double>() / ref.to(at::kDouble).norm().item<double>(), 1e-4)
              << name << " " << key << " " << source;
      }
    }
  }
}

TEST(Cli, InferRefusesMissingInputsAndConfigs) {
  const std::string dir = attnlab::testing::parity_dir();
  EXPECT_EQ(run("infer --checkpoint " + dir + "/deit_mini.pth").code, 2);
  // A .pth carries no config: without --config / --preset its config is read from its
  // shapes, and what the weights do not hold (the heads) is said to be assumed.
  const std::string out = attnlab::testing::unique_temp_path("infer_refused.safetensors");
  CliRun r = run("infer --checkpoint " + dir + "/deit_mini.pth --input " + dir +
                 "/deit_mini.expected.safetensors --out " + out);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("recognised as a vit like deit_tiny_patch16_224"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("not in the weights: num_heads 1 (head dim 64"), std::string::npos) << r.out;
  std::filesystem::remove(out);
  // The wrong architecture for the weights: every mismatched key is named, no file written.
  r = run("infer --checkpoint " + dir + "/deit_mini.pth --config " + dir +
          "/anchor_deit_mini.config.json --input " + dir +
          "/deit_mini.expected.safetensors --out " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("dist_token"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, UsageErrors) {
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("inspect").code, 2);
  EXPECT_EQ(run("--threads zero info").code, 2);
  EXPECT_EQ(run("--threads 4abc info").code, 2);  // no silent prefix parsing
  CliRun r = run("--device cuda:7 info");
  EXPECT_NE(r.code, 0);
}

TEST(Cli, InfoListsTheDevicesAndTheEnvironmentPicksOne) {
  CliRun r = run("info");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("devices:\n  cpu "), std::string::npos) << r.out;
  // ATTNLAB_DEVICE is the default --device; the option wins over it.
  ::setenv("ATTNLAB_DEVICE", "cuda:7", 1);
  const CliRun env = run("info");
  const CliRun option = run("--device cpu info");
  ::unsetenv("ATTNLAB_DEVICE");
  EXPECT_NE(env.code, 0) << env.out;  // no 8th CUDA device here or on any test machine
  EXPECT_NE(env.out.find("cuda:7"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("ATTNLAB_DEVICE"), std::string::npos) << env.out;
  EXPECT_EQ(option.code, 0) << option.out;
  EXPECT_NE(option.out.find("device (--device cpu): cpu"), std::string::npos) << option.out;
}

TEST(Cli, InspectEveryFixture) {
  for (const auto& entry : std::filesystem::directory_iterator(attnlab::testing::parity_dir())) {
    std::string ext = entry.path().extension().string();
    if (ext != ".pth" && ext != ".safetensors") continue;
    CliRun r = run("inspect " + entry.path().string());
    EXPECT_EQ(r.code, 0) << entry.path() << "\n" << r.out;
    EXPECT_NE(r.out.find("tensors ("), std::string::npos) << r.out;
  }
  CliRun pth = run("inspect " + attnlab::testing::parity_dir() + "/deit_mini.pth");
  EXPECT_NE(pth.out.find("container keys"), std::string::npos) << pth.out;
  // 162,634 = the sum of the fixture's tensor sizes (counted independently from its
  // safetensors header).
  EXPECT_TRUE(has_line_with(
      pth.out, {"architecture (from key names): vit", "'model'", "162,634 parameters"}))
      << pth.out;
  EXPECT_TRUE(has_line_with(pth.out, {"model.blocks.0.attn.qkv.weight", "F32", "[192, 64]"}))
      << pth.out;
  CliRun st = run("inspect " + attnlab::testing::parity_dir() + "/deit_mini.safetensors");
  EXPECT_NE(st.out.find("arch = "), std::string::npos) << st.out;
}

TEST(Cli, InspectJson) {
  CliRun r = run("inspect --json " + attnlab::testing::parity_dir() + "/litv2_mini.pth");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"architecture\": \"litv2\""), std::string::npos) << r.out;
}

TEST(Cli, InspectStatsFlagsNanWeights) {
  attnlab::io::TensorDict d;
  attnlab::io::RawTensor t;
  t.dtype = attnlab::io::DType::F32;
  t.shape = {3};
  const float v[3] = {1.f, std::numeric_limits<float>::quiet_NaN(), -1.f};
  t.bytes.resize(12);
  std::memcpy(t.bytes.data(), v, 12);
  d.add("blocks.0.attn.qkv.weight", t);
  auto p = std::filesystem::temp_directory_path() / "attnlab_cli_nan.safetensors";
  attnlab::io::write_safetensors(p.string(), d);
  CliRun r = run("inspect --stats " + p.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("WARNING: 'blocks.0.attn.qkv.weight' holds NaN or Inf"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 NaN, 0 Inf"), std::string::npos) << r.out;
  CliRun j = run("inspect --json --stats " + p.string());
  EXPECT_NE(j.out.find("\"nan\": 1"), std::string::npos) << j.out;
  std::filesystem::remove(p);
}

TEST(Cli, InspectBrokenFileFailsCleanly) {
  auto p = std::filesystem::temp_directory_path() / "attnlab_cli_broken.safetensors";
  std::ofstream(p, std::ios::binary) << std::string("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":", 14);
  CliRun r = run("inspect " + p.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(p.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attnlab: error:"), std::string::npos) << r.out;
  std::filesystem::remove(p);
}

}  // namespace

namespace {

// --class-names: the user's names reach the top-5; a file naming another class count, or
// one that cannot be read, is one clear message and exit 1, with nothing written.
TEST(Cli, ClassNamesFileNamesTheTop5AndBadFilesAreRefused) {
  attnlab::testing::TempDir dir("names");
  const std::string ckpt = attnlab::testing::parity_dir() + "/deit_mini.safetensors";
  const std::string image = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const std::string ten = dir.file("ten.json");
  {
    std::ofstream out(ten);
    out << R"({"0": "class-zero", "1": "class-one", "2": "class-two", "3": "class-three",)"
        << R"( "4": "class-four", "5": "class-five", "6": "class-six", "7": "class-seven",)"
        << R"( "8": "class-eight", "9": "class-nine"})";
  }
  const CliRun ok = run("classify --checkpoint " + ckpt + " --class-names " + ten + " " + image);
  ASSERT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("class-"), std::string::npos) << ok.out;

  const std::string two = dir.file("two.txt");
  std::ofstream(two) << "cat\ndog\n";
  const CliRun wrong = run("classify --checkpoint " + ckpt + " --class-names " + two + " " + image);
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.out.find("names 2 classes, but the model has 10"), std::string::npos)
      << wrong.out;

  const std::string out = dir.file("analysis");
  const CliRun unreadable = run("analyze --model " + ckpt + " --class-names " +
                                dir.file("missing.txt") + " --images " + image + " --out " + out);
  EXPECT_EQ(unreadable.code, 1);
  EXPECT_NE(unreadable.out.find("cannot read the class names file"), std::string::npos)
      << unreadable.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  const CliRun mismatch = run("analyze --model " + ckpt + " --class-names " + two + " --images " +
                              image + " --out " + out);
  EXPECT_EQ(mismatch.code, 1);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace

namespace {

// classify over a folder into a CSV: the top-k of every readable image, streamed; a bad
// image is reported and skipped (exit 1); no CSV at all when it cannot be written.
TEST(Cli, ClassifyAFolderIntoACsvSkipsBadImages) {
  attnlab::testing::TempDir dir("classify");
  const std::string images = dir.file("images");
  std::filesystem::create_directories(images);
  const std::string demo = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  std::filesystem::copy_file(demo, images + "/a.png");
  std::filesystem::copy_file(demo, images + "/b.png");
  std::ofstream(images + "/c.png") << "not an image";
  const std::string ckpt = attnlab::testing::parity_dir() + "/deit_mini.safetensors";
  const std::string csv = dir.file("preds.csv");
  const CliRun r =
      run("classify --checkpoint " + ckpt + " --images " + images + " --out " + csv + " --top 2");
  EXPECT_EQ(r.code, 1) << r.out;  // c.png could not be read
  EXPECT_NE(r.out.find("c.png"), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2u * 2u);  // header + top-2 of a.png and b.png
  EXPECT_EQ(lines[0], "image,rank,class,name,probability");
  EXPECT_NE(lines[1].find("a.png,1,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[4].find("b.png,2,"), std::string::npos) << lines[4];
  const std::string nowhere = dir.file("no/such/folder/preds.csv");
  EXPECT_EQ(run("classify --checkpoint " + ckpt + " --images " + images + " --out " + nowhere).code,
            1);
  EXPECT_FALSE(std::filesystem::exists(nowhere));
}

}  // namespace
