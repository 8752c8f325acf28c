// safetensors: read and write (F32, F16, BF16, I64 and the other DTypes), with the
// `__metadata__` string map. Reading validates everything before returning: header
// length within the file, JSON well-formed, each entry {dtype, shape, data_offsets},
// known dtype, shape x dtype == byte range, ranges inside the data section and disjoint.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"
#include "core/io/raw_tensor.h"

namespace attnlab::io {

struct SafetensorsFile {
  TensorDict tensors;                           // in data-offset order
  std::map<std::string, std::string> metadata;  // __metadata__
};

SafetensorsFile parse_safetensors(ByteView data, const std::string& file);
SafetensorsFile read_safetensors(const std::string& path);

std::vector<uint8_t> encode_safetensors(const TensorDict& tensors,
                                        const std::map<std::string, std::string>& metadata = {});
// Atomic: writes a temporary beside `path`, then renames.
void write_safetensors(const std::string& path, const TensorDict& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace attnlab::io
