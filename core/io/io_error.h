// IoError: the one exception type of core/io. Every malformed input becomes an IoError
// that names the file, where in it (byte offset and/or key) and what was expected, so a
// user can tell a truncated download from a foreign format. Parsers never return a
// partial result: they throw before handing anything back.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attnlab::io {

enum class IoErrorKind {
  NotFound,           // file missing or unreadable
  ReadFailed,         // OS-level read error
  WriteFailed,        // could not write / rename the output
  Empty,              // 0-byte file
  Truncated,          // ran past the end of the data
  BadHeader,          // magic, header length or header structure wrong
  BadJson,            // safetensors header is not valid JSON
  BadField,           // a field has the wrong type or an impossible value
  UnknownDType,       // dtype / storage type / descr we do not know
  ShapeMismatch,      // shape x dtype does not match the bytes given
  OffsetOutOfRange,   // data offsets outside the file / storage
  OverlappingData,    // two tensors claim the same bytes
  BadZip,             // zip structure broken
  MissingEntry,       // archive lacks a required record (data.pkl, a storage)
  ChecksumMismatch,   // zip CRC-32 wrong
  UnknownOpcode,      // pickle opcode we do not know
  BadPickle,          // pickle stack/structure broken
  RefusedGlobal,      // pickle references code that could execute: refused
  UnsupportedFormat,  // recognised, but not supported (legacy torch.save, big-endian, ...)
  LimitExceeded,      // a size limit that protects memory was exceeded
};

const char* io_error_kind_name(IoErrorKind k);

class IoError : public std::runtime_error {
 public:
  static constexpr int64_t kNoOffset = -1;

  IoError(IoErrorKind kind, std::string file, std::string message, int64_t offset = kNoOffset,
          std::string key = {});

  IoErrorKind kind() const { return kind_; }
  const std::string& file() const { return file_; }
  const std::string& message() const { return message_; }
  int64_t offset() const { return offset_; }
  const std::string& key() const { return key_; }

 private:
  IoErrorKind kind_;
  std::string file_, message_;
  int64_t offset_;
  std::string key_;
};

}  // namespace attnlab::io
