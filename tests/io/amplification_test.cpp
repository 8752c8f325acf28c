// Small files must not make the reader allocate or walk without bound: a zip entry that
// declares far more than deflate can produce, a stride-0 view that materialises
// gigabytes from a 4-byte storage, containers shared into 2^30 paths, and one tensor
// listed ten thousand times. (fuzz_pth reached 2.8 GB of memory from 64 KB inputs
// before these guards.)
#include <gtest/gtest.h>

#include <algorithm>

#include "core/io/tensor_file.h"
#include "tests/support/archive_builder.h"

namespace attnlab::io {
namespace {

using attnlab::testing::Bytes;
using attnlab::testing::make_zip;
using attnlab::testing::PickleWriter;
using attnlab::testing::ZipOptions;

IoErrorKind error_kind(const Bytes& b, std::string* message = nullptr) {
  try {
    parse_tensor_file(ByteView(b.data(), b.size()), "amplify.pth");
  } catch (const IoError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return IoErrorKind::Empty;
}

TEST(Amplification, DeflateEntryDeclaringMoreThanDeflateCanProduce) {
  Bytes b = make_zip({{"a/data.pkl", Bytes(64, 'x')}}, ZipOptions{true, false});
  // Patch the central directory's uncompressed size (offset 24 in the entry) to 1 GiB.
  const Bytes sig = {'P', 'K', 1, 2};
  auto cd = std::search(b.begin(), b.end(), sig.begin(), sig.end());
  ASSERT_NE(cd, b.end());
  uint32_t gib = 1u << 30;
  for (int i = 0; i < 4; ++i) *(cd + 24 + i) = uint8_t(gib >> (8 * i));
  std::string msg;
  EXPECT_EQ(error_kind(b, &msg), IoErrorKind::BadZip);
  EXPECT_NE(msg.find("more than deflate can produce"), std::string::npos) << msg;
}

TEST(Amplification, StrideZeroViewOfATinyStorage) {
  Bytes pkl = PickleWriter()
                  .proto()
                  .empty_dict()
                  .str("w")
                  .tensor("FloatStorage", "0", 1, 0, {1 << 28}, {0})  // 1 GiB from 4 bytes
                  .setitem()
                  .stop()
                  .bytes();
  Bytes zip = make_zip({{"a/data.pkl", pkl}, {"a/data/0", Bytes(4, 0)}});
  EXPECT_EQ(error_kind(zip), IoErrorKind::LimitExceeded);
}

TEST(Amplification, ContainersSharedIntoBillionsOfPaths) {
  // L0 = [t]; Lk = [Lk-1, Lk-1] (memo references) for k up to 30: 2^30 paths to t.
  PickleWriter p;
  p.proto().empty_dict().str("x");
  p.op(']').raw({'q', 0}).tensor("FloatStorage", "0", 1, 0, {1}, {1}).op('a').op('0');
  for (uint8_t k = 1; k <= 30; ++k)
    p.op(']').mark().raw({'h', uint8_t(k - 1), 'h', uint8_t(k - 1)}).op('e').raw({'q', k}).op('0');
  p.raw({'h', 30}).setitem().stop();
  Bytes zip = make_zip({{"a/data.pkl", p.bytes()}, {"a/data/0", Bytes(4, 0)}});
  std::string msg;
  EXPECT_EQ(error_kind(zip, &msg), IoErrorKind::LimitExceeded);
  EXPECT_NE(msg.find("paths"), std::string::npos) << msg;
}

TEST(Amplification, OneTensorListedTenThousandTimes) {
  PickleWriter p;
  p.proto()
      .empty_dict()
      .str("x")
      .op(']')
      .tensor("FloatStorage", "0", 1 << 18, 0, {1 << 18}, {1})
      .raw({'q', 0});
  p.op('a').mark();
  for (int i = 0; i < 10000; ++i) p.raw({'h', 0});
  p.op('e').setitem().stop();
  Bytes zip = make_zip({{"a/data.pkl", p.bytes()}, {"a/data/0", Bytes(4u << 18, 0)}});
  std::string msg;
  EXPECT_EQ(error_kind(zip, &msg), IoErrorKind::LimitExceeded);
  EXPECT_NE(msg.find("copies"), std::string::npos) << msg;
}

}  // namespace
}  // namespace attnlab::io
