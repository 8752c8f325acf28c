// libFuzzer target: the whole .pth path — zip reader, restricted unpickler, container
// flattening — through parse_tensor_file. Only IoError may escape.
#include <cstdint>

#include "core/io/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab::io;
  try {
    TensorFile f = parse_tensor_file(ByteView(data, size), "fuzz");
    (void)f;
  } catch (const IoError&) {
  }
  return 0;
}
