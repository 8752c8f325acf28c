// The zip layer under .pth: deflated entries (a re-zipped checkpoint), zip64 records
// (checkpoints over 4 GiB), corrupt deflate streams; and the state-dict rules on top:
// BUILD-attached _metadata, 'module.' prefixes, model_ema, an explicit key.
#include <gtest/gtest.h>

#include <cstring>

#include "core/io/state_dict.h"
#include "core/io/tensor_file.h"
#include "core/io/zip_reader.h"
#include "tests/support/archive_builder.h"

namespace attnlab::io {
namespace {

using attnlab::testing::Bytes;
using attnlab::testing::make_pth;
using attnlab::testing::make_zip;
using attnlab::testing::PickleWriter;
using attnlab::testing::ZipOptions;

std::vector<float> floats(const RawTensor& t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

TensorFile parse(const Bytes& b, const std::string& name) {
  return parse_tensor_file(ByteView(b.data(), b.size()), name);
}

TEST(ZipReader, DeflatedAndZip64ArchivesLoadLikeStoredOnes) {
  const std::vector<std::pair<std::string, std::vector<float>>> tensors = {
      {"a.weight", {1, 2, 3, 4, 5, 6}}, {"a.bias", {0.5f, -0.5f}}};
  for (ZipOptions o : {ZipOptions{false, false}, ZipOptions{true, false}, ZipOptions{false, true},
                       ZipOptions{true, true}}) {
    TensorFile f = parse(make_pth(tensors, "ckpt", o), "z.pth");
    StateDict sd = extract_state_dict(f);
    ASSERT_EQ(sd.tensors.size(), 2u) << "deflate=" << o.deflate << " zip64=" << o.zip64;
    EXPECT_EQ(floats(*sd.tensors.find("a.weight")), tensors[0].second);
    EXPECT_EQ(floats(*sd.tensors.find("a.bias")), tensors[1].second);
  }
}

TEST(ZipReader, CorruptDeflateStreamIsBadZip) {
  Bytes b = make_zip({{"x/data.pkl", Bytes(200, 'a')}}, ZipOptions{true, false});
  // The compressed payload starts right after the 30-byte local header and the name.
  b[30 + 10 + 1] ^= 0xFF;
  b[30 + 10 + 2] ^= 0xFF;
  ZipReader zip(ByteView(b.data(), b.size()), "corrupt.zip");
  try {
    zip.read(*zip.find("x/data.pkl"));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_TRUE(e.kind() == IoErrorKind::BadZip || e.kind() == IoErrorKind::ChecksumMismatch)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("corrupt.zip"), std::string::npos);
  }
}

TEST(ZipReader, EntryCountBeyondCentralDirectoryIsRefused) {
  Bytes b = make_zip({{"x/a", {1}}});
  b[b.size() - 22 + 10] = 0xFF;  // total entries
  b[b.size() - 22 + 11] = 0x7F;
  EXPECT_THROW(ZipReader(ByteView(b.data(), b.size()), "count.zip"), IoError);
}

// model.state_dict() pickles as OrderedDict + SETITEMS + BUILD({'_metadata': ...}).
TEST(StateDictRules, BuildMetadataOnOrderedDictIsHarmless) {
  PickleWriter p;
  p.proto().empty_dict().str("model").global("collections", "OrderedDict").empty_tuple().reduce();
  p.mark().str("module.w").tensor("FloatStorage", "0", 2, 0, {2}, {1});
  p.str("module.bn.num_batches_tracked").tensor("LongStorage", "1", 1, 0, {}, {}).setitems();
  p.empty_dict().str("_metadata").global("collections", "OrderedDict").empty_tuple().reduce();
  p.str("").empty_dict().str("version").int1(1).setitem().setitem().setitem().op('b');
  p.setitem().stop();
  Bytes zip = make_zip({{"a/data.pkl", p.bytes()},
                        {"a/data/0", attnlab::testing::float_bytes({7, 8})},
                        {"a/data/1", Bytes(8, 0)}});
  TensorFile f = parse(zip, "sd.pth");
  StateDict sd = extract_state_dict(f);
  ASSERT_EQ(sd.tensors.size(), 1u);
  EXPECT_EQ(floats(*sd.tensors.find("w")), (std::vector<float>{7, 8}));  // 'module.' stripped
  ASSERT_EQ(sd.dropped.size(), 1u);
}

TEST(StateDictRules, PreferenceOrderAndExplicitKey) {
  auto pth_with = [](const std::vector<std::string>& keys) {
    PickleWriter p;
    p.proto().empty_dict().mark();
    int storage = 0;
    for (const auto& k : keys) {
      p.str(k).global("collections", "OrderedDict").empty_tuple().reduce();
      p.str("w").tensor("FloatStorage", std::to_string(storage++), 1, 0, {1}, {1}).setitem();
    }
    p.str("epoch").int1(9).setitems().stop();
    std::vector<std::pair<std::string, Bytes>> entries = {{"a/data.pkl", p.bytes()}};
    for (int i = 0; i < storage; ++i)
      entries.push_back({"a/data/" + std::to_string(i), attnlab::testing::float_bytes({float(i)})});
    return make_zip(entries);
  };
  TensorFile both = parse(pth_with({"model_ema", "model"}), "both.pth");
  EXPECT_EQ(extract_state_dict(both).source_key, "model");
  EXPECT_EQ(floats(*extract_state_dict(both, "model_ema").tensors.find("w"))[0], 0.f);
  EXPECT_EQ(extract_state_dict(parse(pth_with({"state_dict"}), "sd.pth")).source_key, "state_dict");
  TensorFile net = parse(pth_with({"net"}), "net.pth");
  EXPECT_EQ(extract_state_dict(net).source_key, "net");  // the only state dict there is
  // A DINO training checkpoint: the teacher, as DINO's own evaluation loads it.
  TensorFile dino = parse(pth_with({"student", "teacher"}), "dino.pth");
  EXPECT_EQ(extract_state_dict(dino).source_key, "teacher");
  EXPECT_EQ(floats(*extract_state_dict(dino, "student").tensors.find("w"))[0], 0.f);
  TensorFile two = parse(pth_with({"generator", "discriminator"}), "two.pth");
  try {
    extract_state_dict(two);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::MissingEntry);
    EXPECT_NE(std::string(e.what()).find("'generator', 'discriminator'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(extract_state_dict(both, "optimizer"), IoError);
}

}  // namespace
}  // namespace attnlab::io
