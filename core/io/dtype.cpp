#include "core/io/dtype.h"

namespace attnlab::io {

namespace {
struct DTypeInfo {
  DType type;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
};
const DTypeInfo& info(DType t) {
  return kDTypes[static_cast<size_t>(t)];
}
}  // namespace

size_t dtype_size(DType t) {
  return info(t).size;
}
const char* dtype_name(DType t) {
  return info(t).name;
}
bool is_floating(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return d.type;
  return std::nullopt;
}

}  // namespace attnlab::io
