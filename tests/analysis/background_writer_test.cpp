// BackgroundWriter (core/analysis/background_writer.h): every array submitted is on disk
// and listed, in submission order, once finish() returns; a write that fails is reported
// by finish() and nothing after it is written; a full queue makes the producer wait
// instead of growing without bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/analysis/background_writer.h"
#include "tests/support/temp_path.h"

namespace attnlab::analysis {
namespace {

Array small_array(const std::string& name, float value) {
  Array a;
  a.name = name;
  a.caption = "test";
  a.shape = {2, 3};
  a.axes = {"row", "col"};
  a.data.assign(6, value);
  return a;
}

TEST(BackgroundWriter, WritesEveryArrayInOrderByFinish) {
  const testing::TempDir tmp("background_writer");
  const std::string dir = tmp.path.string();
  OutputFolder folder(dir, "model");
  {
    BackgroundWriter writer(folder, /*max_queued=*/4);  // small: the producer must wait
    for (int i = 0; i < 40; ++i) writer.write_array(small_array("maps__" + std::to_string(i), float(i)));
    writer.finish();
    EXPECT_EQ(folder.files_written(), 40u);
  }
  for (int i = 0; i < 40; ++i)
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/maps/model__maps__" + std::to_string(i) +
                                                 ".npy"))
        << i;
  const std::string sidecar = folder.write_sidecar({});
  std::ifstream in(sidecar);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["files"].size(), 40u);
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(j["files"][size_t(i)]["file"], "maps/model__maps__" + std::to_string(i) + ".npy");
}

TEST(BackgroundWriter, AFailedWriteIsReportedByFinishAndStopsTheRest) {
  const testing::TempDir tmp("background_writer_fail");
  const std::string dir = tmp.path.string();
  OutputFolder folder(dir, "model");
  std::ofstream(dir + "/blocked") << "a file where the writer wants a folder";
  BackgroundWriter writer(folder);
  writer.write_array(small_array("good__0", 1));
  writer.write_array(small_array("blocked__1", 2));  // blocked/ cannot be created
  EXPECT_THROW(writer.finish(), std::exception);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/good/model__good__0.npy"));
  EXPECT_EQ(folder.files_written(), 1u);
}

// OutputFolder::write_arrays, the writer's batches: the arrays before a failing one are on
// disk and listed, the failing one and those after it are neither, and no temporary stays.
TEST(BackgroundWriter, ABatchThatFailsKeepsAndListsTheArraysBeforeTheFailure) {
  const testing::TempDir tmp("write_arrays_fail");
  const std::string dir = tmp.path.string();
  OutputFolder folder(dir, "model");
  std::ofstream(dir + "/blocked") << "a file where the writer wants a folder";
  EXPECT_THROW(folder.write_arrays({small_array("good__0", 1), small_array("good__1", 2),
                                    small_array("blocked__2", 3), small_array("good__3", 4)}),
               std::exception);
  ASSERT_EQ(folder.files_written(), 2u);
  EXPECT_EQ(folder.files()[0]["file"], "good/model__good__0.npy");
  EXPECT_EQ(folder.files()[1]["file"], "good/model__good__1.npy");
  std::vector<std::string> in_good;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/good"))
    in_good.push_back(e.path().filename().string());
  std::sort(in_good.begin(), in_good.end());
  EXPECT_EQ(in_good, (std::vector<std::string>{"model__good__0.npy", "model__good__1.npy"}));
}

}  // namespace
}  // namespace attnlab::analysis
