// `attnlab report` end to end: --demo on a small subset (every zoo model, one image,
// Castling's series) produces every figure kind in every format, the SVG and PDF parse,
// index.html shows every figure with its caption; a failing image or model is reported
// and the rest is still written; usage errors write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::run_cli;

std::string asset(const std::string& rel) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/assets/" + rel;
}

std::string read_text(const fs::path& p) {
  return attnlab::testing::read_text(p.string());
}

// Figure stems (file names without extension) in <dir>/figures, and their extensions.
std::map<std::string, std::set<std::string>> figures_in(const fs::path& dir) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : fs::directory_iterator(dir / "figures"))
    out[e.path().stem().string()].insert(e.path().extension().string());
  return out;
}

bool has_tool(const char* name) {
  return std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0;
}

TEST(ReportCli, DemoSubsetProducesEveryFigureKind) {
  attnlab::testing::TempDir dir("report_demo");
  const std::string out = dir.file("r");
  const auto r =
      run_cli("report --demo --images " + asset("fashion-mnist/09-ankle-boot-00000.png") +
              " --out " + out + " --formats svg,pdf,png --dpi 72");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto figs = figures_in(out);
  for (const char* kind :
       {"head_maps__", "layers_heads__", "rollout__", "compare__", "hilo_spectra__", "rank__",
        "anchors__", "castling_mask__", "locality", "channel_maps__", "complexity__", "map_rank",
        "outliers", "outlier_positions__", "cka", "cka__models", "entropy",
        // the opt-in analyses, which the demo runs too
        "erf", "head_importance",
        // every per-layer statistic over Castling's checkpoint series, not only its mask
        "entropy__castling_series", "map_rank__castling_series", "outliers__castling_series",
        "locality__castling_series", "rank__castling_series", "hilo_spectra__castling_series"}) {
    bool found = false;
    for (const auto& [stem, exts] : figs) {
      if (stem.rfind(kind, 0) != 0) continue;
      found = true;
      EXPECT_EQ(exts, (std::set<std::string>{".pdf", ".png", ".svg"})) << stem;
    }
    EXPECT_TRUE(found) << "no " << kind << " figure";
  }
  // Every model of the zoo (every mechanism and the Swin backbone) has its maps, and the
  // statistics of analyze are there.
  std::vector<std::string> zoo_models;
  {
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/zoo.json");
    const nlohmann::json index = nlohmann::json::parse(in);
    for (const auto& m : index["models"])
      zoo_models.push_back(m["name"].get<std::string>());
  }
  EXPECT_GE(zoo_models.size(), 14u);
  for (const std::string& model : zoo_models) {
    EXPECT_TRUE(figs.count(std::string("head_maps__") + model + "__09-ankle-boot-00000")) << model;
    EXPECT_TRUE(fs::exists(fs::path(out) / "stats" / (model + "__settings.json"))) << model;
    EXPECT_TRUE(fs::exists(fs::path(out) / "stats" / (model + "__locality_heads.csv"))) << model;
    EXPECT_TRUE(fs::exists(fs::path(out) / "stats" / (model + "__rank_heads.csv"))) << model;
  }
  EXPECT_TRUE(fs::exists(fs::path(out) / "stats" / "castling_series__mask_heads_series.csv"));
  // The index shows every figure, each with a caption.
  const std::string index = read_text(fs::path(out) / "index.html");
  for (const auto& [stem, exts] : figs)
    EXPECT_NE(index.find("figures/" + stem + ".png"), std::string::npos) << stem;
  EXPECT_NE(index.find("<figcaption>"), std::string::npos);
  EXPECT_EQ(index.find("Not everything could be made"), std::string::npos) << index;
  // Vector outputs parse and carry their labels.
  const fs::path svg = fs::path(out) / "figures" / "rollout__hilo__09-ankle-boot-00000.svg";
  EXPECT_NE(read_text(svg).find(">rollout<"), std::string::npos);
  if (has_tool("xmllint")) {
    EXPECT_EQ(std::system(("xmllint --noout '" + svg.string() + "'").c_str()), 0);
  }
  const fs::path pdf = fs::path(out) / "figures" / "compare__09-ankle-boot-00000.pdf";
  if (has_tool("pdftotext")) {
    EXPECT_EQ(std::system(("pdftotext '" + pdf.string() + "' - | grep -q castling").c_str()), 0);
  }
}

TEST(ReportCli, ClsTokenModelsGetPrefixTokenMaps) {
  attnlab::testing::TempDir dir("report_cls");
  const std::string out = dir.file("r");
  const auto r = run_cli("report --models " + attnlab::testing::parity_dir() +
                         "/deit_mini.safetensors --images " + asset("demo.png") + " --out " + out +
                         " --formats png --dpi 60");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto figs = figures_in(out);
  EXPECT_TRUE(figs.count("prefix_maps__cls__deit_mini__demo")) << r.out;
  EXPECT_TRUE(figs.count("rollout__deit_mini__demo"));  // the cls row's rollout
  EXPECT_FALSE(figs.count("compare__demo"));            // one model: nothing to compare
}

