// NumPy .npy files (format versions 1.0, 2.0 and 3.0): read and write. Supported element
// types: float32 (<f4), float16 (<f2), int64 (<i8), uint8 (|u1), plus float64, int32,
// int16, int8 and bool on read. C order only; Fortran order and big-endian data are
// refused with IoError(UnsupportedFormat). The header dict is parsed by a small literal
// parser — nothing in it is evaluated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"
#include "core/io/raw_tensor.h"

namespace attnlab::io {

RawTensor parse_npy(ByteView data, const std::string& file);
RawTensor read_npy(const std::string& path);

// Encodes as format 1.0 (2.0 if the header needs it). Throws std::invalid_argument for
// a dtype numpy cannot represent (BF16).
std::vector<uint8_t> encode_npy(const RawTensor& t);
// Everything before the data of a C-ordered tensor of `dtype` and `shape`: for writers that
// stream the data after it (attnlab embed's rows). std::invalid_argument as encode_npy.
std::vector<uint8_t> npy_header(DType dtype, const std::vector<int64_t>& shape);
// Atomic: writes a temporary beside `path`, then renames.
void write_npy(const std::string& path, const RawTensor& t);

}  // namespace attnlab::io
