// Test-only builders for the byte formats the parsers read: stored zip archives (the
// layout torch.save writes) and hand-assembled pickles. Lets the malformed-input tests
// make exactly the broken file they describe, without Python.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::testing {

using Bytes = std::vector<uint8_t>;

struct ZipOptions {
  bool deflate = false;  // method 8 instead of stored
  bool zip64 = false;    // 0xFFFFFFFF sizes/offsets + zip64 extra fields and end records
};

// A zip with correct CRCs, entries in the given order (stored unless options say otherwise).
Bytes make_zip(const std::vector<std::pair<std::string, Bytes>>& entries, ZipOptions options = {});

// Pickle assembly: each call appends opcodes.
class PickleWriter {
 public:
  PickleWriter& proto(int v = 2);
  PickleWriter& raw(std::initializer_list<uint8_t> bytes);
  PickleWriter& op(char c) {
    out_.push_back(uint8_t(c));
    return *this;
  }
  PickleWriter& str(const std::string& s);                                   // BINUNICODE
  PickleWriter& global(const std::string& module, const std::string& name);  // GLOBAL
  PickleWriter& int1(uint8_t v);                                             // BININT1
  PickleWriter& int4(int32_t v);                                             // BININT
  PickleWriter& mark() { return op('('); }
  PickleWriter& tuple() { return op('t'); }
  PickleWriter& empty_tuple() { return op(')'); }
  PickleWriter& empty_dict() { return op('}'); }
  PickleWriter& reduce() { return op('R'); }
  PickleWriter& setitem() { return op('s'); }
  PickleWriter& setitems() { return op('u'); }
  PickleWriter& binpersid() { return op('Q'); }
  PickleWriter& newfalse() {
    out_.push_back(0x89);
    return *this;
  }
  PickleWriter& stop() { return op('.'); }
  // A torch tensor: _rebuild_tensor_v2(('storage', torch.<storage>, key, 'cpu', numel),
  // offset, size, stride, False, OrderedDict()).
  PickleWriter& tensor(const std::string& storage_type, const std::string& key, int numel,
                       int offset, const std::vector<int>& size, const std::vector<int>& stride);
  Bytes bytes() const { return out_; }

 private:
  PickleWriter& int_tuple(const std::vector<int>& v);
  Bytes out_;
};

// {'model': OrderedDict(name -> float32 tensor)} as torch.save writes it, with the given
// float values per tensor (1-D each).
Bytes make_pth(const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
               const std::string& archive = "archive", ZipOptions options = {});

// The same with shaped tensors, float32 or int64 (BatchNorm's num_batches_tracked), as a
// real checkpoint holds them: bytes are the little-endian C-order data.
struct ShapedTensor {
  std::string name;
  std::vector<int> shape;
  bool int64 = false;
  Bytes bytes;
};
// `container`: the key the state dict sits under ({'model': state_dict}, as DeiT releases
// it); "" for a bare state dict (DINO's and DINOv2's releases).
Bytes make_shaped_pth(const std::vector<ShapedTensor>& tensors,
                      const std::string& archive = "archive", ZipOptions options = {},
                      const std::string& container = "model");

// A TorchScript archive as torch.jit.save writes it: <archive>/data.pkl holding the module
// tree as "__torch__.…" objects (each gets its attribute dict by BUILD: "training", its
// submodules and tensors by the dotted names given, and on the root a typed dict tagged by
// torch.jit._pickle.restore_type_tag), constants.pkl, code/ and data/<key> storages. The
// code/ file is Python that would create the file `code_marker` if anything ran it.
Bytes make_torchscript(const std::vector<ShapedTensor>& tensors, const std::string& code_marker,
                       const std::string& archive = "model");

Bytes float_bytes(const std::vector<float>& v);

}  // namespace attnlab::testing
