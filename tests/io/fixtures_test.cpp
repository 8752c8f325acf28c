// Every parity fixture loads in both formats, and the .pth and .safetensors of one NAME
// hold bit-identical tensors under the same names.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/io/safetensors.h"
#include "core/io/state_dict.h"
#include "core/io/tensor_file.h"
#include "tests/support/fixtures.h"

namespace attnlab::io {
namespace {

using attnlab::testing::parity_dir;

TEST(Fixtures, DirectoryExists) {
  ASSERT_TRUE(std::filesystem::is_directory(parity_dir()))
      << "shared fixtures not found at " << parity_dir() << " (set ATTNLAB_SHARED)";
}

class EveryFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFixture, SafetensorsLoadsWithMetadata) {
  for (const char* suffix : {".safetensors", ".expected.safetensors"}) {
    std::string path = parity_dir() + "/" + GetParam() + suffix;
    SafetensorsFile f = read_safetensors(path);
    EXPECT_FALSE(f.tensors.empty()) << path;
    for (const auto& e : f.tensors)
      EXPECT_EQ(e.tensor.bytes.size(), size_t(e.tensor.numel()) * dtype_size(e.tensor.dtype))
          << e.name;
  }
  SafetensorsFile weights = read_safetensors(parity_dir() + "/" + GetParam() + ".safetensors");
  EXPECT_TRUE(weights.metadata.count("arch")) << "config should be in __metadata__";
}

INSTANTIATE_TEST_SUITE_P(Parity, EveryFixture,
                         ::testing::ValuesIn(attnlab::testing::parity_names()));

class PthFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(PthFixture, PthAndSafetensorsAreBitIdentical) {
  const std::string base = parity_dir() + "/" + GetParam();
  TensorFile pth = read_tensor_file(base + ".pth");
  TensorFile st = read_tensor_file(base + ".safetensors");
  ASSERT_EQ(pth.format, FileFormat::TorchZip);
  ASSERT_EQ(st.format, FileFormat::Safetensors);
  ASSERT_EQ(pth.container.size(), 1u);
  EXPECT_EQ(pth.container[0].key, "model");
  EXPECT_EQ(pth.container[0].kind, "state dict");

  StateDict a = extract_state_dict(pth);
  StateDict b = extract_state_dict(st);
  EXPECT_EQ(a.source_key, "model");
  EXPECT_EQ(b.source_key, "");
  // The safetensors omit num_batches_tracked; the .pth state dict keeps them and the
  // loader rules drop them, so the two sides must then match name for name.
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& e : b.tensors) {
    const RawTensor* other = a.tensors.find(e.name);
    ASSERT_NE(other, nullptr) << e.name << " missing from the .pth";
    EXPECT_EQ(other->dtype, e.tensor.dtype) << e.name;
    EXPECT_EQ(other->shape, e.tensor.shape) << e.name;
    EXPECT_TRUE(other->bytes == e.tensor.bytes) << e.name << " differs in content";
  }
}

TEST_P(PthFixture, PthKeepsStateDictOrder) {
  // state dict order matters to strict loaders that report keys in reference order.
  TensorFile pth = read_tensor_file(parity_dir() + "/" + GetParam() + ".pth");
  ASSERT_FALSE(pth.tensors.empty());
  EXPECT_EQ(pth.container_key.size(), pth.tensors.size());
  EXPECT_EQ(pth.tensors.entries().front().name.rfind("model.", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(Parity, PthFixture,
                         ::testing::ValuesIn(attnlab::testing::parity_names_with_pth()));

}  // namespace
}  // namespace attnlab::io

namespace attnlab::io {
namespace {

TEST(Fixtures, MovingExtractionEqualsCopying) {
  TensorFile f = read_tensor_file(attnlab::testing::parity_dir() + "/litv2_mini.pth");
  StateDict copied = extract_state_dict(f);
  StateDict moved = extract_state_dict(std::move(f));
  ASSERT_EQ(moved.tensors.size(), copied.tensors.size());
  EXPECT_EQ(moved.dropped, copied.dropped);
  for (const auto& e : copied.tensors)
    EXPECT_TRUE(*moved.tensors.find(e.name) == e.tensor) << e.name;
}

}  // namespace
}  // namespace attnlab::io