// CSV rows as cells (no quoting in these tables).
std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_text(p));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CSV lines end in CRLF
    std::vector<std::string> cells;
    std::stringstream cs(line);
    for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

// CKA between models: a model against itself gives its own CKA between layers (and 1 on
// the diagonal); two models give every pair of their layers, in [0, 1].
TEST(ReportCli, CkaBetweenModels) {
  attnlab::testing::TempDir dir("report_cka");
  const std::string zoo = std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/";
  const std::string images = " --images " + asset("fashion-mnist/09-ankle-boot-00000.png") + " " +
                             asset("fashion-mnist/00-t-shirt-top-00019.png");
  const std::string out = dir.file("self");
  auto r = run_cli("report --models " + zoo + "softmax.safetensors " + zoo +
                   "softmax.safetensors" + images + " --analyses cka --complexity-scales none "
                   "--formats png --dpi 60 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto cross = csv_rows(fs::path(out) / "stats" / "models__cka_models.csv");
  const auto own = csv_rows(fs::path(out) / "stats" / "softmax__cka_layers.csv");
  ASSERT_EQ(cross.size(), 17u);  // header + 4 × 4 layers
  ASSERT_EQ(own.size(), 17u);
  EXPECT_EQ(cross[0], (std::vector<std::string>{"model_a", "layer_a", "model_b", "layer_b", "cka"}));
  for (size_t i = 1; i < cross.size(); ++i) {
    // Row order: layer_a then layer_b in both tables.
    ASSERT_EQ(cross[i][1], own[i][0]);
    ASSERT_EQ(cross[i][3], own[i][1]);
    // One in float64 from the summed HSICs, the other through float32 mean arrays.
    EXPECT_NEAR(std::stod(cross[i][4]), std::stod(own[i][3]), 1e-5) << i;
    if (cross[i][1] == cross[i][3]) {
      EXPECT_NEAR(std::stod(cross[i][4]), 1.0, 1e-9);
    }
  }
  EXPECT_TRUE(figures_in(out).count("cka__models"));

  const std::string two = dir.file("two");
  r = run_cli("report --models " + zoo + "softmax.safetensors " + zoo + "hilo.safetensors" +
              images + " --analyses cka --complexity-scales none --formats png --dpi 60 --out " +
              two);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto pairs = csv_rows(fs::path(two) / "stats" / "models__cka_models.csv");
  ASSERT_EQ(pairs.size(), 17u);
  for (size_t i = 1; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i][0], "softmax");
    EXPECT_EQ(pairs[i][2], "hilo");
    const double v = std::stod(pairs[i][4]);
    EXPECT_GT(v, -0.05) << i;  // unbiased: may dip just below 0, never far
    EXPECT_LE(v, 1.0 + 1e-9) << i;
  }
}

TEST(ReportCli, AModelConfigGivesTheUntrainedModel) {
  attnlab::testing::TempDir dir("report_config");
  const std::string config = dir.file("tiny_vit.json");
  std::ofstream(config) << R"({"arch": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16,
                               "depth": 2, "num_heads": 2, "num_classes": 10})";
  const std::string out = dir.file("r");
  const auto r = run_cli("report --models " + config + " --images " + asset("demo.png") +
                         " --out " + out + " --formats png --dpi 60");
  ASSERT_EQ(r.code, 0) << r.out;
  // Named for what it is: the config's stem, marked as random weights.
  EXPECT_TRUE(figures_in(out).count("head_maps__tiny_vit_random__demo")) << r.out;
  // A .json that is not a model config is refused with the reason.
  const std::string other = dir.file("settings.json");
  std::ofstream(other) << R"({"colormap": "viridis"})";
  const auto bad = run_cli("report --models " + other + " --images " + asset("demo.png") +
                           " --out " + dir.file("r2") + " --formats png --dpi 60");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("settings.json"), std::string::npos) << bad.out;
}

