// The malformed-input table: each broken file is made here, read through the public
// entry point (parse_tensor_file / read_tensor_file), and must give its typed IoError
// whose message names the file and says what was expected. Never a crash, never a
// partial result.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/io/file_bytes.h"
#include "core/io/tensor_file.h"
#include "tests/support/archive_builder.h"
#include "tests/support/fixtures.h"

namespace attnlab::io {
namespace {

using attnlab::testing::Bytes;
using attnlab::testing::make_pth;
using attnlab::testing::make_zip;
using attnlab::testing::PickleWriter;

Bytes safetensors_with_header(const std::string& json, size_t data_bytes) {
  std::string h = json;
  Bytes b(8);
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) b[size_t(i)] = uint8_t(n >> (8 * i));
  b.insert(b.end(), h.begin(), h.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

Bytes fixture_bytes(const std::string& name) {
  return read_file_bytes(attnlab::testing::parity_dir() + "/" + name);
}

// A .pth whose data.pkl is the given pickle, plus storages "0" (16 float32 zeros).
Bytes pth_with_pickle(const Bytes& pkl) {
  return make_zip({{"archive/data.pkl", pkl},
                   {"archive/data/0", Bytes(64, 0)},
                   {"archive/version", {'3', '\n'}}});
}

struct Case {
  std::string name;
  std::function<Bytes()> make;
  IoErrorKind kind;
  std::string says;  // a phrase the message must contain
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

std::vector<Case> cases() {
  return {
      {"zero_byte_file", [] { return Bytes{}; }, IoErrorKind::Empty, "empty"},
      {"header_length_past_eof",
       [] {
         Bytes b = safetensors_with_header("{}", 0);
         b[0] = 0xff;  // claims 255+ bytes of header
         b[1] = 0x7f;
         return b;
       },
       IoErrorKind::BadHeader, "runs past the end"},
      {"bad_json", [] { return safetensors_with_header("{\"w\": {\"dtype\": \"F32\",", 0); },
       IoErrorKind::BadJson, "not valid JSON"},
      {"json_number_overflow",  // found by fuzz_safetensors: nlohmann raised out_of_range
       [] {
         return safetensors_with_header(
             R"({"w":{"dtype":"F32","shape":[2e704],"data_offsets":[0,4]}})", 4);
       },
       IoErrorKind::BadJson, "not valid JSON"},
      {"empty_shape_overflowing_dims",  // found by fuzz_npy: (5, 2.7e18, 0) holds 0 bytes but
                                        // overflows
       [] {
         return safetensors_with_header(
             R"({"w":{"dtype":"BOOL","shape":[5,2666626666666666666,0],"data_offsets":[0,0]}})", 0);
       },
       IoErrorKind::ShapeMismatch, "overflows 64 bits"},
      {"npy_empty_shape_overflowing_dims",
       [] {
         std::string h =
             "{'descr': '|b1', 'fortran_order': False, 'shape': (5, 2666626666666666666, 0), }";
         h.append(118 - 10 - h.size() - 1, ' ');
         h += '\n';
         Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(h.size()), 0};
         b.insert(b.end(), h.begin(), h.end());
         return b;
       },
       IoErrorKind::LimitExceeded, "overflows 64 bits"},
      {"unknown_dtype",
       [] {
         return safetensors_with_header(R"({"w":{"dtype":"F13","shape":[1],"data_offsets":[0,4]}})",
                                        4);
       },
       IoErrorKind::UnknownDType, "F13"},
      {"shape_bytes_mismatch",
       [] {
         return safetensors_with_header(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                                        8);
       },
       IoErrorKind::ShapeMismatch, "needs 12 bytes"},
      {"overlapping_offsets",
       [] {
         return safetensors_with_header(
             R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
             12);
       },
       IoErrorKind::OverlappingData, "overlap"},
      {"out_of_range_offsets",
       [] {
         return safetensors_with_header(
             R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
       },
       IoErrorKind::OffsetOutOfRange, "past the data section"},
      {"metadata_not_strings",
       [] { return safetensors_with_header(R"({"__metadata__":{"epoch":3}})", 0); },
       IoErrorKind::BadField, "must be a string"},
      {"truncated_zip",
       [] {
         Bytes b = fixture_bytes("deit_mini.pth");
         b.resize(b.size() / 2);
         return b;
       },
       IoErrorKind::BadZip, "truncated"},
      {"zip_without_data_pkl",
       [] {
         return make_zip({{"archive/data/0", Bytes(16, 0)}, {"archive/version", {'3'}}});
       },
       IoErrorKind::MissingEntry, "data.pkl"},
      {"zip_crc_mismatch",
       [] {
         Bytes b = make_pth({{"w", {1, 2, 3, 4}}});
         // Flip a byte inside the storage record (after its 30+name local header).
         std::string needle = "archive/data/0";
         auto it = std::search(b.begin(), b.end(), needle.begin(), needle.end());
         *(it + long(needle.size()) + 1) ^= 0x40;
         return b;
       },
       IoErrorKind::ChecksumMismatch, "CRC-32"},
      {"unknown_pickle_opcode",
       [] { return pth_with_pickle(PickleWriter().proto().raw({0xfe}).stop().bytes()); },
       IoErrorKind::UnknownOpcode, "0xfe"},
      {"pickle_without_stop",
       [] { return pth_with_pickle(PickleWriter().proto().empty_dict().bytes()); },
       IoErrorKind::Truncated, "missing STOP"},
      {"persistent_id_missing_storage",
       [] {
         return pth_with_pickle(PickleWriter()
                                    .proto()
                                    .empty_dict()
                                    .str("w")
                                    .tensor("FloatStorage", "7", 4, 0, {4}, {1})
                                    .setitem()
                                    .stop()
                                    .bytes());
       },
       IoErrorKind::MissingEntry, "storage '7'"},
      {"tensor_view_past_storage",
       [] {
         return pth_with_pickle(PickleWriter()
                                    .proto()
                                    .empty_dict()
                                    .str("w")
                                    .tensor("FloatStorage", "0", 16, 10, {4, 2}, {2, 1})
                                    .setitem()
                                    .stop()
                                    .bytes());
       },
       IoErrorKind::OffsetOutOfRange, "storage '0'"},
      {"pickle_calls_os_system",
       [] {
         return pth_with_pickle(PickleWriter()
                                    .proto()
                                    .global("os", "system")
                                    .mark()
                                    .str("touch /tmp/attnlab_pwned")
                                    .tuple()
                                    .reduce()
                                    .stop()
                                    .bytes());
       },
       IoErrorKind::RefusedGlobal, "os.system"},
      {"pickle_calls_builtins_eval",
       [] {
         return pth_with_pickle(PickleWriter()
                                    .proto()
                                    .global("builtins", "eval")
                                    .mark()
                                    .str("1+1")
                                    .tuple()
                                    .reduce()
                                    .stop()
                                    .bytes());
       },
       IoErrorKind::RefusedGlobal, "builtins.eval"},
      {"legacy_torch_save",
       [] {
         return PickleWriter().proto().raw({0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46}).stop().bytes();
       },
       IoErrorKind::UnsupportedFormat, "re-save it with torch >= 1.6"},
      {"torchscript_archive",
       [] {
         return make_zip({{"m/constants.pkl", {0x80, 2, ']', '.'}}, {"m/code/m.py", {'x'}}});
       },
       IoErrorKind::UnsupportedFormat, "TorchScript"},
      {"unrecognised_bytes",
       [] {
         return Bytes{'h', 'e', 'l', 'l', 'o'};
       },
       IoErrorKind::UnsupportedFormat, "unrecognised"},
  };
}

class Malformed : public ::testing::TestWithParam<Case> {};

TEST_P(Malformed, GivesTypedErrorNamingTheFile) {
  const Case& c = GetParam();
  std::filesystem::remove("/tmp/attnlab_pwned");
  Bytes b = c.make();
  const std::string label = "case_" + c.name + ".bin";
  try {
    parse_tensor_file(ByteView(b.data(), b.size()), label);
    FAIL() << c.name << ": no error raised";
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), c.kind) << c.name << ": got [" << io_error_kind_name(e.kind()) << "] "
                                << e.what();
    EXPECT_NE(std::string(e.what()).find(label), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
        << c.name << ": message should say '" << c.says << "': " << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/attnlab_pwned")) << "something was executed";
}

TEST_P(Malformed, FromDiskToo) {
  const Case& c = GetParam();
  Bytes b = c.make();
  auto path = std::filesystem::temp_directory_path() / ("attnlab_malformed_" + c.name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  try {
    read_tensor_file(path.string());
    FAIL() << c.name << ": no error raised";
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), c.kind) << e.what();
    EXPECT_EQ(e.file().rfind(path.string(), 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Table, Malformed, ::testing::ValuesIn(cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(MalformedFiles, MissingFileIsNotFound) {
  try {
    read_tensor_file("/nonexistent/attnlab/w.safetensors");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/attnlab/w.safetensors"), std::string::npos);
  }
}

TEST(MalformedFiles, EveryTruncationOfAFixtureFailsCleanly) {
  // Cut a real checkpoint at many points: each prefix must raise IoError, never crash,
  // never return a result as if whole.
  for (const char* name : {"deit_mini.pth", "deit_mini.safetensors"}) {
    Bytes full = fixture_bytes(name);
    for (size_t cut = 0; cut < full.size(); cut += 1 + full.size() / 97) {
      EXPECT_THROW(parse_tensor_file(ByteView(full.data(), cut), name), IoError)
          << name << " cut at " << cut;
    }
  }
}

}  // namespace
}  // namespace attnlab::io
