// IDX files (the MNIST / Fashion-MNIST format), raw or gzipped, as Debian installs them
// under /usr/share/datasets/. Big-endian payloads are converted to little-endian.
// Element types: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"
#include "core/io/raw_tensor.h"

namespace attnlab::io {

// Parses an uncompressed IDX buffer.
RawTensor parse_idx(ByteView data, const std::string& file);
// Reads a file; gunzips first when it starts with the gzip magic (1f 8b).
RawTensor read_idx(const std::string& path);

// Inflates a gzip stream, refusing to produce more than `max_out` bytes (a guard against
// decompression bombs). Throws IoError(BadHeader / Truncated / LimitExceeded).
std::vector<uint8_t> gunzip(ByteView data, const std::string& file, uint64_t max_out);

}  // namespace attnlab::io
