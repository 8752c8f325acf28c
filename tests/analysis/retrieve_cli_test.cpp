// `attnlab retrieve` end to end (issue 70 goal 4, patch retrieval): the 30 committed
// Fashion-MNIST samples embedded with --pool tokens by the softmax zoo model, then one patch
// retrieved. Without --exclude-self the best match is the query patch itself, scoring 1;
// with it no match comes from the query's image; --out writes k rows; an image named by
// its file instead of its row gives the same answer; a folder of pooled embeddings, a
// patch outside the grid and a row outside the folder are usage errors (exit 2). Every run
// uses --threads 1.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

using attnlab::testing::CliRun;
using attnlab::testing::read_csv_cells;
using attnlab::testing::read_text;
using attnlab::testing::run_cli_single;
using attnlab::testing::TempDir;

const std::string kRetrieveRoot = ATTNLAB_SOURCE_DIR;
const std::string kRetrieveSoftmax = kRetrieveRoot + "/models/zoo/softmax.safetensors";
const std::string kRetrieveSamples = kRetrieveRoot + "/assets/fashion-mnist";

// Cosines of 128 float32 features: within (128 + 2)·2^-24 of the exact value
// (core/retrieval/top_k.h); the query with itself is exactly 1 up to that.
const double kRetrieveTolerance = 130.0 * std::ldexp(1.0, -24);

TEST(RetrieveCli, APatchFindsItselfFirstAndOtherImagesWhenExcluded) {
  TempDir dir("retrieve");
  const std::string tokens = dir.file("tokens");
  const CliRun e = run_cli_single("embed --model " + kRetrieveSoftmax + " --images " +
                                  kRetrieveSamples + " --pool tokens --out " + tokens);
  ASSERT_EQ(e.code, 0) << e.out;
  const nlohmann::json meta = nlohmann::json::parse(read_text(tokens + "/embed.json"));
  ASSERT_EQ(meta.at("grid").at("height"), 14);
  ASSERT_EQ(meta.at("grid").at("width"), 14);

  // Image row 4, patch (6, 9): itself first, score 1.
  const CliRun r = run_cli_single("retrieve " + tokens + " --image 4 --patch 6,9 --k 12 --out " +
                                  dir.file("self.csv"));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto self = read_csv_cells(dir.file("self.csv"));
  ASSERT_EQ(self.size(), 13u) << r.out;  // header + k rows
  EXPECT_EQ(self[0], (std::vector<std::string>{"rank", "score", "image_index", "image",
                                               "label_name", "patch_y", "patch_x"}));
  EXPECT_EQ(self[1][0], "1");
  EXPECT_EQ(self[1][2], "4");
  EXPECT_EQ(self[1][5], "6");
  EXPECT_EQ(self[1][6], "9");
  EXPECT_NEAR(std::stod(self[1][1]), 1.0, kRetrieveTolerance);
  // The listing says the same: its first row is the query patch.
  EXPECT_TRUE(attnlab::testing::has_line_with(r.out, {"    1 ", " 4 ", "6,9"})) << r.out;
  double previous = 2;
  for (size_t i = 1; i < self.size(); ++i) {
    EXPECT_EQ(self[i][0], std::to_string(i));
    const double s = std::stod(self[i][1]);
    EXPECT_LE(s, previous) << "scores descend";
    previous = s;
  }

  // --exclude-self: none of image 4, k rows, scores below the query's own.
  const CliRun x =
      run_cli_single("retrieve " + tokens + " --image 4 --patch 6,9 --k 12 --exclude-self --out " +
                     dir.file("others.csv"));
  ASSERT_EQ(x.code, 0) << x.out;
  const auto others = read_csv_cells(dir.file("others.csv"));
  ASSERT_EQ(others.size(), 13u) << x.out;
  for (size_t i = 1; i < others.size(); ++i) {
    EXPECT_NE(others[i][2], "4") << "row " << i;
    EXPECT_LT(std::stod(others[i][1]), 1.0 - kRetrieveTolerance);
    const int y = std::stoi(others[i][5]), xx = std::stoi(others[i][6]);
    EXPECT_TRUE(y >= 0 && y < 14 && xx >= 0 && xx < 14);
  }

  // The image by its file name instead of its row: the same answer.
  const std::string name = self[1][3].substr(self[1][3].rfind('/') + 1);
  const CliRun n =
      run_cli_single("retrieve " + tokens + " --image " + name +
                     " --patch 6,9 --k 12 --exclude-self --out " + dir.file("named.csv"));
  ASSERT_EQ(n.code, 0) << n.out;
  EXPECT_EQ(read_text(dir.file("named.csv")), read_text(dir.file("others.csv")));

  // Usage errors: a patch outside the grid, a row outside the folder, a bad --patch.
  const CliRun outside = run_cli_single("retrieve " + tokens + " --image 4 --patch 14,0");
  EXPECT_EQ(outside.code, 2) << outside.out;
  EXPECT_NE(outside.out.find("patch (14, 0) is outside the 14x14 grid"), std::string::npos)
      << outside.out;
  const CliRun negative = run_cli_single("retrieve " + tokens + " --image 4 --patch 3,-1");
  EXPECT_EQ(negative.code, 2) << negative.out;
  const CliRun row = run_cli_single("retrieve " + tokens + " --image 30 --patch 1,1");
  EXPECT_EQ(row.code, 2) << row.out;
  EXPECT_NE(row.out.find("--image 30 is not a row"), std::string::npos) << row.out;
  const CliRun malformed = run_cli_single("retrieve " + tokens + " --image 4 --patch 6");
  EXPECT_EQ(malformed.code, 2) << malformed.out;
  EXPECT_NE(malformed.out.find("--patch wants Y,X"), std::string::npos) << malformed.out;
}

TEST(RetrieveCli, PooledEmbeddingsAreRefusedWithTheCommandToRun) {
  TempDir dir("retrieve_pooled");
  const std::string pooled = dir.file("mean");
  const CliRun e = run_cli_single("embed --model " + kRetrieveSoftmax + " --images " +
                                  kRetrieveSamples + " --limit 3 --pool mean --out " + pooled);
  ASSERT_EQ(e.code, 0) << e.out;
  const CliRun r =
      run_cli_single("retrieve " + pooled + " --image 0 --patch 1,1 --out " + dir.file("x.csv"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("embeddings pooled 'mean'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run `attnlab embed ... --pool tokens`"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.csv")));
  // Not an embed folder at all.
  const CliRun none = run_cli_single("retrieve " + dir.file("nothing") + " --image 0 --patch 1,1");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_NE(none.out.find("has no embed.json"), std::string::npos) << none.out;
}

}  // namespace
