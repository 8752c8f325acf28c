// Tests for the .npy reader and writer: round trips for the written dtypes (including
// 0-d and empty shapes), byte-exact files as numpy writes them, header-dict variants,
// and a table of malformed inputs that must each fail with the right IoErrorKind.
#include "core/io/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/file_bytes.h"
#include "tests/support/temp_path.h"

namespace attnlab::io {
namespace {

RawTensor parse(const std::string& s, const std::string& file = "test.npy") {
  return parse_npy(ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()), file);
}

// A tensor whose bytes are 0, 1, 2, ... (any bit pattern is fine for a round trip).
RawTensor counting(DType dtype, std::vector<int64_t> shape) {
  RawTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.resize(static_cast<size_t>(t.numel()) * dtype_size(dtype));
  for (size_t i = 0; i < t.bytes.size(); ++i) t.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  return t;
}

std::string temp_path(const std::string& name) {
  return attnlab::testing::unique_temp_path(name);
}

// Header length as stored in a version 1.0 file (little-endian u16 at offset 8).
size_t v1_header_total(const std::vector<uint8_t>& f) {
  return 10 + (size_t(f[8]) | size_t(f[9]) << 8);
}

struct RoundTripCase {
  DType dtype;
  std::vector<int64_t> shape;
};

// Printed in test listings: keep it free of addresses so discovery is stable.
void PrintTo(const RoundTripCase& c, std::ostream* os) {
  *os << dtype_name(c.dtype) << "x" << c.shape.size();
}

class NpyRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(NpyRoundTrip, EncodeParseAndWriteRead) {
  RawTensor t = counting(GetParam().dtype, GetParam().shape);
  std::vector<uint8_t> enc = encode_npy(t);
  ASSERT_GE(enc.size(), 10u);
  EXPECT_EQ(enc[6], 1);  // version 1.0
  EXPECT_EQ(enc[7], 0);
  size_t header = v1_header_total(enc);
  EXPECT_EQ(header % 64, 0u);
  EXPECT_EQ(enc[header - 1], '\n');
  EXPECT_EQ(enc.size(), header + t.bytes.size());
  EXPECT_EQ(parse_npy(ByteView(enc.data(), enc.size()), "mem.npy"), t);

