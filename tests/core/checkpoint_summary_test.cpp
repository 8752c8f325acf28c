// The architecture family is recognised from key names for every parity checkpoint.
#include <gtest/gtest.h>

#include <string>

#include "core/io/tensor_file.h"
#include "models/checkpoint_summary.h"
#include "tests/support/fixtures.h"

namespace attnlab::models {
namespace {

TEST(CheckpointSummary, RecognisesEachFamily) {
  const std::pair<const char*, const char*> cases[] = {
      {"deit_mini.pth", "vit"},
      {"litv2_mini.pth", "litv2"},
      {"ravlt_mini.safetensors", "ravlt"},
      {"anchor_deit_mini.pth", "anchor_deit"},
      {"castling_attn.safetensors", "unknown"},  // a bare attention module, not a backbone
  };
  for (auto [file, arch] : cases) {
    io::TensorFile f = io::read_tensor_file(attnlab::testing::parity_dir() + "/" + file);
    CheckpointSummary s = summarize_checkpoint(f);
    EXPECT_EQ(s.architecture, arch) << file;
    EXPECT_GT(s.tensor_count, 0u) << file;
    EXPECT_GT(s.parameter_count, 0) << file;
  }
}

// "DeiT with attention X": RALA's and HiLo's attention keys under top-level blocks are a
// vit, not RAVLT or LITv2 (whose blocks sit inside stages). The zoo has such models.
TEST(CheckpointSummary, DeitSkeletonWithAnyAttentionIsVit) {
  for (const char* m : {"rala", "hilo", "linear", "anchor", "softmax"}) {
    const std::string path = std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/" + m + ".safetensors";
    const CheckpointSummary s = summarize_checkpoint(io::read_tensor_file(path));
    EXPECT_EQ(s.architecture, "vit") << m;
    bool said = false;
    for (const auto& line : s.lines)
      said |= line == "model config in its metadata: vit with " + std::string(m) + " attention";
    EXPECT_TRUE(said) << m;
  }
}

TEST(CheckpointSummary, PthWeightsComeFromModelKey) {
  io::TensorFile f = io::read_tensor_file(attnlab::testing::parity_dir() + "/deit_mini.pth");
  CheckpointSummary s = summarize_checkpoint(f);
  EXPECT_EQ(s.weights_key, "model");
}

}  // namespace
}  // namespace attnlab::models
