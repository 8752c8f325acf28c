// NumPy .npy reader and writer. The header is a Python dict literal; it is read by the
// small, strict literal parser below (strings, True/False, tuples of non-negative ints)
// rather than anything that evaluates it. Every size derived from the header is
// overflow-checked and compared with the bytes actually present before anything is
// allocated, so a hostile header cannot make us allocate or read out of bounds.
#include "core/io/npy.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "core/io/file_bytes.h"

namespace attnlab::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy aligns the start of the data to 64 bytes so it can be memory-mapped efficiently.
constexpr size_t kAlign = 64;
// NPY_MAXDIMS is 64 in numpy 2; more than that is not a file numpy could have written.
constexpr size_t kMaxDims = 64;

// ---------------------------------------------------------------------------------------
// descr <-> DType

struct DescrInfo {
  const char* code;  // descr without the byte-order character
  DType type;
};
constexpr DescrInfo kDescrs[] = {
    {"f4", DType::F32}, {"f2", DType::F16}, {"i8", DType::I64},
    {"u1", DType::U8},  {"f8", DType::F64}, {"i4", DType::I32},
    {"i2", DType::I16}, {"i1", DType::I8},  {"b1", DType::Bool},
};

const char* descr_for(DType t) {
  switch (t) {
    case DType::F64:
      return "<f8";
    case DType::F32:
      return "<f4";
    case DType::F16:
      return "<f2";
    case DType::I64:
      return "<i8";
    case DType::I32:
      return "<i4";
    case DType::I16:
      return "<i2";
    // numpy spells single-byte types with '|' (byte order not applicable).
    case DType::I8:
      return "|i1";
    case DType::U8:
      return "|u1";
    case DType::Bool:
      return "|b1";
    case DType::BF16:
      break;
  }
  throw std::invalid_argument(std::string("numpy has no dtype for ") + dtype_name(t));
}

// The header's parsed fields, before they are checked against each other.
struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
  // Header offsets of the values, for error messages about them.
  size_t descr_pos = 0, fortran_pos = 0, shape_pos = 0;
};

// ---------------------------------------------------------------------------------------
// The dict literal parser. `base` is the file offset of the dict's first byte, so that
// error offsets point into the file rather than into the header string.

class HeaderParser {
 public:
  HeaderParser(std::string_view text, size_t base, const std::string& file)
      : s_(text), base_(base), file_(file) {}

  NpyHeader parse() {
    NpyHeader h;
    skip_ws();
    expect('{', "'{' opening the header dict");
    skip_ws();
    while (peek() != '}') {
      parse_entry(h);
      skip_ws();
      // Entries are separated by commas; a trailing comma before '}' is what numpy writes.
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after a dict entry");
      }
    }
    ++pos_;  // the '}'
    skip_ws();
    if (pos_ != s_.size()) fail("expected only padding (spaces, '\\n') after the header dict");
    return h;
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }
  [[noreturn]] void fail_at(size_t pos, const std::string& message) const {
    throw IoError(IoErrorKind::BadHeader, file_, "npy header: " + message,
                  static_cast<int64_t>(base_ + pos));
  }

 private:
  // 0 marks the end of the header; a NUL inside it is garbage and fails like any other.
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }

  void skip_ws() {
    while (!at_end() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  void expect(char c, const char* what) {
    if (at_end() || s_[pos_] != c) fail(std::string("expected ") + what);
    ++pos_;
  }

  void parse_entry(NpyHeader& h) {
    size_t key_pos = pos_;
    std::string key = parse_string("a quoted key ('descr', 'fortran_order' or 'shape')");
    skip_ws();
    expect(':', "':' after the key");
    skip_ws();
    if (key == "descr") {
      if (h.descr) fail_at(key_pos, "duplicate key 'descr'");
      // A list here is a structured (record) dtype, which is valid numpy but not a tensor.
      if (peek() == '[')
        throw IoError(IoErrorKind::UnsupportedFormat, file_,
                      "structured dtype (a field list in 'descr') is not supported; expected a "
                      "plain descr such as '<f4'",
                      static_cast<int64_t>(base_ + pos_));
      h.descr_pos = base_ + pos_;
      h.descr = parse_string("a quoted descr such as '<f4'");
    } else if (key == "fortran_order") {
      if (h.fortran_order) fail_at(key_pos, "duplicate key 'fortran_order'");
      h.fortran_pos = base_ + pos_;
      h.fortran_order = parse_bool();
    } else if (key == "shape") {
      if (h.shape) fail_at(key_pos, "duplicate key 'shape'");
      h.shape_pos = base_ + pos_;
      h.shape = parse_shape();
    } else {
      fail_at(key_pos, "unexpected key '" + key + "'; expected 'descr', 'fortran_order', 'shape'");
    }
  }

  std::string parse_string(const char* what) {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("expected ") + what);
    size_t start = ++pos_;
    while (!at_end() && s_[pos_] != quote) {
      // numpy never writes escapes in these strings; refusing them keeps the parser trivial.
      if (s_[pos_] == '\\') fail("escape sequences in header strings are not supported");
      if (s_[pos_] == '\n') fail("unterminated string (expected a closing quote)");
      ++pos_;
    }
    if (at_end()) fail_at(start - 1, "unterminated string (expected a closing quote)");
    std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'");
  }

  // "()", "(5,)", "(2, 3)", "(2, 3,)". "(5)" is an int in Python, not a tuple: refused.
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> dims;
    expect('(', "a tuple such as (2, 3) for 'shape'");
    skip_ws();
    bool saw_comma = false;
    while (peek() != ')') {
      if (dims.size() == kMaxDims)
        throw IoError(IoErrorKind::LimitExceeded, file_,
                      "npy header: more than " + std::to_string(kMaxDims) + " dimensions",
                      static_cast<int64_t>(base_ + pos_));
      dims.push_back(parse_dim());
      skip_ws();
      saw_comma = false;
      if (peek() == ',') {
        saw_comma = true;
        ++pos_;
        skip_ws();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape tuple");
      }
    }
    if (dims.size() == 1 && !saw_comma) fail("expected ',' in a one-element shape tuple, as (5,)");
    ++pos_;  // the ')'
    return dims;
  }

  int64_t parse_dim() {
    size_t start = pos_;
    if (peek() == '-') fail("negative dimension in 'shape'; expected a non-negative integer");
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer in 'shape'");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(v, int64_t{10}, &v) ||
          __builtin_add_overflow(v, int64_t{peek() - '0'}, &v))
        throw IoError(IoErrorKind::LimitExceeded, file_,
                      "npy header: dimension does not fit in 64 bits",
                      static_cast<int64_t>(base_ + start));
      ++pos_;
    }
    // Python 2 numpy wrote long integers as "3L".
    if (peek() == 'L') ++pos_;
    return v;
  }

  std::string_view s_;
  size_t base_;
  const std::string& file_;
  size_t pos_ = 0;
};

