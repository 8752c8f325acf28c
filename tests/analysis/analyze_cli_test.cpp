// `attnlab analyze` and `analyze-series` end to end on the fixture checkpoints: the output
// folder is complete and self-describing (the sidecar lists every file, each file exists
// and parses back), each backbone family gets its own analyses (anchors, HiLo branches,
// Castling masks), bad images are skipped without losing the others, and usage errors are
// refused before anything is written.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/analysis/export.h"
#include "core/io/npy.h"
#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::parity_dir;
using attnlab::testing::run_cli;

std::string demo_image() {
  return std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

using attnlab::testing::read_text;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every file the sidecar lists exists and parses; returns the listed names.
std::vector<std::string> check_folder(const std::string& dir, const std::string& model) {
  const nlohmann::json side = read_json(dir + "/" + model + "__settings.json");
  std::vector<std::string> names;
  for (const auto& f : side.at("files")) {
    const std::string name = f.at("file").get<std::string>();
    names.push_back(name);
    const std::string path = dir + "/" + name;
    EXPECT_TRUE(fs::exists(path)) << path;
    EXPECT_FALSE(f.at("caption").get<std::string>().empty()) << name;
    if (ends_with(name, ".csv")) {
      const auto t = attnlab::analysis::read_table_csv(path);
      EXPECT_EQ(t.rows.size(), f.at("rows").get<size_t>()) << name;
    } else if (ends_with(name, ".npy")) {
      const auto a = attnlab::io::read_npy(path);
      EXPECT_EQ(a.shape, f.at("shape").get<std::vector<int64_t>>()) << name;
    } else if (ends_with(name, ".json")) {
      EXPECT_NO_THROW(attnlab::analysis::read_table_json(path)) << name;
    }
  }
  // Nothing else (no temporaries) lies in the folder.
  size_t on_disk = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++on_disk;
  EXPECT_EQ(on_disk, names.size() + 1);  // + the sidecar
  return names;
}

bool listed(const std::vector<std::string>& names, const std::string& part) {
  for (const auto& n : names)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(AnalyzeCli, DeitMiniWritesACompleteSelfDescribingFolder) {
  const std::string out = attnlab::testing::unique_temp_path("deit");
  const std::string ckpt = parity_dir() + "/deit_mini.safetensors";
  const auto r = run_cli("analyze --model " + ckpt + " --images " + demo_image() + " " +
                         demo_image() + " --out " + out + " --query 3,4");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto names = check_folder(out, "deit_mini");
  for (const char* part :
       {"deit_mini__rank_heads.csv", "deit_mini__rank_layers.tex", "deit_mini__locality_heads.json",
        "deit_mini__maps_prefix.csv", "maps/deit_mini__maps__demo__L00__q3-4__heads.npy",
        "maps/deit_mini__maps__demo_2__L01__q3-4__fused.npy",
        "maps/deit_mini__maps__demo__L01__cls__heads.npy",
        "rollout/deit_mini__rollout__demo__q3-4.npy",  // a query was given
        "spectra/deit_mini__spectra__L01__output__log_amplitude.npy",
        "rank_sigma/deit_mini__rank_sigma__L00__output.npy"})
    EXPECT_TRUE(listed(names, part)) << part << "\n" << r.out;
  const nlohmann::json side = read_json(out + "/deit_mini__settings.json");
  EXPECT_EQ(side["model"]["checkpoint"]["sha256"], attnlab::analysis::sha256_file(ckpt));
  EXPECT_EQ(side["model"]["arch"], "vit");
  EXPECT_EQ(side["settings"]["query"]["y"], 3);
  EXPECT_NE(side["settings"]["rank"]["tolerance"].get<std::string>().find("eps"),
            std::string::npos);
  // Every rank definition with its rule, and the ambiguity rule.
  std::vector<std::string> defined;
  for (const auto& d : side["settings"]["rank"]["definitions"]) {
    defined.push_back(d["column"].get<std::string>());
    EXPECT_FALSE(d["rule"].get<std::string>().empty()) << d.dump();
  }
  EXPECT_EQ(defined,
            (std::vector<std::string>{"rank", "precision_rank", "effective_rank", "stable_rank"}));
  EXPECT_EQ(side["settings"]["rank"]["ambiguity_factor"], 4.0);
  const std::string heads_csv = read_text(out + "/deit_mini__rank_heads.csv");
  for (const char* column : {"precision_rank_mean", "precision_tolerance_mean",
                             "rank_ambiguous_mean", "precision_ambiguous_mean"})
    EXPECT_NE(heads_csv.find(column), std::string::npos) << column;
  EXPECT_EQ(side["images"].size(), 2u);
  EXPECT_EQ(side["layers"].size(), 2u);
  EXPECT_TRUE(side.contains("device") && side.contains("attnlab_version"));
  // Two images: every statistic has its mean, std and image count.
  const auto t = attnlab::analysis::read_table_csv(out + "/deit_mini__locality_heads.csv");
  EXPECT_EQ(t.rows.at(0).at(t.column("images")).i, 2);
  EXPECT_NEAR(t.rows.at(0).at(t.column("mean_distance_std")).number(), 0.0, 1e-9);  // same image
  const auto map = attnlab::io::read_npy(out + "/maps/deit_mini__maps__demo__L00__q3-4__heads.npy");
  EXPECT_EQ(map.shape, (std::vector<int64_t>{2, 14, 14}));
  fs::remove_all(out);
}

TEST(AnalyzeCli, QueryByTokenIndex) {
  const std::string out = attnlab::testing::unique_temp_path("token");
  const std::string model = "analyze --model " + parity_dir() + "/deit_mini.safetensors --images " +
                            demo_image() + " --analyses maps,rollout --out " + out;
  auto r = run_cli(model + " --query-token 0");  // the cls token, followed through the layers
  ASSERT_EQ(r.code, 0) << r.out;
  auto names = check_folder(out, "deit_mini");
  EXPECT_TRUE(listed(names, "maps__demo__L00__cls__heads")) << r.out;
  EXPECT_TRUE(listed(names, "maps__demo__L01__cls__heads")) << r.out;
  EXPECT_TRUE(listed(names, "rollout__demo__cls")) << r.out;
  fs::remove_all(out);
  r = run_cli(model + " --query-token 17");  // 1 + 16: grid row 1, column 2 of 14
  ASSERT_EQ(r.code, 0) << r.out;
  names = check_folder(out, "deit_mini");
  EXPECT_TRUE(listed(names, "maps__demo__L01__q1-2__fused")) << r.out;
  EXPECT_TRUE(listed(names, "rollout__demo__q1-2")) << r.out;
  fs::remove_all(out);
  EXPECT_EQ(run_cli(model + " --query-token 17 --query 1,2").code, 2);
}

TEST(AnalyzeCli, EveryBackboneFamilyGetsItsAnalyses) {
  struct Case {
    const char* name;
    std::vector<const char*> expected;
  };
  const std::vector<Case> cases = {
      {"litv2_mini",
       {"spectra__L00__hifi__log_amplitude", "spectra__L00__lofi__radial",
        "litv2_mini__spectra_channels.csv", "litv2_mini__rank_layers.csv",
        "gradcam/litv2_mini__gradcam__demo.npy", "gradrollout/litv2_mini__gradrollout__demo.npy"}},
      {"ravlt_mini",
       {"ravlt_mini__rank_heads.csv", "rank_sigma__L00__kv_plain", "rank_sigma__L00__output_gated",
        "spectra__L03__output__radial", "gradcam/ravlt_mini__gradcam__demo.npy",
        "gradrollout/ravlt_mini__gradrollout__demo.npy"}},
      {"anchor_deit_mini",
       {"anchors__demo__L00__hard", "anchors__demo__L01__soft",
        "anchor_deit_mini__anchors_usage.csv", "maps__demo__L01__dist__heads",
        "anchor_deit_mini__explanations.csv", "gradrollout/anchor_deit_mini__gradrollout__demo"}},
  };
  for (const auto& c : cases) {
    const std::string out = attnlab::testing::unique_temp_path(c.name);
    const auto r = run_cli("analyze --model " + parity_dir() + "/" + c.name +
                           ".safetensors --images " + demo_image() + " --out " + out);
    ASSERT_EQ(r.code, 0) << c.name << "\n" << r.out;
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
    const auto names = check_folder(out, c.name);
    for (const char* part : c.expected) EXPECT_TRUE(listed(names, part)) << c.name << ": " << part;
    fs::remove_all(out);
  }
}

// Class-specific explanations for a class the user names: Grad-CAM on the last block's
// norm1 grid and gradient rollout on the first layer's, the class in the table and the
// captions; a class the model does not have is a warning naming it, not a crash.
TEST(AnalyzeCli, ExplanationsOfAChosenClass) {
  const std::string out = attnlab::testing::unique_temp_path("explain");
  const std::string base = "analyze --model " + parity_dir() + "/deit_mini.safetensors --images " +
                           demo_image() + " --analyses gradcam,gradrollout --out " + out;
  auto r = run_cli(base + " --class 3");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto names = check_folder(out, "deit_mini");
  EXPECT_EQ(names.size(), 4u) << r.out;  // two maps, the table as CSV and JSON
  EXPECT_EQ(attnlab::io::read_npy(out + "/gradcam/deit_mini__gradcam__demo.npy").shape,
            (std::vector<int64_t>{14, 14}));
  EXPECT_EQ(attnlab::io::read_npy(out + "/gradrollout/deit_mini__gradrollout__demo.npy").shape,
            (std::vector<int64_t>{14, 14}));
  const auto t = attnlab::analysis::read_table_csv(out + "/deit_mini__explanations.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  for (const auto& row : t.rows) EXPECT_EQ(row.at(t.column("class")).i, 3);
  EXPECT_EQ(t.rows[0].at(t.column("explained")).str(), "blocks.1.norm1");
  EXPECT_EQ(t.rows[1].at(t.column("explained")).str(), "the cls row");
  const nlohmann::json side = read_json(out + "/deit_mini__settings.json");
  EXPECT_EQ(side["settings"]["options"]["class"], 3);
  fs::remove_all(out);

  r = run_cli(base + " --class 5000");
  EXPECT_NE(r.out.find("class 5000 is out of range"), std::string::npos) << r.out;
  fs::remove_all(out);
  EXPECT_EQ(run_cli(base + " --class cat").code, 2);
}

TEST(AnalyzeCli, CastlingMaskSparsity) {
  // Castling-DeiT has no released weights: untrained (seeded) weights show the mechanics.
  const std::string out = attnlab::testing::unique_temp_path("castling");
  const auto r = run_cli(
      "analyze --model castling_deit_tiny --random-init --analyses mask --layers 0,11 --images " +
      demo_image() + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t =
      attnlab::analysis::read_table_csv(out + "/castling_deit_tiny_random__mask_heads.csv");
  ASSERT_EQ(t.rows.size(), 2u * 4u);  // 2 layers × (3 heads + "all")
  for (const auto& row : t.rows) {
    const double f = row.at(t.column("fraction_mean")).number();
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    EXPECT_DOUBLE_EQ(row.at(t.column("threshold_mean")).number(), 0.02);
  }
  fs::remove_all(out);
}

// Castling's Fig. 6 data: two checkpoints (different seeds) with 'step' metadata, saved as
// safetensors with their config; analyze-series writes one block of mask rows per
// checkpoint, in order, with the step column from the metadata.
TEST(AnalyzeCli, CastlingMaskSeriesFollowsTheCheckpoints) {
  const auto& preset = attnlab::models::find_preset("castling_deit_tiny");
  std::vector<std::string> paths;
  for (int step : {100, 200}) {
    at::manual_seed(step);
    auto model = attnlab::models::make_backbone(preset.config);
    attnlab::io::TensorDict dict;
    for (const auto& p : model->named_parameters())
      dict.add(p.key(), attnlab::io::from_torch(p.value().detach()));
    for (const auto& b : model->named_buffers())
      dict.add(b.key(), attnlab::io::from_torch(b.value().detach()));
    std::map<std::string, std::string> meta;
    for (const auto& [k, v] : preset.config.items()) meta[k] = v.dump();
    meta["step"] = std::to_string(step);
    paths.push_back(attnlab::testing::unique_temp_path("castling_step" + std::to_string(step) +
                                                       ".safetensors"));
    attnlab::io::write_safetensors(paths.back(), dict, meta);
  }
  const std::string out = attnlab::testing::unique_temp_path("castling_series");
  const auto r =
      run_cli("analyze-series --checkpoints " + paths[0] + " " + paths[1] + " --images " +
              demo_image() + " --out " + out + " --analyses mask --layers 0,5" +
              // Untrained attention is near uniform (1/197 ≈ 0.0051 per entry): a
              // threshold there splits the entries, so the seeds differ.
              " --mask-threshold 0.005");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t = attnlab::analysis::read_table_csv(out + "/" + fs::path(paths[0]).stem().string() +
                                                   "_series__mask_heads_series.csv");
  ASSERT_EQ(t.rows.size(), 2u * 2u * 4u);  // 2 checkpoints × 2 layers × (3 heads + all)
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const int64_t ckpt = static_cast<int64_t>(i / 8);
    EXPECT_EQ(t.rows[i].at(t.column("checkpoint_index")).i, ckpt);
    EXPECT_EQ(t.rows[i].at(t.column("step")).i, ckpt == 0 ? 100 : 200);
  }
  // Different weights, different masks.
  EXPECT_NE(t.rows[3].at(t.column("fraction_mean")).number(),
            t.rows[11].at(t.column("fraction_mean")).number());
  fs::remove_all(out);
  for (const auto& p : paths) fs::remove(p);
}

TEST(AnalyzeCli, SeriesKeepsCheckpointOrder) {
  const std::string out = attnlab::testing::unique_temp_path("series");
  const std::string a = parity_dir() + "/deit_mini.safetensors";
  const std::string b = parity_dir() + "/deit_mini.pth";
  const auto r = run_cli("analyze-series --checkpoints " + a + " " + b + " --config " +
                         parity_dir() + "/deit_mini.config.json --images " + demo_image() +
                         " --out " + out + " --analyses locality,rank");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t =
      attnlab::analysis::read_table_csv(out + "/deit_mini_series__locality_layers_series.csv");
  ASSERT_EQ(t.rows.size(), 4u);  // 2 checkpoints × 2 layers
  EXPECT_EQ(t.rows[0].at(t.column("checkpoint_index")).i, 0);
  EXPECT_EQ(t.rows[3].at(t.column("checkpoint_index")).i, 1);
  // The same weights in two containers give the same statistics.
  EXPECT_NEAR(t.rows[0].at(t.column("mean_distance_mean")).number(),
              t.rows[2].at(t.column("mean_distance_mean")).number(), 1e-6);
  const nlohmann::json side = read_json(out + "/deit_mini_series__settings.json");
  ASSERT_EQ(side["checkpoints"].size(), 2u);
  // Each checkpoint's own hash (each is hashed from the moment the series reaches it).
  EXPECT_EQ(side["checkpoints"][0]["sha256"], attnlab::analysis::sha256_file(a));
  EXPECT_EQ(side["checkpoints"][1]["sha256"], attnlab::analysis::sha256_file(b));
  fs::remove_all(out);
}

TEST(AnalyzeCli, ABadImageIsSkippedAndTheRestWritten) {
  const std::string out = attnlab::testing::unique_temp_path("bad");
  const std::string bad = attnlab::testing::unique_temp_path("broken.png");
  std::ofstream(bad) << "not a png";
  const auto r = run_cli("analyze --model " + parity_dir() + "/deit_mini.safetensors --images " +
                         bad + " " + demo_image() + " --out " + out + " --analyses locality");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("broken.png"), std::string::npos) << r.out;
  const nlohmann::json side = read_json(out + "/deit_mini__settings.json");
  EXPECT_EQ(side["images"][0]["status"], "failed");
  EXPECT_EQ(side["images"][1]["status"], "analysed");
  check_folder(out, "deit_mini");
  fs::remove_all(out);
  fs::remove(bad);
}

// --batch 3: the images go through the model three at a time, a bad one among them is
// skipped alone, and the statistics and maps are those of one image per forward (to
// float rounding: the batch's GEMMs are blocked differently).
TEST(AnalyzeCli, BatchedImagesGiveWhatOneImagePerForwardGives) {
  const std::string bad = attnlab::testing::unique_temp_path("broken.png");
  std::ofstream(bad) << "not a png";
  const std::string photos = std::string(ATTNLAB_SOURCE_DIR) + "/assets/photos/";
  const std::string images = " --images " + photos + "chelsea.png " + bad + " " + demo_image() +
                             " " + photos + "coffee.png";
  std::map<int, std::string> outs;
  for (const int batch : {1, 3}) {
    outs[batch] = attnlab::testing::unique_temp_path("batch" + std::to_string(batch));
    const auto r = run_cli("analyze --model " + parity_dir() + "/deit_mini.safetensors" + images +
                           " --out " + outs[batch] + " --analyses maps,locality,rank --batch " +
                           std::to_string(batch));
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("broken.png"), std::string::npos) << r.out;
    const nlohmann::json side = read_json(outs[batch] + "/deit_mini__settings.json");
    EXPECT_EQ(side["images_per_forward"], batch) << side.dump(1);
    const char* expected[] = {"analysed", "failed", "analysed", "analysed"};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(side["images"][i]["status"], expected[i]) << i;
    check_folder(outs[batch], "deit_mini");
  }
  const auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-4 * std::max({1.0, std::abs(x), std::abs(y)});
  };
  for (const char* table : {"locality_heads", "rank_heads", "maps_prefix"}) {
    const auto a = attnlab::analysis::read_table_csv(outs[1] + "/deit_mini__" + table + ".csv");
    const auto b = attnlab::analysis::read_table_csv(outs[3] + "/deit_mini__" + table + ".csv");
    ASSERT_EQ(a.rows.size(), b.rows.size()) << table;
    for (size_t r = 0; r < a.rows.size(); ++r)
      for (size_t c = 0; c < a.rows[r].size(); ++c) {
        const auto &u = a.rows[r][c], &v = b.rows[r][c];
        if (u.kind == attnlab::analysis::Cell::Kind::Real)
          EXPECT_TRUE(close(u.r, v.r)) << table << " " << a.columns[c] << ": " << u.r << " vs "
                                       << v.r;
        else
          EXPECT_EQ(u.str(), v.str()) << table << " " << a.columns[c];
      }
  }
  size_t maps = 0;
  for (const auto& f : fs::recursive_directory_iterator(outs[1])) {
    if (f.path().extension() != ".npy") continue;
    const fs::path other = outs[3] / fs::relative(f.path(), outs[1]);
    ASSERT_TRUE(fs::exists(other)) << other;
    const auto a = attnlab::io::read_npy(f.path().string()), b = attnlab::io::read_npy(other);
    const at::Tensor x = attnlab::io::to_torch(a), y = attnlab::io::to_torch(b);
    EXPECT_TRUE(at::allclose(x, y, 1e-4, 1e-5)) << f.path();
    ++maps;
  }
  EXPECT_GT(maps, 3u);
  for (const auto& [batch, out] : outs) fs::remove_all(out);
  fs::remove(bad);
}

TEST(AnalyzeCli, UsageErrorsWriteNothing) {
  const std::string out = attnlab::testing::unique_temp_path("usage");
  const std::string ckpt = parity_dir() + "/deit_mini.safetensors";
  const std::string img = " --images " + demo_image() + " --out " + out;
  for (const std::string& args : {"analyze" + img, "analyze --model no_such_model" + img,
                                  "analyze --model deit_small_patch16_224" + img,
                                  "analyze --model " + ckpt + " --analyses maps,nonsense" + img,
                                  "analyze --model " + ckpt + " --query 3" + img,
                                  "analyze --model " + ckpt + " --discard 1.5" + img,
                                  "analyze --model " + ckpt + " --images " + demo_image()}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  // A layer that does not exist is found at the first forward: one clear error, no file.
  const auto r = run_cli("analyze --model " + ckpt + " --layers 7" + img);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("layer 7 does not exist"), std::string::npos) << r.out;
  if (fs::exists(out)) {
    EXPECT_TRUE(fs::is_empty(out));
  }
  fs::remove_all(out);
}

}  // namespace
