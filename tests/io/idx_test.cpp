// Tests for the IDX reader and the bounded gunzip: element types and byte order, gzipped
// files built here with zlib, malformed headers and payloads, truncated and oversized
// gzip streams, and (when installed) the real Fashion-MNIST test set.
#include "core/io/idx.h"

#include <gtest/gtest.h>

#include <zlib.h>
#include "tests/support/temp_path.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnlab::io {
namespace {

using Bytes = std::vector<uint8_t>;

// Compresses `in` as a single gzip member.
Bytes gzip(const Bytes& in) {
  z_stream zs{};
  EXPECT_EQ(
      deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  Bytes out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// IDX header: 00 00 type ndim, then big-endian u32 dims.
Bytes idx_header(uint8_t type, const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  return b;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

RawTensor parse(const Bytes& b, const std::string& file = "test.idx") {
  return parse_idx(ByteView(b.data(), b.size()), file);
}

std::string write_temp(const std::string& name, const Bytes& b) {
  std::string path = attnlab::testing::unique_temp_path(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return path;
}

template <typename T>
std::vector<T> values(const RawTensor& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

// Expects `fn` to throw IoError of `kind` that names `file`.
template <typename Fn>
void expect_io_error(Fn fn, IoErrorKind kind, const std::string& file) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

TEST(Idx, ParsesUint8) {
  RawTensor t = parse(concat(idx_header(0x08, {2, 3}), {0, 1, 2, 250, 254, 255}));
  EXPECT_EQ(t.dtype, DType::U8);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.bytes, (Bytes{0, 1, 2, 250, 254, 255}));
}

TEST(Idx, ConvertsBigEndianPayloads) {
  RawTensor i8 = parse(concat(idx_header(0x09, {2}), {0xFF, 0x05}));
  EXPECT_EQ(i8.dtype, DType::I8);
  EXPECT_EQ(values<int8_t>(i8), (std::vector<int8_t>{-1, 5}));

  RawTensor i16 = parse(concat(idx_header(0x0B, {2}), {0x01, 0x02, 0xFF, 0xFE}));
  EXPECT_EQ(i16.dtype, DType::I16);
  EXPECT_EQ(values<int16_t>(i16), (std::vector<int16_t>{0x0102, -2}));

  RawTensor i32 = parse(concat(idx_header(0x0C, {1}), {0x01, 0x02, 0x03, 0x04}));
  EXPECT_EQ(i32.dtype, DType::I32);
  EXPECT_EQ(values<int32_t>(i32), (std::vector<int32_t>{0x01020304}));

  // 1.5 = 0x3FC00000, -2.0 = 0xC0000000 as float32.
  RawTensor f32 = parse(concat(idx_header(0x0D, {2}), {0x3F, 0xC0, 0, 0, 0xC0, 0, 0, 0}));
  EXPECT_EQ(f32.dtype, DType::F32);
  EXPECT_EQ(values<float>(f32), (std::vector<float>{1.5f, -2.0f}));

  // 0.1 = 0x3FB999999999999A as float64.
  RawTensor f64 =
      parse(concat(idx_header(0x0E, {1, 1}), {0x3F, 0xB9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A}));
  EXPECT_EQ(f64.dtype, DType::F64);
  EXPECT_EQ(f64.shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(values<double>(f64), (std::vector<double>{0.1}));
}

TEST(Idx, ZeroSizedDimensionIsValid) {
  RawTensor t = parse(idx_header(0x0D, {0, 28}));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{0, 28}));
  EXPECT_TRUE(t.bytes.empty());
}

TEST(Idx, ReadsGzippedAndPlainFiles) {
  Bytes labels = concat(idx_header(0x08, {4}), {3, 1, 4, 1});
  std::string gz = write_temp("labels.idx1.gz", gzip(labels));
  RawTensor t = read_idx(gz);
  EXPECT_EQ(t.dtype, DType::U8);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(t.bytes, (Bytes{3, 1, 4, 1}));

  // 3.25 = 0x40500000, -0.5 = 0xBF000000, 0 and 1e30-ish stay exact bit patterns.
  Bytes floats = concat(idx_header(0x0D, {2, 2}),
                        {0x40, 0x50, 0, 0, 0xBF, 0, 0, 0, 0, 0, 0, 0, 0x3F, 0x80, 0, 0});
  std::string fgz = write_temp("floats.idx.gz", gzip(floats));
  RawTensor f = read_idx(fgz);
  EXPECT_EQ(f.dtype, DType::F32);
  EXPECT_EQ(f.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(f), (std::vector<float>{3.25f, -0.5f, 0.0f, 1.0f}));

  std::string plain = write_temp("floats.idx", floats);
  EXPECT_EQ(read_idx(plain), f);
  for (const auto& p : {gz, fgz, plain}) std::filesystem::remove(p);
}

TEST(Idx, MalformedInputsFailWithTheRightKind) {
  struct Case {
    const char* name;
    Bytes bytes;
    IoErrorKind kind;
  };
  Bytes ok = concat(idx_header(0x0C, {2}), Bytes(8, 0));
  const Case cases[] = {
      {"empty", {}, IoErrorKind::Empty},
      {"bad magic", {0x50, 0x4B, 0x03, 0x04}, IoErrorKind::BadHeader},
      {"magic only", {0, 0}, IoErrorKind::Truncated},
      {"unknown type", concat(idx_header(0x0A, {1}), {0}), IoErrorKind::UnknownDType},
      {"zero dims", {0, 0, 0x08, 0}, IoErrorKind::BadHeader},
      {"nine dims", idx_header(0x08, std::vector<uint32_t>(9, 1)), IoErrorKind::BadHeader},
      {"truncated dims", {0, 0, 0x08, 2, 0, 0, 0, 1, 0, 0}, IoErrorKind::Truncated},
      {"truncated payload", Bytes(ok.begin(), ok.end() - 1), IoErrorKind::Truncated},
      {"payload too long", concat(ok, {0}), IoErrorKind::ShapeMismatch},
      {"byte size overflows", idx_header(0x0E, std::vector<uint32_t>(8, 0xFFFFFFFF)),
       IoErrorKind::LimitExceeded},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expect_io_error([&] { parse(c.bytes, "bad-input.idx"); }, c.kind, "bad-input.idx");
  }
}

TEST(Idx, TruncatedPayloadMessageSaysExpectedAndGot) {
  try {
    parse(concat(idx_header(0x08, {10}), Bytes(7, 0)));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(e.message().find("expected 10"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("got 7"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 8);
  }
}

TEST(Gunzip, RoundTripsAndIgnoresLaterMembers) {
  Bytes text(100000);
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<uint8_t>(i * i % 251);
  Bytes gz = gzip(text);
  EXPECT_EQ(gunzip(ByteView(gz.data(), gz.size()), "a.gz", 1 << 20), text);
  // Exactly at the cap is allowed.
  EXPECT_EQ(gunzip(ByteView(gz.data(), gz.size()), "a.gz", text.size()), text);

  Bytes two = concat(gz, gzip({1, 2, 3}));
  EXPECT_EQ(gunzip(ByteView(two.data(), two.size()), "two.gz", 1 << 20), text);
}

TEST(Gunzip, TruncatedStreamIsTruncated) {
  Bytes text(50000, 'a');
  for (size_t i = 0; i < text.size(); i += 7) text[i] = static_cast<uint8_t>(i);
  Bytes gz = gzip(text);
  // Cut inside the deflate data, just before the trailer, and inside the trailer.
  for (size_t cut : {size_t(10), gz.size() / 2, gz.size() - 8, gz.size() - 1}) {
    SCOPED_TRACE(cut);
    Bytes part(gz.begin(), gz.begin() + static_cast<ptrdiff_t>(cut));
    expect_io_error([&] { gunzip(ByteView(part.data(), part.size()), "cut.gz", 1 << 20); },
                    IoErrorKind::Truncated, "cut.gz");
  }
  // Through read_idx, too.
  Bytes idx_gz = gzip(concat(idx_header(0x08, {1000}), Bytes(1000, 7)));
  std::string path = write_temp("cut.idx.gz", Bytes(idx_gz.begin(), idx_gz.end() - 12));
  expect_io_error([&] { read_idx(path); }, IoErrorKind::Truncated, "cut.idx.gz");
  std::filesystem::remove(path);
}

TEST(Gunzip, CorruptStreamIsRefused) {
  Bytes gz = gzip(Bytes(1000, 42));
  Bytes bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0xFF;  // inside the CRC-32 of the trailer
  expect_io_error([&] { gunzip(ByteView(bad_crc.data(), bad_crc.size()), "crc.gz", 1 << 20); },
                  IoErrorKind::BadHeader, "crc.gz");
  Bytes not_gzip = {0x1f, 0x00, 1, 2, 3};
  expect_io_error([&] { gunzip(ByteView(not_gzip.data(), not_gzip.size()), "x.gz", 100); },
                  IoErrorKind::BadHeader, "x.gz");
  Bytes bad_method = gz;
  bad_method[2] = 7;  // compression method other than deflate (8)
  expect_io_error(
      [&] { gunzip(ByteView(bad_method.data(), bad_method.size()), "method.gz", 1 << 20); },
      IoErrorKind::BadHeader, "method.gz");
}

TEST(Gunzip, BombOverTheCapIsRefused) {
  // 16 MiB of zeros compress to about 16 KiB; a 1 MiB cap must stop it early.
  Bytes bomb = gzip(Bytes(16 << 20, 0));
  ASSERT_LT(bomb.size(), 64u * 1024);
  expect_io_error([&] { gunzip(ByteView(bomb.data(), bomb.size()), "bomb.gz", 1 << 20); },
                  IoErrorKind::LimitExceeded, "bomb.gz");
  // One byte under the real size is already too much.
  expect_io_error([&] { gunzip(ByteView(bomb.data(), bomb.size()), "bomb.gz", (16 << 20) - 1); },
                  IoErrorKind::LimitExceeded, "bomb.gz");
}

// Debian's fashion-mnist package installs the data set here; skipped when absent.
TEST(Idx, ReadsFashionMnistTestSet) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const std::string labels_path = dir + "t10k-labels-idx1-ubyte.gz";
  const std::string images_path = dir + "t10k-images-idx3-ubyte.gz";
  if (!std::filesystem::exists(labels_path) || !std::filesystem::exists(images_path))
    GTEST_SKIP() << "Fashion-MNIST not installed under " << dir;

  RawTensor labels = read_idx(labels_path);
  EXPECT_EQ(labels.dtype, DType::U8);
  EXPECT_EQ(labels.shape, (std::vector<int64_t>{10000}));
  std::array<int, 10> per_class{};
  for (uint8_t l : labels.bytes) {
    ASSERT_LT(l, 10);
    ++per_class[l];
  }
  for (int c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], 1000) << "class " << c;

  RawTensor images = read_idx(images_path);
  EXPECT_EQ(images.dtype, DType::U8);
  EXPECT_EQ(images.shape, (std::vector<int64_t>{10000, 28, 28}));
  EXPECT_EQ(images.bytes.size(), 10000u * 28 * 28);
}

}  // namespace
}  // namespace attnlab::io
