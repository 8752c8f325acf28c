// The restricted unpickler on hand-made pickles: what it decodes, what it skips with a
// note (so the weights still load), and that self-references cannot hang or leak it.
#include <gtest/gtest.h>

#include <cstring>

#include "core/io/pickle.h"
#include "core/io/state_dict.h"
#include "core/io/tensor_file.h"
#include "tests/support/archive_builder.h"

namespace attnlab::io {
namespace {

using attnlab::testing::Bytes;
using attnlab::testing::make_pth;
using attnlab::testing::make_zip;
using attnlab::testing::PickleWriter;
using pickle::Kind;

pickle::Document unpickle_bytes(const Bytes& b) {
  return pickle::unpickle(ByteView(b.data(), b.size()), "test.pkl", nullptr);
}

TEST(Pickle, ScalarsStringsAndContainers) {
  Bytes b = PickleWriter()
                .proto()
                .empty_dict()
                .mark()
                .str("epoch")
                .int4(300)
                .str("name")
                .str("deit")
                .str("neg")
                .int4(-5)
                .str("flag")
                .raw({0x88})
                .str("none")
                .op('N')
                .str("pair")
                .int1(1)
                .int1(2)
                .raw({0x86})
                .setitems()
                .stop()
                .bytes();
  pickle::Document d = unpickle_bytes(b);
  const pickle::Node& root = d.at(d.root);
  ASSERT_EQ(root.kind, Kind::Dict);
  ASSERT_EQ(root.items.size(), 12u);
  EXPECT_EQ(d.at(root.items[1]).int_value, 300);
  EXPECT_EQ(d.at(root.items[3]).text, "deit");
  EXPECT_EQ(d.at(root.items[5]).int_value, -5);
  EXPECT_EQ(d.at(root.items[7]).kind, Kind::Bool);
  EXPECT_EQ(d.at(root.items[9]).kind, Kind::None);
  EXPECT_EQ(d.at(root.items[11]).kind, Kind::Tuple);
}

TEST(Pickle, Long1AndBinFloat) {
  Bytes b = PickleWriter()
                .proto()
                .mark()
                .raw({0x8a, 0x02, 0x00, 0x80})             // LONG1 -32768
                .raw({'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0})  // 1.5
                .tuple()
                .stop()
                .bytes();
  pickle::Document d = unpickle_bytes(b);
  EXPECT_EQ(d.at(d.at(d.root).items[0]).int_value, -32768);
  EXPECT_DOUBLE_EQ(d.at(d.at(d.root).items[1]).float_value, 1.5);
}

TEST(Pickle, ArbitraryClassIsSkippedWithNoteAndWeightsStillLoad) {
  // {'model': {...tensors...}, 'args': argparse.Namespace(lr=...), 'epoch': 3}
  PickleWriter p;
  p.proto().empty_dict().mark();
  p.str("model").global("collections", "OrderedDict").empty_tuple().reduce();
  p.str("w").tensor("FloatStorage", "0", 4, 0, {2, 2}, {2, 1}).setitem();
  p.str("args").global("argparse", "Namespace").empty_tuple().raw({0x81});  // NEWOBJ
  p.empty_dict()
      .str("lr")
      .raw({'G', 0x3f, 0x50, 0x62, 0x4d, 0xd2, 0xf1, 0xa9, 0xfc})
      .setitem()
      .op('b');
  p.str("optimizer").global("torch.optim.adamw", "AdamW").empty_tuple().reduce();
  p.str("epoch").int1(3);
  p.setitems().stop();
  Bytes zip = make_zip({{"a/data.pkl", p.bytes()},
                        {"a/data/0", attnlab::testing::float_bytes({1, 2, 3, 4})},
                        {"a/version", {'3'}}});
  TensorFile f = parse_tensor_file(ByteView(zip.data(), zip.size()), "train.pth");
  ASSERT_EQ(f.container.size(), 4u);
  EXPECT_EQ(f.container[1].key, "args");
  EXPECT_EQ(f.container[1].kind, "object");
  EXPECT_NE(f.container[1].summary.find("argparse.Namespace"), std::string::npos);
  bool noted = false;
  for (const auto& n : f.notes) noted |= n.find("argparse.Namespace") != std::string::npos;
  EXPECT_TRUE(noted);
  StateDict sd = extract_state_dict(f);
  EXPECT_EQ(sd.source_key, "model");
  ASSERT_NE(sd.tensors.find("w"), nullptr);
  EXPECT_EQ(sd.tensors.find("w")->shape, (std::vector<int64_t>{2, 2}));
}

TEST(Pickle, WholePickledModuleExplainsHowToResave) {
  // torch.save(model): the module is an object whose parameters live in its state.
  Bytes pkl = PickleWriter()
                  .proto()
                  .global("timm.models.vision_transformer", "VisionTransformer")
                  .empty_tuple()
                  .raw({0x81})
                  .empty_dict()
                  .str("training")
                  .raw({0x89})
                  .setitem()
                  .op('b')
                  .stop()
                  .bytes();
  Bytes zip = make_zip({{"a/data.pkl", pkl}});
  TensorFile f = parse_tensor_file(ByteView(zip.data(), zip.size()), "model.pt");
  try {
    extract_state_dict(f);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::MissingEntry);
    EXPECT_NE(std::string(e.what()).find("VisionTransformer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("torch.save(model.state_dict(), path)"), std::string::npos)
        << e.what();
  }
}

TEST(Pickle, NonContiguousViewIsCopiedInCOrder) {
  // A transposed 2x3 view of storage [0..5]: size (3, 2), stride (1, 3).
  Bytes pkl = PickleWriter()
                  .proto()
                  .empty_dict()
                  .str("t")
                  .tensor("FloatStorage", "0", 6, 0, {3, 2}, {1, 3})
                  .setitem()
                  .stop()
                  .bytes();
  Bytes zip = make_zip(
      {{"a/data.pkl", pkl}, {"a/data/0", attnlab::testing::float_bytes({0, 1, 2, 3, 4, 5})}});
  TensorFile f = parse_tensor_file(ByteView(zip.data(), zip.size()), "view.pth");
  const RawTensor* t = f.tensors.find("t");
  ASSERT_NE(t, nullptr);
  std::vector<float> v(6);
  std::memcpy(v.data(), t->bytes.data(), 24);
  EXPECT_EQ(v, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Pickle, SelfReferencingListDoesNotHang) {
  // l = []; l.append(l) via memo: EMPTY_LIST, BINPUT 0, BINGET 0, APPEND, STOP.
  Bytes b = PickleWriter().proto().raw({']', 'q', 0, 'h', 0, 'a'}).stop().bytes();
  pickle::Document d = unpickle_bytes(b);
  EXPECT_EQ(d.at(d.root).items.size(), 1u);
  EXPECT_EQ(d.at(d.root).items[0], d.root);
  Bytes zip = make_zip({{"a/data.pkl", b}});
  TensorFile f = parse_tensor_file(ByteView(zip.data(), zip.size()), "cycle.pth");
  EXPECT_TRUE(f.tensors.empty());
}

TEST(Pickle, StackUnderflowIsBadPickle) {
  Bytes b = PickleWriter().proto().op('R').stop().bytes();
  try {
    unpickle_bytes(b);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::BadPickle);
    EXPECT_EQ(e.offset(), 2);
  }
}

TEST(Pickle, DataBuiltinsAreFineButCodeBuiltinsRefused) {
  Bytes ok = PickleWriter()
                 .proto()
                 .global("builtins", "set")
                 .mark()
                 .op(']')
                 .tuple()
                 .reduce()
                 .stop()
                 .bytes();
  EXPECT_EQ(unpickle_bytes(ok).at(unpickle_bytes(ok).root).kind, Kind::Set);
  for (const char* name : {"getattr", "__import__", "exec", "open", "compile"}) {
    Bytes bad = PickleWriter().proto().global("builtins", name).stop().bytes();
    EXPECT_THROW(unpickle_bytes(bad), IoError) << name;
  }
  for (const char* module : {"subprocess", "posix", "os.path", "importlib.util", "operator"}) {
    Bytes bad = PickleWriter().proto().global(module, "x").stop().bytes();
    EXPECT_THROW(unpickle_bytes(bad), IoError) << module;
  }
}

TEST(Pickle, MakePthHelperRoundTrips) {
  Bytes b = make_pth({{"a", {1, 2}}, {"b", {3}}});
  TensorFile f = parse_tensor_file(ByteView(b.data(), b.size()), "h.pth");
  StateDict sd = extract_state_dict(f);
  ASSERT_EQ(sd.tensors.size(), 2u);
  EXPECT_EQ(sd.tensors.entries()[0].name, "a");
  EXPECT_EQ(sd.tensors.entries()[1].tensor.shape, std::vector<int64_t>{1});
}

}  // namespace
}  // namespace attnlab::io
