// `attnlab report --embeddings` end to end (issue 70 goals 2 and 5): an embed folder of the
// zoo's softmax model on the committed Fashion-MNIST samples (class folders, --heads) gives
// the "Datasets at a glance" section (alone, and beside a model's figures): the projection
// coloured by label, prediction and correct/wrong and the head extremes as valid SVG and
// PNG, the coordinates as a CSV equal to `attnlab project`'s for the same method and seed,
// the head extremes table copied; a folder without labels says why its label figures are
// missing; damaged folders are failures (exit 1) and the rest is still written; --shard and
// stray projection options are usage errors. Every run uses --threads 1 and no Slurm array
// variables.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/image_io.h"
#include "core/io/npy.h"
#include "tests/support/cli_runner.h"
#include "tests/support/sample_tree.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::CliRun;
using attnlab::testing::copy_sample_tree;
using attnlab::testing::read_csv_cells;
using attnlab::testing::read_text;
using attnlab::testing::run_cli_single;
using attnlab::testing::TempDir;

const std::string kDatasetsRoot = ATTNLAB_SOURCE_DIR;
const std::string kDatasetsModel = kDatasetsRoot + "/models/zoo/softmax.safetensors";
const std::string kDatasetsSamples = kDatasetsRoot + "/assets/fashion-mnist";

void expect_svg(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const std::string s = read_text(p.string());
  EXPECT_NE(s.find("<svg"), std::string::npos) << p;
  EXPECT_NE(s.rfind("</svg>"), std::string::npos) << p;
}

void expect_png(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const attnlab::io::RgbImage im = attnlab::io::load_rgb_image(p.string());  // decodes it
  EXPECT_GT(im.width, 100) << p;
  EXPECT_GT(im.height, 50) << p;
}

// The report's CSV coordinates against project's .npy: the same function on the same
// float32 embeddings with the same options (one parser), so the same doubles; both are
// stored as float32 (the CSV with 9 significant digits, which read back to the same float),
// so they compare equal, bit for bit.
void expect_same_coordinates(const std::string& csv, const std::string& npy) {
  const auto rows = read_csv_cells(csv);
  const attnlab::io::RawTensor t = attnlab::io::read_npy(npy);
  ASSERT_EQ(t.shape, (std::vector<int64_t>{30, 2}));
  ASSERT_EQ(rows.size(), 31u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"row", "image", "label", "x", "y"}));
  std::vector<float> v(60);
  std::memcpy(v.data(), t.bytes.data(), 60 * sizeof(float));
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), 5u) << r;
    EXPECT_EQ(rows[r][0], std::to_string(r - 1));
    EXPECT_EQ(std::stof(rows[r][3]), v[2 * (r - 1)]) << csv << " row " << r;
    EXPECT_EQ(std::stof(rows[r][4]), v[2 * (r - 1) + 1]) << csv << " row " << r;
  }
}

