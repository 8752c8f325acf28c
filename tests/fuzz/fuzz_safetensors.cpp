// libFuzzer target: parse_safetensors on arbitrary bytes. Only IoError may escape the
// parser; anything else (a crash, a sanitizer report, another exception) is a bug.
// Parsed files are re-encoded and re-parsed: the round trip must be exact.
#include <cstdint>
#include <cstdlib>

#include "core/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab::io;
  try {
    SafetensorsFile f = parse_safetensors(ByteView(data, size), "fuzz");
    std::vector<uint8_t> again = encode_safetensors(f.tensors, f.metadata);
    SafetensorsFile g = parse_safetensors(ByteView(again.data(), again.size()), "fuzz-reencoded");
    if (g.tensors.size() != f.tensors.size() || g.metadata != f.metadata) std::abort();
    for (const auto& e : f.tensors)
      if (!g.tensors.find(e.name) || !(*g.tensors.find(e.name) == e.tensor)) std::abort();
  } catch (const IoError&) {
  }
  return 0;
}
