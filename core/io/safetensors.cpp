// safetensors reader/writer. Layout: u64 little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data section; offsets are relative to the data section.
#include "core/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/io/file_bytes.h"

namespace attnlab::io {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit (100 MB)

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

// Parses one tensor entry, throwing IoError(key = name) for anything malformed.
Entry parse_entry(const std::string& name, const nlohmann::json& j, uint64_t data_size,
                  const std::string& file) {
  auto bad = [&](IoErrorKind kind, const std::string& msg) -> IoError {
    return IoError(kind, file, msg, IoError::kNoOffset, name);
  };
  if (!j.is_object()) throw bad(IoErrorKind::BadField, "entry is not a JSON object");
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      throw bad(IoErrorKind::BadField,
                "unexpected field '" + k + "'; expected dtype, shape, data_offsets");
  }
  auto dt = j.find("dtype");
  if (dt == j.end() || !dt->is_string())
    throw bad(IoErrorKind::BadField, "missing or non-string 'dtype'");
  auto dtype = dtype_from_name(dt->get_ref<const std::string&>());
  if (!dtype)
    throw bad(IoErrorKind::UnknownDType,
              "unknown dtype '" + dt->get<std::string>() +
                  "'; expected one of F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL");
  auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array())
    throw bad(IoErrorKind::BadField, "missing or non-array 'shape'");
  Entry e{name, *dtype, {}, 0, 0};
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned())
      throw bad(IoErrorKind::BadField, "shape must hold non-negative integers, got " + d.dump());
    uint64_t v = d.get<uint64_t>();
    if (v > uint64_t(INT64_MAX))
      throw bad(IoErrorKind::ShapeMismatch, "shape " + sh->dump() + " overflows");
    e.shape.push_back(static_cast<int64_t>(v));
  }
  const std::optional<int64_t> nbytes = checked_nbytes(e.shape, e.dtype);
  if (!nbytes)
    throw bad(IoErrorKind::ShapeMismatch,
              "shape " + sh->dump() + " is too large: its size overflows 64 bits");
  auto off = j.find("data_offsets");
  if (off == j.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    throw bad(IoErrorKind::BadField,
              "'data_offsets' must be [begin, end] of non-negative integers");
  e.begin = (*off)[0].get<uint64_t>();
  e.end = (*off)[1].get<uint64_t>();
  if (e.end < e.begin)
    throw bad(IoErrorKind::OffsetOutOfRange,
              "data_offsets end " + std::to_string(e.end) + " < begin " + std::to_string(e.begin));
  if (e.end > data_size)
    throw bad(IoErrorKind::OffsetOutOfRange,
              "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                  "] run past the data section (" + std::to_string(data_size) + " bytes)");
  if (uint64_t(*nbytes) != e.end - e.begin)
    throw bad(IoErrorKind::ShapeMismatch, "shape " + sh->dump() + " x " + dtype_name(e.dtype) +
                                              " needs " + std::to_string(*nbytes) +
                                              " bytes but data_offsets give " +
                                              std::to_string(e.end - e.begin));
  return e;
}

}  // namespace

SafetensorsFile parse_safetensors(ByteView data, const std::string& file) {
  if (data.size == 0) throw IoError(IoErrorKind::Empty, file, "file is empty (0 bytes)");
  ByteReader r(data, file);
  uint64_t n = r.u64le("the 8-byte header length");
  if (n > data.size - 8)
    throw IoError(IoErrorKind::BadHeader, file,
                  "header length " + std::to_string(n) + " runs past the end of the file (" +
                      std::to_string(data.size - 8) + " bytes follow the length field)",
                  0);
  if (n > kMaxHeaderBytes)
    throw IoError(IoErrorKind::LimitExceeded, file,
                  "header length " + std::to_string(n) + " exceeds the 100 MB limit", 0);
  ByteView header = r.bytes(static_cast<size_t>(n), "the JSON header");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw IoError(IoErrorKind::BadJson, file, std::string("header is not valid JSON: ") + e.what(),
                  static_cast<int64_t>(8 + (e.byte > 0 ? e.byte - 1 : 0)));
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for a double ("2e704") is out_of_range
    // (found by fuzz_safetensors).
    throw IoError(IoErrorKind::BadJson, file, std::string("header is not valid JSON: ") + e.what(),
                  8);
  }
  if (!j.is_object())
    throw IoError(IoErrorKind::BadHeader, file, "header JSON must be an object", 8);

  const uint64_t data_start = 8 + n;
  const uint64_t data_size = data.size - data_start;
  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        throw IoError(IoErrorKind::BadField, file, "must be an object of strings",
                      IoError::kNoOffset, name);
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string())
          throw IoError(IoErrorKind::BadField, file,
                        "metadata value must be a string, got " + mv.dump(), IoError::kNoOffset,
                        "__metadata__." + mk);
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(name, value, data_size, file));
  }

  // Disjoint ranges: sort by begin and compare neighbours (empty tensors take no bytes).
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin == e.end) continue;
    if (prev && e.begin < prev->end)
      throw IoError(IoErrorKind::OverlappingData, file,
                    "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                        "] overlap those of '" + prev->name + "' [" + std::to_string(prev->begin) +
                        ", " + std::to_string(prev->end) + "]",
                    IoError::kNoOffset, e.name);
    prev = &e;
  }

  for (Entry& e : entries) {
    RawTensor t;
    t.dtype = e.dtype;
    t.shape = std::move(e.shape);
    const uint8_t* p = data.data + data_start + e.begin;
    t.bytes.assign(p, p + (e.end - e.begin));
    out.tensors.add(e.name, std::move(t));
  }
  return out;
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_safetensors(ByteView(bytes.data(), bytes.size()), path);
}

std::vector<uint8_t> encode_safetensors(const TensorDict& tensors,
                                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& e : tensors) {
    const std::optional<int64_t> expected = checked_nbytes(e.tensor.shape, e.tensor.dtype);
    if (!expected || uint64_t(*expected) != e.tensor.bytes.size())
      throw std::invalid_argument("tensor '" + e.name + "' " + e.tensor.describe() + " holds " +
                                  std::to_string(e.tensor.bytes.size()) + " bytes, expected " +
                                  (expected ? std::to_string(*expected) : "a valid shape"));
    if (e.name == "__metadata__") throw std::invalid_argument("'__metadata__' is reserved");
    header[e.name] = {{"dtype", dtype_name(e.tensor.dtype)},
                      {"shape", e.tensor.shape},
                      {"data_offsets", {offset, offset + e.tensor.bytes.size()}}};
    offset += e.tensor.bytes.size();
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // keep the data section 8-byte aligned
  std::vector<uint8_t> out(8 + json.size() + offset);
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = uint8_t(n >> (8 * i));
  std::memcpy(out.data() + 8, json.data(), json.size());
  uint8_t* p = out.data() + 8 + json.size();
  for (const auto& e : tensors) {
    if (!e.tensor.bytes.empty()) std::memcpy(p, e.tensor.bytes.data(), e.tensor.bytes.size());
    p += e.tensor.bytes.size();
  }
  return out;
}

void write_safetensors(const std::string& path, const TensorDict& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<uint8_t> bytes = encode_safetensors(tensors, metadata);
  write_file_atomic(path, [&](const ByteSink& sink) { sink(bytes.data(), bytes.size()); });
}

}  // namespace attnlab::io