TEST(ReportDatasetsCli, EmbedFolderGivesTheDatasetsAtAGlance) {
  TempDir dir("report_datasets");
  copy_sample_tree(dir.path / "data");
  const std::string embed = dir.file("e");
  const CliRun e =
      run_cli_single("embed --model " + kDatasetsModel + " --images " + dir.file("data") +
                     " --batch 8 --heads --head-examples 3 --out " + embed);
  ASSERT_EQ(e.code, 0) << e.out;
  const std::string out = dir.file("r");
  const CliRun r = run_cli_single("report --embeddings " + embed + " --out " + out +
                                  " --formats svg,png --dpi 60");
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path d = fs::path(out) / "datasets" / "e";
  for (const char* stem : {"projection_pca_label", "projection_pca_prediction",
                           "projection_pca_correct", "head_extremes"}) {
    expect_svg(d / (std::string(stem) + ".svg"));
    expect_png(d / (std::string(stem) + ".png"));
    EXPECT_FALSE(fs::exists(d / (std::string(stem) + ".pdf"))) << stem;  // --formats
  }
  EXPECT_EQ(read_text((d / "head_extremes.csv").string()), read_text(embed + "/head_extremes.csv"));
  // The coordinates: project's for the same method (and its seed, unused by PCA).
  const CliRun p =
      run_cli_single("project " + embed + " --method pca --formats svg --out " + dir.file("p"));
  ASSERT_EQ(p.code, 0) << p.out;
  expect_same_coordinates((d / "projection_pca.csv").string(), dir.file("p/projection_pca.npy"));
  // The rows are images.csv's, in order, with their labels' names.
  const auto images = read_csv_cells(embed + "/images.csv");
  const auto coords = read_csv_cells((d / "projection_pca.csv").string());
  for (size_t i = 1; i < coords.size(); ++i) {
    EXPECT_EQ(coords[i][1], images[i][1]);
    EXPECT_EQ(coords[i][2], images[i][3]);
  }
  const std::string index = read_text(out + "/index.html");
  for (const char* s :
       {"Datasets at a glance", "datasets/e/projection_pca_label.png",
        "datasets/e/projection_pca_prediction.png", "datasets/e/projection_pca_correct.png",
        "datasets/e/head_extremes.png", "datasets/e/projection_pca.csv",
        "datasets/e/head_extremes.csv", "explained variance", "pool: head", "accuracy: "})
    EXPECT_NE(index.find(s), std::string::npos) << s;
  EXPECT_EQ(index.find("Not everything could be made"), std::string::npos);

  // Beside the models' report: both sections in one index.
  const std::string both = dir.file("both");
  const CliRun b =
      run_cli_single("report --models " + kDatasetsModel + " --images " + kDatasetsSamples +
                     "/08-bag-00030.png --analyses maps " + "--embeddings " + embed + " --out " +
                     both + " --formats png --dpi 60");
  ASSERT_EQ(b.code, 0) << b.out;
  EXPECT_TRUE(fs::exists(both + "/figures/head_maps__softmax__08-bag-00030.png"));
  EXPECT_TRUE(fs::exists(both + "/datasets/e/projection_pca_label.png"));
  const std::string both_index = read_text(both + "/index.html");
  EXPECT_NE(both_index.find("figures/head_maps__softmax__08-bag-00030.png"), std::string::npos);
  EXPECT_NE(both_index.find("Datasets at a glance"), std::string::npos);

  // t-SNE with project's options (one parser): the same coordinates as project's for the
  // same seed and perplexity.
  const std::string out2 = dir.file("r2");
  const CliRun t =
      run_cli_single("report --embeddings " + embed + " --projection tsne --seed 3 " +
                     "--perplexity 5 --iterations 300 --out " + out2 + " --formats svg");
  ASSERT_EQ(t.code, 0) << t.out;
  const CliRun pt = run_cli_single("project " + embed + " --method tsne --seed 3 --perplexity 5 " +
                                   "--iterations 300 --formats svg --out " + dir.file("pt"));
  ASSERT_EQ(pt.code, 0) << pt.out;
  expect_same_coordinates(out2 + "/datasets/e/projection_tsne.csv",
                          dir.file("pt/projection_tsne.npy"));
  EXPECT_NE(read_text(out2 + "/index.html").find("perplexity 5, 300 iterations, seed 3"),
            std::string::npos);
}

// embed keeps relative image paths as given (relative to where it ran); a report started in
// another directory finds them through embed.json's working_directory
// (session::EmbeddedImagePaths) to draw the head extremes, which read the images again.
TEST(ReportDatasetsCli, RelativeImagePathsAreFoundFromAnotherDirectory) {
  TempDir dir("report_datasets_relative");
  fs::create_directories(dir.path / "work" / "imgs");
  fs::create_directories(dir.path / "elsewhere");
  int copied = 0;
  for (const auto& e : fs::directory_iterator(kDatasetsSamples))
    if (e.path().extension() == ".png" && copied < 4) {
      fs::copy_file(e.path(), dir.path / "work" / "imgs" / e.path().filename());
      ++copied;
    }
  const CliRun embed = run_cli_single(
      "embed --model " + kDatasetsModel + " --images imgs --heads --head-examples 1 --out emb", "",
      dir.file("work"));
  ASSERT_EQ(embed.code, 0) << embed.out;
  const auto images = read_csv_cells(dir.file("work/emb/images.csv"));
  ASSERT_GT(images.size(), 1u);
  EXPECT_EQ(images[1][1].rfind("imgs/", 0), 0u) << images[1][1];  // kept relative
  const CliRun r = run_cli_single("report --embeddings ../work/emb --out r --formats png --dpi 60",
                                  "", dir.file("elsewhere"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir.path / "elsewhere" / "r" / "datasets" / "emb" / "head_extremes.png"))
      << r.out;
}

