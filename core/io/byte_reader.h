// ByteView and ByteReader: bounds-checked little/big-endian reads over a byte buffer.
// Every read that would pass the end throws IoError(Truncated) naming what was being
// read and where — the building block that keeps the parsers crash-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/io/io_error.h"

namespace attnlab::io {

struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;

  ByteView() = default;
  ByteView(const uint8_t* d, size_t n) : data(d), size(n) {}
  // Sub-range [offset, offset+n); the caller has checked the bounds (see in_bounds).
  ByteView sub(size_t offset, size_t n) const { return {data + offset, n}; }
  std::string_view str() const { return {reinterpret_cast<const char*>(data), size}; }
};

// True when [offset, offset + n) lies within a buffer of `size` bytes (overflow-safe).
inline bool in_bounds(uint64_t offset, uint64_t n, uint64_t size) {
  return offset <= size && n <= size - offset;
}

class ByteReader {
 public:
  ByteReader(ByteView data, const std::string& file, size_t pos = 0)
      : data_(data), file_(file), pos_(pos) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return pos_ <= data_.size ? data_.size - pos_ : 0; }
  bool at_end() const { return pos_ >= data_.size; }
  void seek(size_t pos, const char* what);

  uint8_t u8(const char* what);
  uint16_t u16le(const char* what);
  uint32_t u32le(const char* what);
  uint64_t u64le(const char* what);
  uint32_t u32be(const char* what);
  ByteView bytes(size_t n, const char* what);
  // Bytes up to (not including) `delim`, consuming the delimiter.
  std::string_view until(uint8_t delim, const char* what);

  [[noreturn]] void fail(IoErrorKind kind, const std::string& message) const;
  [[noreturn]] void fail_at(IoErrorKind kind, size_t offset, const std::string& message) const;

 private:
  void need(size_t n, const char* what) const;
  ByteView data_;
  const std::string& file_;
  size_t pos_;
};

}  // namespace attnlab::io