// Maps a descr to a DType, refusing anything we cannot hand back as a little-endian tensor.
DType dtype_from_descr(const std::string& descr, const std::string& file, size_t offset) {
  auto unsupported = [&](const std::string& why) -> IoError {
    return IoError(IoErrorKind::UnsupportedFormat, file,
                   "npy descr '" + descr + "': " + why +
                       "; expected one of <f4 <f2 <f8 <i8 <i4 <i2 |i1 |u1 |b1",
                   static_cast<int64_t>(offset), "descr");
  };
  if (descr.size() < 2) throw unsupported("unknown dtype");
  char order = descr[0];
  std::string_view code(descr);
  if (order == '<' || order == '>' || order == '|' || order == '=') code.remove_prefix(1);
  for (const auto& d : kDescrs) {
    if (code != d.code) continue;
    // Byte order is meaningless for single-byte types; for wider ones it must be little
    // ('=' is the writer's native order, and numpy only writes it from little-endian hosts).
    if (dtype_size(d.type) == 1) return d.type;
    if (order == '>') throw unsupported("big-endian data is not supported");
    if (order == '|') throw unsupported("byte order '|' is invalid for a multi-byte type");
    return d.type;
  }
  throw unsupported("unknown or unsupported dtype");
}

// Builds the padded header dict for a tensor of `dtype` and `shape` (without magic, version and
// length).
std::string header_dict(DType dtype, const std::vector<int64_t>& shape, size_t prefix_len) {
  std::string d = "{'descr': '";
  d += descr_for(dtype);
  d += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) d += ", ";
    d += std::to_string(shape[i]);
  }
  // Python's repr of a one-element tuple keeps the comma.
  if (shape.size() == 1) d += ',';
  d += "), }";
  // Pad with spaces so that prefix + dict + '\n' is a multiple of kAlign.
  size_t total = prefix_len + d.size() + 1;
  d.append((kAlign - total % kAlign) % kAlign, ' ');
  d += '\n';
  return d;
}