  std::string path = temp_path("roundtrip.npy");
  write_npy(path, t);
  EXPECT_EQ(read_file_bytes(path), enc);
  EXPECT_EQ(read_npy(path), t);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, NpyRoundTrip,
    ::testing::Values(RoundTripCase{DType::F32, {2, 3}}, RoundTripCase{DType::F16, {5}},
                      RoundTripCase{DType::I64, {2, 1, 3}}, RoundTripCase{DType::U8, {4, 4}},
                      RoundTripCase{DType::F32, {}}, RoundTripCase{DType::F32, {0, 3}},
                      RoundTripCase{DType::U8, {0}}, RoundTripCase{DType::F64, {3}},
                      RoundTripCase{DType::I32, {2, 2}}, RoundTripCase{DType::I16, {3}},
                      RoundTripCase{DType::I8, {3}}),
    // Stable names: ctest discovers tests by name, and the default name prints raw bytes.
    [](const ::testing::TestParamInfo<RoundTripCase>& param_info) {
      std::string name = std::string(dtype_name(param_info.param.dtype)) + "_rank" +
                         std::to_string(param_info.param.shape.size());
      for (int64_t d : param_info.param.shape) name += "_" + std::to_string(d);
      return name;
    });

TEST(Npy, EncodesHeaderExactlyAsNumpy) {
  RawTensor t = counting(DType::F32, {2, 3});
  std::vector<uint8_t> enc = encode_npy(t);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string expect = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                       std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  EXPECT_EQ(std::string(enc.begin(), enc.begin() + 128), expect);

  // Shape spellings: () for 0-d and (5,) for 1-d, as Python's tuple repr writes them.
  std::vector<uint8_t> scalar = encode_npy(counting(DType::U8, {}));
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'shape': ()"), std::string::npos);
  std::vector<uint8_t> vec = encode_npy(counting(DType::I64, {5}));
  EXPECT_NE(std::string(vec.begin(), vec.end()).find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, BoolRoundTripsAndCanonicalises) {
  RawTensor t;
  t.dtype = DType::Bool;
  t.shape = {3};
  t.bytes = {1, 0, 1};
  std::vector<uint8_t> enc = encode_npy(t);
  EXPECT_EQ(parse_npy(ByteView(enc.data(), enc.size()), "b.npy"), t);
  enc.back() = 0x7F;  // numpy reads any non-zero byte as True
  EXPECT_EQ(parse_npy(ByteView(enc.data(), enc.size()), "b.npy").bytes,
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Npy, EncodeRefusesBf16AndInconsistentTensors) {
  RawTensor bf = counting(DType::BF16, {2});
  EXPECT_THROW(encode_npy(bf), std::invalid_argument);
  EXPECT_THROW(write_npy(temp_path("bf16.npy"), bf), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(temp_path("bf16.npy")));

  RawTensor short_bytes = counting(DType::F32, {2, 3});
  short_bytes.bytes.pop_back();
  EXPECT_THROW(encode_npy(short_bytes), std::invalid_argument);
}

TEST(Npy, HugeHeaderSwitchesToVersion2) {
  // Only a shape with thousands of dims needs more than 65535 header bytes. numpy (and
  // parse_npy) cap the rank at 64, so such a file is written correctly but refused on read.
  RawTensor t = counting(DType::U8, std::vector<int64_t>(30000, 1));
  std::vector<uint8_t> enc = encode_npy(t);
  ASSERT_GT(enc.size(), 12u);
  EXPECT_EQ(enc[6], 2);
  size_t len = size_t(enc[8]) | size_t(enc[9]) << 8 | size_t(enc[10]) << 16 | size_t(enc[11]) << 24;
  EXPECT_GT(len, 0xFFFFu);
  EXPECT_EQ((12 + len) % 64, 0u);
  EXPECT_EQ(enc[12 + len - 1], '\n');
  EXPECT_EQ(enc.size(), 12 + len + 1);
  try {
    parse_npy(ByteView(enc.data(), enc.size()), "many-dims.npy");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::LimitExceeded) << e.what();
  }

  // 64 dims, numpy's maximum, still fit in a 1.0 header and read back.
  RawTensor max_rank = counting(DType::U8, std::vector<int64_t>(64, 1));
  std::vector<uint8_t> small = encode_npy(max_rank);
  EXPECT_EQ(small[6], 1);
  EXPECT_EQ(parse_npy(ByteView(small.data(), small.size()), "m.npy"), max_rank);
}

// np.save("a.npy", np.arange(6, dtype='<f4').reshape(2, 3)) with numpy >= 1.14: a 10-byte
// prefix, the dict padded with spaces to 118 bytes (0x76) ending in '\n', then the data.
TEST(Npy, ParsesNumpyFileBytes) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string file = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                     std::string(118 - dict.size() - 1, ' ') + "\n" +
                     std::string(
                         "\x00\x00\x00\x00"   // 0.0f
                         "\x00\x00\x80\x3f"   // 1.0f
                         "\x00\x00\x00\x40"   // 2.0f
                         "\x00\x00\x40\x40"   // 3.0f
                         "\x00\x00\x80\x40"   // 4.0f
                         "\x00\x00\xa0\x40",  // 5.0f
                         24);
  ASSERT_EQ(file.size(), 128u + 24u);
  RawTensor t = parse(file);
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(t.bytes.size(), 24u);
  float v[6];
  std::memcpy(v, t.bytes.data(), sizeof v);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], static_cast<float>(i));
}

TEST(Npy, ParsesVersion2And3Headers) {
  // np.lib.format.write_array(f, np.array([1, 2], '<i8'), version=(2, 0)): u32 length.
  std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  std::string pad(128 - 12 - dict.size() - 1, ' ');
  std::string data("\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0", 16);
  for (char major : {'\x02', '\x03'}) {
    std::string file = std::string("\x93NUMPY", 6) + major +
                       std::string("\x00\x74\x00\x00\x00", 5) + dict + pad + "\n" + data;
    RawTensor t = parse(file);
    EXPECT_EQ(t.dtype, DType::I64);
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(t.bytes, std::vector<uint8_t>(data.begin(), data.end()));
  }
}

// Builds a version 1.0 file around an arbitrary dict string (no alignment padding needed).
std::string v1_file(const std::string& dict, const std::string& data) {
  std::string d = dict + "\n";
  std::string len{static_cast<char>(d.size() & 0xFF), static_cast<char>(d.size() >> 8)};
  return std::string("\x93NUMPY\x01\x00", 8) + len + d + data;
}

