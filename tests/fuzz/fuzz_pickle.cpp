// libFuzzer target: the restricted unpickler on arbitrary bytes, with a storage
// provider that serves a fixed 256-byte buffer for keys "0".."3" and nothing else, so
// tensor rebuilding (offsets, strides, views) is exercised too. Only IoError may escape.
#include <cstdint>
#include <string>

#include "core/io/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab::io;
  static const uint8_t storage[256] = {1, 2, 3, 4};
  pickle::StorageProvider provider = [](const std::string& key) -> std::optional<ByteView> {
    if (key.size() == 1 && key[0] >= '0' && key[0] <= '3') return ByteView(storage, sizeof storage);
    return std::nullopt;
  };
  pickle::Limits limits;
  limits.max_nodes = 1 << 20;
  limits.max_tensor_bytes = 64 << 20;
  try {
    pickle::Document doc = pickle::unpickle(ByteView(data, size), "fuzz", provider, limits);
    for (pickle::NodeId i = 0; i < doc.nodes.size(); ++i) (void)pickle::describe(doc, i);
  } catch (const IoError&) {
  }
  return 0;
}
