// IDX (MNIST-family) reader and a bounded gzip inflater. IDX payloads are big-endian; they
// are byte-swapped into the little-endian RawTensor. gunzip caps its output while it
// inflates, so a small hostile .gz cannot expand into an unbounded allocation.
#include "core/io/idx.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/io/file_bytes.h"
#include "core/io/inflate.h"

namespace attnlab::io {

namespace {

constexpr uint8_t kGzipMagic0 = 0x1f, kGzipMagic1 = 0x8b;
// Largest decompressed IDX that read_idx accepts.
constexpr uint64_t kMaxIdxBytes = uint64_t(4) << 30;
constexpr size_t kMaxIdxDims = 8;

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", b);
  return buf;
}

std::optional<DType> idx_dtype(uint8_t code) {
  switch (code) {
    case 0x08:
      return DType::U8;
    case 0x09:
      return DType::I8;
    case 0x0B:
      return DType::I16;
    case 0x0C:
      return DType::I32;
    case 0x0D:
      return DType::F32;
    case 0x0E:
      return DType::F64;
    default:
      return std::nullopt;
  }
}

// Copies big-endian elements of `elem` bytes each into `out`, reversing each element.
void copy_swapped(ByteView in, size_t elem, std::vector<uint8_t>& out) {
  out.resize(in.size);
  if (elem == 1) {
    std::copy(in.data, in.data + in.size, out.begin());
    return;
  }
  for (size_t i = 0; i < in.size; i += elem)
    std::reverse_copy(in.data + i, in.data + i + elem, out.begin() + static_cast<ptrdiff_t>(i));
}

// Size hint from the gzip trailer (ISIZE, the size mod 2^32); inflate_bounded clamps it.
uint64_t gzip_isize(ByteView data) {
  if (data.size < 18) return 0;  // smaller than any gzip header + trailer
  const uint8_t* t = data.data + data.size - 4;
  return uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 | uint64_t(t[3]) << 24;
}

}  // namespace

RawTensor parse_idx(ByteView data, const std::string& file) {
  if (data.size == 0) throw IoError(IoErrorKind::Empty, file, "empty file; expected an IDX file");
  ByteReader r(data, file);
  uint8_t m0 = r.u8("IDX magic"), m1 = r.u8("IDX magic");
  if (m0 != 0 || m1 != 0)
    r.fail_at(
        IoErrorKind::BadHeader, 0,
        "not an IDX file: starts " + hex_byte(m0) + " " + hex_byte(m1) + "; expected 0x00 0x00");
  uint8_t code = r.u8("IDX element type");
  std::optional<DType> dtype = idx_dtype(code);
  if (!dtype)
    r.fail_at(
        IoErrorKind::UnknownDType, 2,
        "IDX element type " + hex_byte(code) + "; expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E");
  uint8_t ndim = r.u8("IDX dimension count");
  if (ndim == 0 || ndim > kMaxIdxDims)
    r.fail_at(IoErrorKind::BadHeader, 3,
              "IDX has " + std::to_string(ndim) + " dimensions; expected 1 to " +
                  std::to_string(kMaxIdxDims));

  RawTensor t;
  t.dtype = *dtype;
  for (uint8_t i = 0; i < ndim; ++i) t.shape.push_back(r.u32be("IDX dimension"));
  // Up to 8 u32 dimensions: the size can overflow 64 bits.
  const std::optional<int64_t> nbytes = checked_nbytes(t.shape, t.dtype);
  if (!nbytes)
    r.fail(IoErrorKind::LimitExceeded,
           "IDX shape " + t.describe() + " is too large: its size overflows 64 bits");
  const uint64_t want = static_cast<uint64_t>(*nbytes);

  uint64_t got = r.remaining();
  if (got < want)
    r.fail(IoErrorKind::Truncated, "expected " + std::to_string(want) + " payload bytes for " +
                                       t.describe() + " but got " + std::to_string(got));
  if (got > want)
    r.fail_at(IoErrorKind::ShapeMismatch, r.pos() + want,
              std::to_string(got - want) + " trailing byte(s) after the " + std::to_string(want) +
                  " payload bytes expected for " + t.describe());
  copy_swapped(r.bytes(static_cast<size_t>(want), "IDX payload"), dtype_size(t.dtype), t.bytes);
  return t;
}

std::vector<uint8_t> gunzip(ByteView data, const std::string& file, uint64_t max_out) {
  ByteReader r(data, file);
  uint8_t m0 = r.u8("gzip magic"), m1 = r.u8("gzip magic");
  if (m0 != kGzipMagic0 || m1 != kGzipMagic1)
    r.fail_at(
        IoErrorKind::BadHeader, 0,
        "not gzip data: starts " + hex_byte(m0) + " " + hex_byte(m1) + "; expected 0x1F 0x8B");

  return inflate_bounded(data, DeflateWrapper::Gzip, max_out, gzip_isize(data), file);
}

RawTensor read_idx(const std::string& path) {
  std::vector<uint8_t> buf = read_file_bytes(path);
  ByteView view(buf.data(), buf.size());
  if (buf.size() < 2 || buf[0] != kGzipMagic0 || buf[1] != kGzipMagic1)
    return parse_idx(view, path);
  std::vector<uint8_t> raw = gunzip(view, path, kMaxIdxBytes);
  buf = {};  // the compressed bytes are no longer needed
  try {
    return parse_idx(ByteView(raw.data(), raw.size()), path);
  } catch (const IoError& e) {
    // Offsets now refer to the decompressed stream, not the file on disk: say so.
    throw IoError(e.kind(), e.file(), e.message() + " (offset within the decompressed data)",
                  e.offset(), e.key());
  }
}

}  // namespace attnlab::io