TEST(ReportDatasetsCli, MissingDataAndDamagedFoldersAreSaid) {
  TempDir dir("report_datasets_bad");
  // Flat files: no labels, so no label or correct/wrong figure, and the page says why.
  fs::create_directories(dir.path / "flat");
  int copied = 0;
  for (const auto& e : fs::directory_iterator(kDatasetsSamples))
    if (e.path().extension() == ".png" && copied < 6) {
      fs::copy_file(e.path(), dir.path / "flat" / e.path().filename());
      ++copied;
    }
  const std::string good = dir.file("good");
  const CliRun e = run_cli_single("embed --model " + kDatasetsModel + " --images " +
                                  dir.file("flat") + " --out " + good);
  ASSERT_EQ(e.code, 0) << e.out;
  // Three damaged copies: no embed.json, a truncated embeddings.npy, an images.csv short of
  // a row.
  for (const char* name : {"no_json", "truncated", "short_csv"})
    fs::copy(good, dir.path / name, fs::copy_options::recursive);
  fs::remove(dir.path / "no_json" / "embed.json");
  fs::resize_file(dir.path / "truncated" / "embeddings.npy",
                  fs::file_size(dir.path / "truncated" / "embeddings.npy") - 100);
  {
    const std::string csv = read_text(dir.file("short_csv/images.csv"));
    const size_t last = csv.rfind('\n', csv.size() - 2);
    std::ofstream(dir.file("short_csv/images.csv"), std::ios::trunc) << csv.substr(0, last + 1);
  }
  const std::string out = dir.file("r");
  const CliRun r = run_cli_single("report --embeddings " + good + " " + dir.file("no_json") + " " +
                                  dir.file("truncated") + " " + dir.file("short_csv") + " --out " +
                                  out + " --formats png --dpi 60");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no_json/embed.json is missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("truncated/embeddings.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 embeddings but 5 rows"), std::string::npos) << r.out;
  const std::string index = read_text(out + "/index.html");
  EXPECT_NE(index.find("Not everything could be made"), std::string::npos);
  for (const char* name : {"no_json", "truncated", "short_csv"})
    EXPECT_NE(index.find("embeddings " + dir.file(name) + ": "), std::string::npos) << name;
  // The good folder is still drawn: by prediction only, and the page says why.
  EXPECT_TRUE(fs::exists(fs::path(out) / "datasets" / "good" / "projection_pca_prediction.png"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "datasets" / "good" / "projection_pca_label.png"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "datasets" / "good" / "projection_pca_correct.png"));
  EXPECT_NE(index.find("No figure by label: no image has a label"), std::string::npos);
  EXPECT_NE(index.find("No correct/wrong figure"), std::string::npos);
  EXPECT_NE(index.find("No head extremes: the folder was embedded without --heads"),
            std::string::npos);

  // Usage errors write nothing.
  const std::string none = dir.file("none");
  EXPECT_EQ(run_cli_single("report --embeddings " + good + " --shard 1/2 --out " + none).code, 2);
  EXPECT_EQ(run_cli_single("report --embeddings " + good + " --perplexity -1 --out " + none).code,
            2);
  EXPECT_EQ(run_cli_single("report --embeddings " + good + " --projection pcb --out " + none).code,
            2);
  EXPECT_EQ(run_cli_single("report --models " + kDatasetsModel + " --images " + kDatasetsSamples +
                           " --projection tsne --out " + none)
                .code,
            2);
  EXPECT_FALSE(fs::exists(none));
}

}  // namespace
