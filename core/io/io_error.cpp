#include "core/io/io_error.h"

namespace attnlab::io {

const char* io_error_kind_name(IoErrorKind k) {
  switch (k) {
    case IoErrorKind::NotFound:
      return "not found";
    case IoErrorKind::ReadFailed:
      return "read failed";
    case IoErrorKind::WriteFailed:
      return "write failed";
    case IoErrorKind::Empty:
      return "empty file";
    case IoErrorKind::Truncated:
      return "truncated";
    case IoErrorKind::BadHeader:
      return "bad header";
    case IoErrorKind::BadJson:
      return "bad JSON";
    case IoErrorKind::BadField:
      return "bad field";
    case IoErrorKind::UnknownDType:
      return "unknown dtype";
    case IoErrorKind::ShapeMismatch:
      return "shape/bytes mismatch";
    case IoErrorKind::OffsetOutOfRange:
      return "offset out of range";
    case IoErrorKind::OverlappingData:
      return "overlapping data";
    case IoErrorKind::BadZip:
      return "bad zip";
    case IoErrorKind::MissingEntry:
      return "missing entry";
    case IoErrorKind::ChecksumMismatch:
      return "checksum mismatch";
    case IoErrorKind::UnknownOpcode:
      return "unknown pickle opcode";
    case IoErrorKind::BadPickle:
      return "bad pickle";
    case IoErrorKind::RefusedGlobal:
      return "refused global";
    case IoErrorKind::UnsupportedFormat:
      return "unsupported format";
    case IoErrorKind::LimitExceeded:
      return "limit exceeded";
  }
  return "error";
}

namespace {
std::string compose(const std::string& file, const std::string& message, int64_t offset,
                    const std::string& key) {
  std::string s = file.empty() ? std::string("<memory>") : file;
  s += ": ";
  if (!key.empty()) s += "'" + key + "': ";
  if (offset != IoError::kNoOffset) s += "at byte " + std::to_string(offset) + ": ";
  return s + message;
}
}  // namespace

IoError::IoError(IoErrorKind kind, std::string file, std::string message, int64_t offset,
                 std::string key)
    : std::runtime_error(compose(file, message, offset, key)),
      kind_(kind),
      file_(std::move(file)),
      message_(std::move(message)),
      offset_(offset),
      key_(std::move(key)) {}

}  // namespace attnlab::io
