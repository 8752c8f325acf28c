#include "core/io/inflate.h"

#include <zlib.h>

#include <algorithm>

namespace attnlab::io {

namespace {

constexpr size_t kInflateChunk = 64 * 1024;

// Ends the inflate stream however inflate_bounded leaves (return or throw).
struct InflateGuard {
  z_stream* zs;
  ~InflateGuard() { inflateEnd(zs); }
};

}  // namespace

std::vector<uint8_t> inflate_bounded(ByteView data, DeflateWrapper wrapper, uint64_t max_out,
                                     uint64_t reserve, const std::string& file) {
  const char* kind = wrapper == DeflateWrapper::Gzip ? "gzip" : "deflate";
  z_stream zs{};
  // Raw: negative window bits. Gzip: 16 + bits (header, CRC-32 and length trailer checked).
  if (inflateInit2(&zs, wrapper == DeflateWrapper::Gzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK)
    throw IoError(IoErrorKind::LimitExceeded, file, "zlib could not allocate its state");
  InflateGuard guard{&zs};

  std::vector<uint8_t> out;
  const uint64_t producible =
      data.size > UINT64_MAX / kMaxDeflateRatio ? UINT64_MAX : data.size * kMaxDeflateRatio;
  out.reserve(static_cast<size_t>(std::min({reserve, max_out, producible})));
  std::vector<uint8_t> chunk(kInflateChunk);
  size_t fed = 0;  // input bytes handed to zlib so far
  for (;;) {
    // avail_in is 32-bit; hand over large inputs piecewise.
    if (zs.avail_in == 0 && fed < data.size) {
      size_t n = std::min<size_t>(data.size - fed, size_t(1) << 30);
      zs.next_in = const_cast<Bytef*>(data.data + fed);  // zlib's API is not const-correct
      zs.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    int ret = inflate(&zs, Z_NO_FLUSH);
    size_t have = chunk.size() - zs.avail_out;
    int64_t in_pos = static_cast<int64_t>(zs.total_in);
    if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR)
      throw IoError(IoErrorKind::BadHeader, file,
                    std::string("corrupt ") + kind + " stream (" + (zs.msg ? zs.msg : "no detail") +
                        "); expected valid deflate data",
                    in_pos);
    if (ret == Z_MEM_ERROR)
      throw IoError(IoErrorKind::LimitExceeded, file, "zlib ran out of memory", in_pos);
    // Checked before appending, so memory use never passes the cap.
    if (have > max_out - out.size())
      throw IoError(IoErrorKind::LimitExceeded, file,
                    std::string(kind) + " data inflates to more than the limit of " +
                        std::to_string(max_out) + " bytes",
                    in_pos);
    out.insert(out.end(), chunk.data(), chunk.data() + have);
    if (ret == Z_STREAM_END) break;  // anything after the first stream is ignored
    // Output space left over while all input is consumed: zlib needs input that is not there.
    if (zs.avail_in == 0 && fed == data.size && zs.avail_out != 0)
      throw IoError(IoErrorKind::Truncated, file,
                    std::string(kind) + " stream ends after " + std::to_string(data.size) +
                        " bytes; expected more compressed data" +
                        (wrapper == DeflateWrapper::Gzip ? " and the 8-byte trailer" : ""),
                    in_pos);
  }
  return out;
}

}  // namespace attnlab::io