// Magic, version, header length and padded dict: everything before the data.
std::vector<uint8_t> header_bytes(DType dtype, const std::vector<int64_t>& shape) {
  // Version 1.0 has a 16-bit header length; fall back to 2.0 (32-bit) only when needed.
  std::string dict = header_dict(dtype, shape, kMagicLen + 2 + 2);
  uint8_t major = 1;
  if (dict.size() > 0xFFFF) {
    major = 2;
    dict = header_dict(dtype, shape, kMagicLen + 2 + 4);
  }
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back(major);
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(dict.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out.push_back(uint8_t(len >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  return out;
}

// The header of `t`, its byte count checked against its shape.
std::vector<uint8_t> encode_header(const RawTensor& t) {
  const std::optional<int64_t> nbytes = checked_nbytes(t.shape, t.dtype);
  if (!nbytes)
    throw std::invalid_argument("encode_npy: invalid or overflowing shape " + t.describe());
  if (static_cast<uint64_t>(*nbytes) != t.bytes.size())
    throw std::invalid_argument("encode_npy: " + t.describe() + " needs " +
                                std::to_string(*nbytes) + " bytes but has " +
                                std::to_string(t.bytes.size()));
  return header_bytes(t.dtype, t.shape);
}

}  // namespace

RawTensor parse_npy(ByteView data, const std::string& file) {
  if (data.size == 0) throw IoError(IoErrorKind::Empty, file, "empty file; expected an npy file");
  ByteReader r(data, file);
  // A foreign file is BadHeader; a cut-off npy file (magic prefix only) is Truncated.
  if (std::memcmp(data.data, kMagic, std::min(data.size, kMagicLen)) != 0)
    r.fail_at(IoErrorKind::BadHeader, 0, "not an npy file; expected the magic \\x93NUMPY");
  r.bytes(kMagicLen, "npy magic");

  uint8_t major = r.u8("npy major version");
  uint8_t minor = r.u8("npy minor version");
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    r.fail_at(IoErrorKind::UnsupportedFormat, kMagicLen,
              "npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  "; expected 1.0, 2.0 or 3.0");
  size_t header_len = major == 1 ? r.u16le("npy header length") : r.u32le("npy header length");
  size_t dict_pos = r.pos();
  ByteView dict = r.bytes(header_len, "npy header dict");

  NpyHeader h = HeaderParser(dict.str(), dict_pos, file).parse();
  // Missing keys are reported at the start of the dict, where they should have been.
  auto missing = [&](const char* key) {
    r.fail_at(IoErrorKind::BadHeader, dict_pos,
              std::string("npy header lacks the key '") + key +
                  "'; expected 'descr', 'fortran_order' and 'shape'");
  };
  if (!h.descr) missing("descr");
  if (!h.fortran_order) missing("fortran_order");
  if (!h.shape) missing("shape");

  RawTensor t;
  t.dtype = dtype_from_descr(*h.descr, file, h.descr_pos);
  if (*h.fortran_order)
    r.fail_at(IoErrorKind::UnsupportedFormat, h.fortran_pos,
              "Fortran-ordered arrays are not supported; expected fortran_order False "
              "(save with np.ascontiguousarray)");
  t.shape = std::move(*h.shape);

  const std::optional<int64_t> nbytes = checked_nbytes(t.shape, t.dtype);
  if (!nbytes)
    r.fail_at(IoErrorKind::LimitExceeded, h.shape_pos,
              "shape " + t.describe() + " is too large: its size overflows 64 bits");
  const uint64_t want = static_cast<uint64_t>(*nbytes);

  size_t data_pos = r.pos();
  uint64_t got = r.remaining();
  if (got < want)
    r.fail(IoErrorKind::Truncated, "expected " + std::to_string(want) + " data bytes for " +
                                       t.describe() + " but got " + std::to_string(got));
  if (got > want)
    r.fail_at(IoErrorKind::ShapeMismatch, data_pos + want,
              std::to_string(got - want) + " trailing byte(s) after the " + std::to_string(want) +
                  " data bytes expected for " + t.describe());

  ByteView payload = r.bytes(static_cast<size_t>(want), "npy data");
  t.bytes.assign(payload.data, payload.data + payload.size);
  // numpy reads any non-zero byte as True; canonicalise so consumers may rely on 0/1.
  if (t.dtype == DType::Bool)
    for (uint8_t& b : t.bytes) b = b != 0;
  return t;
}

RawTensor read_npy(const std::string& path) {
  std::vector<uint8_t> buf = read_file_bytes(path);
  return parse_npy(ByteView(buf.data(), buf.size()), path);
}

std::vector<uint8_t> encode_npy(const RawTensor& t) {
  std::vector<uint8_t> out = encode_header(t);
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

std::vector<uint8_t> npy_header(DType dtype, const std::vector<int64_t>& shape) {
  if (!checked_nbytes(shape, dtype))
    throw std::invalid_argument("npy_header: invalid or overflowing shape");
  return header_bytes(dtype, shape);
}

void write_npy(const std::string& path, const RawTensor& t) {
  // Encode the header first so that an unencodable tensor throws before any file exists,
  // and stream the data straight from the tensor rather than copying it.
  std::vector<uint8_t> header = encode_header(t);
  write_file_atomic(path, [&](const ByteSink& sink) {
    sink(header.data(), header.size());
    if (!t.bytes.empty()) sink(t.bytes.data(), t.bytes.size());
  });
}

}  // namespace attnlab::io