TEST(Npy, AcceptsHeaderDictVariants) {
  struct Case {
    const char* dict;
    DType dtype;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {"{'shape': (1, 2), 'fortran_order': False, 'descr': '<i2'}", DType::I16, {1, 2}},
      {"{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (1,)}", DType::I32, {1}},
      {"  {  'descr'  :'|u1'  ,\n 'fortran_order':False,'shape':( 2 ,2 , ) ,  }  ",
       DType::U8,
       {2, 2}},
      {"{'descr': '<u1', 'fortran_order': False, 'shape': ()}", DType::U8, {}},
      {"{'descr': '=f8', 'fortran_order': False, 'shape': (1,)}", DType::F64, {1}},
      {"{'descr': '|i1', 'fortran_order': False, 'shape': (4,)}", DType::I8, {4}},
      {"{'descr': '<f2', 'fortran_order': False, 'shape': (2L,)}", DType::F16, {2}},
      {"{'descr':'|b1','fortran_order':False,'shape':(0, 5)}", DType::Bool, {0, 5}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    RawTensor want;
    want.dtype = c.dtype;
    want.shape = c.shape;
    want.bytes.assign(static_cast<size_t>(want.numel()) * dtype_size(c.dtype), 0);
    EXPECT_EQ(parse(v1_file(c.dict, std::string(want.bytes.size(), '\0'))), want);
  }
}

TEST(Npy, MalformedInputsFailWithTheRightKind) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string ok_data(8, '\0');
  const std::string good = v1_file(ok_dict, ok_data);
  struct Case {
    const char* name;
    std::string bytes;
    IoErrorKind kind;
  };
  const Case cases[] = {
      {"empty", "", IoErrorKind::Empty},
      {"bad magic", "PK\x03\x04 not numpy at all", IoErrorKind::BadHeader},
      {"magic cut short", "\x93NUM", IoErrorKind::Truncated},
      {"truncated header length", std::string("\x93NUMPY\x01\x00\x40", 9), IoErrorKind::Truncated},
      {"truncated v2 header length", std::string("\x93NUMPY\x02\x00\x40\x00", 10),
       IoErrorKind::Truncated},
      {"header length past end", std::string("\x93NUMPY\x01\x00\xff\x7f{'descr'", 17),
       IoErrorKind::Truncated},
      {"unknown version", std::string("\x93NUMPY\x04\x00\x00\x00", 10),
       IoErrorKind::UnsupportedFormat},
      {"fortran order",
       v1_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }", ok_data),
       IoErrorKind::UnsupportedFormat},
      {"big-endian", v1_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", ok_data),
       IoErrorKind::UnsupportedFormat},
      {"unknown descr",
       v1_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", ok_data),
       IoErrorKind::UnsupportedFormat},
      {"structured dtype",
       v1_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", ok_data),
       IoErrorKind::UnsupportedFormat},
      {"missing shape", v1_file("{'descr': '<f4', 'fortran_order': False, }", ok_data),
       IoErrorKind::BadHeader},
      {"missing descr", v1_file("{'fortran_order': False, 'shape': (2,)}", ok_data),
       IoErrorKind::BadHeader},
      {"duplicate key",
       v1_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", ok_data),
       IoErrorKind::BadHeader},
      {"unknown key",
       v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", ok_data),
       IoErrorKind::BadHeader},
      {"not a dict", v1_file("__import__('os')", ok_data), IoErrorKind::BadHeader},
      {"unterminated string", v1_file("{'descr: '<f4'", ok_data), IoErrorKind::BadHeader},
      {"missing closing brace",
       v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", ok_data),
       IoErrorKind::BadHeader},
      {"garbage after dict",
       v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", ok_data),
       IoErrorKind::BadHeader},
      {"bool spelled lower-case",
       v1_file("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", ok_data),
       IoErrorKind::BadHeader},
      {"shape is an int", v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': 2}", ok_data),
       IoErrorKind::BadHeader},
      {"one-element tuple without comma",
       v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", ok_data),
       IoErrorKind::BadHeader},
      {"negative dim", v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", ok_data),
       IoErrorKind::BadHeader},
      {"dim overflows int64",
       v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
               ok_data),
       IoErrorKind::LimitExceeded},
      {"element count overflows",
       v1_file("{'descr': '<f4', 'fortran_order': False, "
               "'shape': (4294967296, 4294967296)}",
               ok_data),
       IoErrorKind::LimitExceeded},
      {"byte size overflows",
       v1_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}",
               ok_data),
       IoErrorKind::LimitExceeded},
      {"data too short", good.substr(0, good.size() - 1), IoErrorKind::Truncated},
      {"data too long", good + "x", IoErrorKind::ShapeMismatch},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      parse(c.bytes, "bad-input.npy");
      ADD_FAILURE() << "parsed without error";
    } catch (const IoError& e) {
      EXPECT_EQ(e.kind(), c.kind) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad-input.npy"), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "bad-input.npy");
    }
  }
}

TEST(Npy, ErrorMessagesSayWhatWasExpected) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  try {
    parse(v1_file(dict, std::string(10, '\0')));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(e.message().find("expected 16"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("got 10"), std::string::npos) << e.what();
    EXPECT_NE(e.offset(), IoError::kNoOffset);
  }
  try {
    parse(v1_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", ""));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(e.message().find("'>f4'"), std::string::npos) << e.what();
  }
  try {
    parse(v1_file("{'descr': '<f4', 'fortran_order': False}", ""));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(e.message().find("'shape'"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 10);  // the start of the dict
  }
}

TEST(Npy, ReadNpyReportsMissingFile) {
  try {
    read_npy(temp_path("does-not-exist.npy"));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::NotFound);
  }
}

}  // namespace
}  // namespace attnlab::io
