// The workspace file (app/gui/workspace/workspace_file.h): what the GUI saves round-trips, paths
// are written absolute and read from the file's folder, and a file that is not a
// workspace is refused with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "app/gui/workspace/workspace_file.h"

namespace fs = std::filesystem;
using attnlab::gui::parse_workspace;
using attnlab::gui::read_workspace;
using attnlab::gui::workspace_text;
using attnlab::gui::WorkspaceFile;
using attnlab::gui::write_workspace;

namespace {

struct TempFolder {
  fs::path dir;
  TempFolder() {
    dir = fs::temp_directory_path() /
          ("attnlab_ws_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string touch(const std::string& name) const {
    std::ofstream(dir / name) << "x";
    return (dir / name).string();
  }
};

}  // namespace

TEST(WorkspaceFile, RoundTripsModelsImagesEditsAndTheShownOnes) {
  TempFolder t;
  WorkspaceFile ws;
  ws.models.push_back({t.touch("a.safetensors"), "vit_small", {56, 56}, t.touch("names.txt"), 8});
  ws.models.push_back({"deit_tiny_patch16_224", "", {}, "", -1});  // a preset: not a path
  ws.images.push_back(
      {t.touch("cat.png"),
       attnlab::image::parse_edits("occlude:3,4,2,0,0,0;paste:1,1,1,2,2," + t.touch("dog.png"))});
  ws.images.push_back({t.touch("dog.png"), {}});
  ws.model = 1;
  ws.image = 0;
  const std::string path = (t.dir / "w.attnlab").string();
  write_workspace(path, ws);
  const WorkspaceFile back = read_workspace(path);
  ASSERT_EQ(back.models.size(), 2u);
  EXPECT_EQ(back.models[0].arg, ws.models[0].arg);
  EXPECT_EQ(back.models[0].preset, "vit_small");
  EXPECT_EQ(back.models[0].img_size, (std::vector<int64_t>{56, 56}));
  EXPECT_EQ(back.models[0].class_names_path, ws.models[0].class_names_path);
  EXPECT_EQ(back.models[0].merge, 8);
  EXPECT_EQ(back.models[1].arg, "deit_tiny_patch16_224");
  EXPECT_EQ(back.models[1].merge, -1);
  ASSERT_EQ(back.images.size(), 2u);
  EXPECT_EQ(back.images[0].path, ws.images[0].path);
  EXPECT_EQ(back.images[0].edits, ws.images[0].edits);
  EXPECT_TRUE(back.images[1].edits.empty());
  EXPECT_EQ(back.model, 1);
  EXPECT_EQ(back.image, 0);
}

TEST(WorkspaceFile, RelativePathsAreTakenFromTheFilesFolder) {
  TempFolder t;
  t.touch("cat.png");
  t.touch("dog.png");
  const std::string text = R"({"format": "attnlab workspace 1",
    "images": [{"image": "cat.png", "edits": "paste:0,0,1,0,0,dog.png"}]})";
  const WorkspaceFile ws = parse_workspace(text, (t.dir / "w.attnlab").string());
  ASSERT_EQ(ws.images.size(), 1u);
  EXPECT_EQ(ws.images[0].path, (t.dir / "cat.png").string());
  ASSERT_EQ(ws.images[0].edits.size(), 1u);
  EXPECT_EQ(ws.images[0].edits[0].source, (t.dir / "dog.png").string());
}

TEST(WorkspaceFile, RefusesWhatIsNotAWorkspaceWithTheReason) {
  const auto why = [](const std::string& text) {
    try {
      parse_workspace(text, "w.attnlab");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(why("not json").find("not a JSON object"), std::string::npos);
  EXPECT_NE(why(R"({"format": "attnlab gui settings 1"})").find("not an attnlab workspace"),
            std::string::npos);
  EXPECT_NE(why(R"({"format": "attnlab workspace 1", "images": [{"image": "a.png",
            "edits": "smudge:1,1,1"}]})")
                .find("smudge"),
            std::string::npos);
  EXPECT_NE(
      why(R"({"format": "attnlab workspace 1", "models": [{"preset": "x"}]})").find("wrong shape"),
      std::string::npos);
  EXPECT_NE(why(R"({"format": "attnlab workspace 1", "models": [{"model": "m", "img_size": [0]}]})")
                .find("img_size"),
            std::string::npos);
  EXPECT_NE(why(R"({"format": "attnlab workspace 1", "models": [{"model": "m", "merge": -2}]})")
                .find("token merging's r"),
            std::string::npos);
  EXPECT_EQ(why(R"({"format": "attnlab workspace 1"})"), "accepted");  // empty is fine
}

TEST(WorkspaceFile, AMissingFileNamesIt) {
  try {
    read_workspace("/nonexistent/w.attnlab");
    FAIL() << "read a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/w.attnlab"), std::string::npos);
  }
}
