// Bounded deflate decompression, shared by the zip reader (raw deflate entries of
// re-zipped checkpoints) and gunzip (IDX datasets). Output is produced in chunks and
// capped while inflating, so a small hostile stream can never grow into an unbounded
// allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"

namespace attnlab::io {

// Deflate cannot expand data by more than about 1032:1 (RFC 1951 block limits): a
// declared size beyond that is a lie, whatever the container says.
constexpr uint64_t kMaxDeflateRatio = 1032;

enum class DeflateWrapper { Raw, Gzip };

// Inflates the first stream in `data`. Never produces more than `max_out` bytes;
// `reserve` is a size hint (clamped to what the input could produce). Throws IoError
// naming `file`: BadHeader for corrupt data, Truncated when the stream ends early,
// LimitExceeded past `max_out`.
std::vector<uint8_t> inflate_bounded(ByteView data, DeflateWrapper wrapper, uint64_t max_out,
                                     uint64_t reserve, const std::string& file);

}  // namespace attnlab::io
