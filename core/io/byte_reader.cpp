#include "core/io/byte_reader.h"

#include <cstring>

namespace attnlab::io {

void ByteReader::need(size_t n, const char* what) const {
  if (!in_bounds(pos_, n, data_.size))
    fail(IoErrorKind::Truncated, std::string("needed ") + std::to_string(n) + " byte(s) for " +
                                     what + " but only " + std::to_string(remaining()) + " remain");
}

void ByteReader::seek(size_t pos, const char* what) {
  if (pos > data_.size)
    fail_at(IoErrorKind::OffsetOutOfRange, pos,
            std::string(what) + " lies past the end (size " + std::to_string(data_.size) + ")");
  pos_ = pos;
}

uint8_t ByteReader::u8(const char* what) {
  need(1, what);
  return data_.data[pos_++];
}

uint16_t ByteReader::u16le(const char* what) {
  need(2, what);
  uint16_t v = uint16_t(data_.data[pos_] | (data_.data[pos_ + 1] << 8));
  pos_ += 2;
  return v;
}

uint32_t ByteReader::u32le(const char* what) {
  need(4, what);
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | data_.data[pos_ + i];
  pos_ += 4;
  return v;
}

uint64_t ByteReader::u64le(const char* what) {
  need(8, what);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | data_.data[pos_ + i];
  pos_ += 8;
  return v;
}

uint32_t ByteReader::u32be(const char* what) {
  need(4, what);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | data_.data[pos_ + i];
  pos_ += 4;
  return v;
}

ByteView ByteReader::bytes(size_t n, const char* what) {
  need(n, what);
  ByteView v = data_.sub(pos_, n);
  pos_ += n;
  return v;
}

std::string_view ByteReader::until(uint8_t delim, const char* what) {
  if (at_end()) need(1, what);
  const void* hit = std::memchr(data_.data + pos_, delim, data_.size - pos_);
  if (!hit) fail(IoErrorKind::Truncated, std::string("unterminated ") + what + " (no end-of-line)");
  size_t end = static_cast<size_t>(static_cast<const uint8_t*>(hit) - data_.data);
  std::string_view s(reinterpret_cast<const char*>(data_.data + pos_), end - pos_);
  pos_ = end + 1;
  return s;
}

void ByteReader::fail(IoErrorKind kind, const std::string& message) const {
  fail_at(kind, pos_, message);
}

void ByteReader::fail_at(IoErrorKind kind, size_t offset, const std::string& message) const {
  throw IoError(kind, file_, message, static_cast<int64_t>(offset));
}

}  // namespace attnlab::io
