// The GUI's routing of opened paths by extension (app/gui/workspace/file_kinds).
#include "app/gui/workspace/file_kinds.h"

#include <gtest/gtest.h>

using attnlab::gui::classify_path;
using attnlab::gui::FileKind;

TEST(FileKinds, ImagesByExtensionAnyCase) {
  EXPECT_EQ(classify_path("/data/cat.png"), FileKind::Image);
  EXPECT_EQ(classify_path("IMG_0001.JPG"), FileKind::Image);
  EXPECT_EQ(classify_path("scan.tiff"), FileKind::Image);
}

TEST(FileKinds, CheckpointsAndModelConfigsAreModels) {
  EXPECT_EQ(classify_path("runs/deit.safetensors"), FileKind::Model);
  EXPECT_EQ(classify_path("litv2_s.pth"), FileKind::Model);
  EXPECT_EQ(classify_path("configs/deit_1024.JSON"), FileKind::Model);
}

TEST(FileKinds, SavedWorkspaces) {
  EXPECT_EQ(classify_path("runs/figure3.attnlab"), FileKind::Workspace);
  EXPECT_EQ(classify_path("W.ATTNLAB"), FileKind::Workspace);
  EXPECT_EQ(classify_path("attnlab"), FileKind::Unknown);  // a name, not an extension
}

TEST(FileKinds, AnythingElseIsUnknown) {
  EXPECT_EQ(classify_path("notes.txt"), FileKind::Unknown);
  EXPECT_EQ(classify_path("no_extension"), FileKind::Unknown);
  EXPECT_EQ(classify_path("dir.png/file"), FileKind::Unknown);  // the dot is in a folder name
}