TEST(ReportCli, FailuresAreReportedAndTheRestIsWritten) {
  attnlab::testing::TempDir dir("report_fail");
  const std::string bad_image = dir.file("broken.png");
  std::ofstream(bad_image) << "not a png";
  const std::string bad_model = dir.file("truncated.safetensors");
  std::ofstream(bad_model) << "\x10\x00\x00\x00";
  const std::string out = dir.file("r");
  const std::string zoo = std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/";
  const auto r =
      run_cli("report --models " + zoo + "softmax.safetensors " + bad_model + " " + zoo +
              "hilo.safetensors --images " + asset("fashion-mnist/09-ankle-boot-00000.png") + " " +
              bad_image + " --out " + out + " --formats png --dpi 60");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("truncated.safetensors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("broken.png"), std::string::npos) << r.out;
  const auto figs = figures_in(out);
  EXPECT_TRUE(figs.count("head_maps__softmax__09-ankle-boot-00000"));
  EXPECT_TRUE(figs.count("head_maps__hilo__09-ankle-boot-00000"));
  EXPECT_TRUE(figs.count("compare__09-ankle-boot-00000"));
  const std::string index = read_text(fs::path(out) / "index.html");
  EXPECT_NE(index.find("Not everything could be made"), std::string::npos);
  EXPECT_NE(index.find("truncated.safetensors"), std::string::npos);
  // No temporary files are left behind.
  for (const auto& e : fs::recursive_directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(ReportCli, CostFiguresCountAndMeasureTheModels) {
  attnlab::testing::TempDir dir("report_costs");
  const std::string config = dir.file("tiny_vit.json");
  std::ofstream(config) << R"({"arch": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16,
                               "depth": 1, "num_heads": 2, "num_classes": 10,
                               "attention": "linear"})";
  const std::string out = dir.file("r");
  const auto r = run_cli("report --models " + config + " --images " + asset("demo.png") +
                         " --out " + out +
                         " --formats svg --figures complexity,attention_bench"
                         " --complexity-scales 1,2 --bench --bench-sides 2,4 --bench-repeats 1");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto figs = figures_in(out);
  for (const char* stem :
       {"complexity__macs", "attention_bench__latency", "attention_bench__memory"})
    EXPECT_TRUE(figs.count(stem)) << stem << "\n" << r.out;
  EXPECT_EQ(figs.size(), 3u);  // --figures: nothing else
  // The tables: two sizes of the model; the model's mechanism and softmax at two N.
  const std::string totals =
      read_text(fs::path(out) / "stats" / "complexity__complexity_totals.csv");
  EXPECT_NE(totals.find("tiny_vit_random,32,32"), std::string::npos) << totals;
  EXPECT_NE(totals.find("tiny_vit_random,64,64"), std::string::npos) << totals;
  const std::string bench = read_text(fs::path(out) / "stats" / "bench_cpu__attention_bench.csv");
  for (const char* row : {"softmax,2,4", "softmax,4,16", "linear,2,4", "linear,4,16"})
    EXPECT_NE(bench.find(row), std::string::npos) << row << "\n" << bench;
  const std::string index = read_text(fs::path(out) / "index.html");
  EXPECT_NE(index.find("Complexity: MACs against input size"), std::string::npos);
  EXPECT_NE(index.find("figures/attention_bench__memory.svg"), std::string::npos);
  // Without --bench the report measures nothing (it is a property of the machine).
  const std::string out2 = dir.file("r2");
  ASSERT_EQ(run_cli("report --models " + config + " --images " + asset("demo.png") + " --out " +
                    out2 + " --formats svg --figures complexity,attention_bench")
                .code,
            0);
  EXPECT_EQ(figures_in(out2).size(), 1u);
  EXPECT_FALSE(fs::exists(fs::path(out2) / "stats" / "bench_cpu__attention_bench.csv"));
  // The complexity sweep is on request (issue 51): a default report counts nothing, and
  // --complexity-scales alone asks for it.
  const auto report = [&](const std::string& dir_out, const std::string& extra) {
    return run_cli("report --models " + config + " --images " + asset("demo.png") + " --out " +
                   dir_out + " --formats svg --analyses maps" + extra);
  };
  const std::string plain = dir.file("plain"), asked = dir.file("asked");
  ASSERT_EQ(report(plain, "").code, 0);
  EXPECT_EQ(figures_in(plain).count("complexity__macs"), 0u);
  EXPECT_FALSE(fs::exists(fs::path(plain) / "stats" / "complexity__complexity_totals.csv"));
  ASSERT_EQ(report(asked, " --complexity-scales 1,2").code, 0);
  EXPECT_EQ(figures_in(asked).count("complexity__macs"), 1u);
  EXPECT_TRUE(fs::exists(fs::path(asked) / "stats" / "complexity__complexity_totals.csv"));
}

TEST(ReportCli, UsageErrorsWriteNothing) {
  attnlab::testing::TempDir dir("report_usage");
  const std::string out = dir.file("r");
  EXPECT_EQ(run_cli("report --images " + asset("demo.png") + " --out " + out).code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --formats svg,jpg").code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --dpi 5").code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --colormap nosuchmap").code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --complexity-scales 0").code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --complexity-scales 1,x").code, 2);
  EXPECT_EQ(run_cli("report --demo --out " + out + " --bench-sides 14").code, 2);  // no --bench
  EXPECT_EQ(run_cli("report --demo --out " + out + " --bench --bench-sides 0").code, 2);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
