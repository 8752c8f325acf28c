// safetensors write -> read round trips, including the dtypes the issue names
// (F32, F16, BF16, I64), metadata, empty tensors and the atomic writer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/io/file_bytes.h"
#include "core/io/safetensors.h"

namespace attnlab::io {
namespace {

RawTensor make(DType dt, std::vector<int64_t> shape, uint8_t seed) {
  RawTensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.bytes.resize(size_t(t.numel()) * dtype_size(dt));
  for (size_t i = 0; i < t.bytes.size(); ++i) t.bytes[i] = uint8_t(seed + i * 31);
  return t;
}

TEST(Safetensors, RoundTripAllDTypesAndMetadata) {
  TensorDict d;
  d.add("a.f32", make(DType::F32, {2, 3}, 1));
  d.add("b.f16", make(DType::F16, {5}, 2));
  d.add("c.bf16", make(DType::BF16, {1, 1, 7}, 3));
  d.add("d.i64", make(DType::I64, {4}, 4));
  d.add("e.scalar", make(DType::F32, {}, 5));
  d.add("f.empty", make(DType::F32, {0, 3}, 6));
  d.add("g.u8", make(DType::U8, {3}, 7));
  std::map<std::string, std::string> meta{{"arch", "\"vit\""}, {"note", "round trip"}};
  std::vector<uint8_t> bytes = encode_safetensors(d, meta);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | bytes[size_t(i)];
  EXPECT_EQ(header % 8, 0u) << "data section should be 8-byte aligned";

  SafetensorsFile back = parse_safetensors(ByteView(bytes.data(), bytes.size()), "mem");
  EXPECT_EQ(back.metadata, meta);
  ASSERT_EQ(back.tensors.size(), d.size());
  for (const auto& e : d) {
    const RawTensor* t = back.tensors.find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_TRUE(*t == e.tensor) << e.name;
  }
}

TEST(Safetensors, WriteReadFileAndNoTemporaryLeft) {
  auto dir = std::filesystem::temp_directory_path() / "attnlab_st_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  TensorDict d;
  d.add("w", make(DType::F32, {8, 8}, 9));
  std::string path = (dir / "w.safetensors").string();
  write_safetensors(path, d, {{"k", "v"}});
  SafetensorsFile back = read_safetensors(path);
  EXPECT_TRUE(*back.tensors.find("w") == *d.find("w"));
  EXPECT_EQ(back.metadata.at("k"), "v");
  size_t files = 0;
  for (const auto& it : std::filesystem::directory_iterator(dir)) files += it.is_regular_file();
  EXPECT_EQ(files, 1u) << "the atomic writer must not leave its temporary behind";
  std::filesystem::remove_all(dir);
}

TEST(Safetensors, FailedWriteLeavesNoFile) {
  auto dir = std::filesystem::temp_directory_path() / "attnlab_st_fail";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.bin").string();
  EXPECT_THROW(write_file_atomic(path,
                                 [](const ByteSink& sink) {
                                   sink("partial", 7);
                                   throw std::runtime_error("interrupted");
                                 }),
               std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "neither the file nor a temporary may remain";
  std::filesystem::remove_all(dir);
}

TEST(Safetensors, EncodeRejectsInconsistentTensor) {
  TensorDict d;
  RawTensor t = make(DType::F32, {4}, 1);
  t.bytes.pop_back();
  d.add("bad", t);
  EXPECT_THROW(encode_safetensors(d), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::io
