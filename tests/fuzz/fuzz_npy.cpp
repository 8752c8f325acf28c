// libFuzzer target for the .npy parser. Any input must either parse or throw IoError;
// any other exception, crash or sanitizer report is a bug. Inputs that do parse are also
// re-encoded and re-parsed, which must give back the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab::io;
  RawTensor t;
  try {
    t = parse_npy(ByteView(data, size), "fuzz.npy");
  } catch (const IoError&) {
    return 0;  // malformed input, rejected as designed
  }
  // Round trip: everything parse_npy returns, encode_npy must be able to write back.
  std::vector<uint8_t> again = encode_npy(t);
  if (!(parse_npy(ByteView(again.data(), again.size()), "fuzz-reencoded.npy") == t)) abort();
  return 0;
}
