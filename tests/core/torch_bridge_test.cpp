// RawTensor <-> at::Tensor conversions keep dtype, shape and bytes exactly; fixture
// weights arrive in LibTorch with the values the file holds.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "tests/support/fixtures.h"

namespace attnlab::io {
namespace {

TEST(TorchBridge, RoundTripEveryDType) {
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                   DType::I16, DType::I8, DType::U8, DType::Bool}) {
    RawTensor r;
    r.dtype = dt;
    r.shape = {2, 3};
    r.bytes.resize(6 * dtype_size(dt));
    for (size_t i = 0; i < r.bytes.size(); ++i)
      r.bytes[i] = uint8_t(dt == DType::Bool ? i % 2 : i * 7 + 1);
    at::Tensor t = to_torch(r);
    EXPECT_EQ(t.scalar_type(), to_scalar_type(dt));
    EXPECT_EQ(t.sizes().vec(), r.shape);
    EXPECT_TRUE(from_torch(t) == r) << dtype_name(dt);
  }
}

TEST(TorchBridge, NonContiguousTensorIsMadeContiguous) {
  at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3}).t();
  RawTensor r = from_torch(t);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(at::equal(to_torch(r), t));
}

TEST(TorchBridge, FixtureTensorsConvert) {
  SafetensorsFile f =
      read_safetensors(attnlab::testing::parity_dir() + "/deit_mini.expected.safetensors");
  const RawTensor* attn = f.tensors.find("attn.blocks.0");
  ASSERT_NE(attn, nullptr);
  at::Tensor a = to_torch(*attn);
  // Softmax probabilities: every row sums to 1.
  at::Tensor sums = a.sum(-1);
  EXPECT_TRUE(at::allclose(sums, at::ones_like(sums), 1e-5, 1e-5));
}

}  // namespace
}  // namespace attnlab::io
