// TorchScript archives (torch.jit.save; how OpenAI releases CLIP): data.pkl holds the
// module tree as "__torch__.…" objects whose attributes BUILD sets. attnlab reads their
// tensors as data, named by attribute path like a state dict, and never runs anything:
// the archive's code/ would create a marker file if it were executed, and torch.jit's
// other functions stay refused.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/io/state_dict.h"
#include "core/io/tensor_file.h"
#include "tests/support/archive_builder.h"
#include "tests/support/temp_path.h"

namespace attnlab::io {
namespace {

using attnlab::testing::Bytes;
using attnlab::testing::PickleWriter;
using attnlab::testing::ShapedTensor;

ShapedTensor floats(const std::string& name, std::vector<int> shape, float first) {
  ShapedTensor t;
  t.name = name;
  t.shape = std::move(shape);
  int n = 1;
  for (int s : t.shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = first + float(i);
  t.bytes = attnlab::testing::float_bytes(v);
  return t;
}

TEST(TorchScript, TheModuleTreeReadsAsAStateDictAndNothingRuns) {
  const std::string marker = attnlab::testing::unique_temp_path("torchscript_ran");
  std::filesystem::remove(marker);
  const std::vector<ShapedTensor> tensors = {
      floats("visual.conv1.weight", {2, 3}, 1.0f),
      floats("visual.transformer.resblocks.0.attn.in_proj_weight", {3, 2}, 10.0f),
      floats("logit_scale", {}, 4.5f),
  };
  const Bytes zip = attnlab::testing::make_torchscript(tensors, marker);
  TensorFile f = parse_tensor_file(ByteView(zip.data(), zip.size()), "ViT-B-16.pt");
  ASSERT_EQ(f.tensors.size(), 3u);
  for (const ShapedTensor& t : tensors) {
    const RawTensor* r = f.tensors.find(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    EXPECT_EQ(r->shape, std::vector<int64_t>(t.shape.begin(), t.shape.end())) << t.name;
    ASSERT_EQ(r->bytes.size(), t.bytes.size()) << t.name;
    EXPECT_EQ(std::memcmp(r->bytes.data(), t.bytes.data(), t.bytes.size()), 0) << t.name;
  }
  // The weights are the flat state dict the loaders take.
  const StateDict sd = extract_state_dict(f, "");
  EXPECT_EQ(sd.source_key, "");
  EXPECT_EQ(sd.tensors.size(), 3u);
  bool said = false;
  for (const std::string& n : f.notes) {
    said |= n.find("a TorchScript archive (torch.jit.save)") != std::string::npos &&
            n.find("nothing in its code/ was run") != std::string::npos;
    EXPECT_EQ(n.find("skipped __torch__"), std::string::npos) << "modules are read, not skipped";
  }
  EXPECT_TRUE(said);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the archive's code ran";
}

// Only torch.jit._pickle's data builders are read; anything else of torch.jit is refused.
TEST(TorchScript, OtherTorchJitFunctionsStayRefused) {
  const Bytes pkl = PickleWriter()
                        .proto()
                        .global("torch.jit", "load")
                        .mark()
                        .str("x.pt")
                        .tuple()
                        .reduce()
                        .stop()
                        .bytes();
  const Bytes zip = attnlab::testing::make_zip(
      {{"m/data.pkl", pkl}, {"m/constants.pkl", {0x80, 2, ')', '.'}}, {"m/version", {'3'}}});
  try {
    parse_tensor_file(ByteView(zip.data(), zip.size()), "evil.pt");
    FAIL() << "read";
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::RefusedGlobal) << e.what();
    EXPECT_NE(std::string(e.what()).find("torch.jit.load"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab::io
