// Element types of the tensors that attnlab reads and writes, independent of LibTorch,
// so the parsers (and their fuzzers) build without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace attnlab::io {

enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

// Bytes per element.
size_t dtype_size(DType t);
// F64, F32, F16, BF16.
bool is_floating(DType t);
// The safetensors spelling ("F32", "BF16", "I64", "BOOL", ...), also used for display.
const char* dtype_name(DType t);
// Parses a safetensors dtype string; nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace attnlab::io
