// A restricted unpickler for what torch.save writes — it interprets pickle opcodes as
// data and never executes anything. Globals are looked up in an allow-list of
// reconstructors it understands (OrderedDict, torch._utils._rebuild_tensor_v2,
// _rebuild_parameter, storages, set/frozenset, copyreg._reconstructor); any other class
// or function call becomes an opaque Object node with a note (so argparse.Namespace,
// optimizer objects or a user's config class are skipped, not fatal; a TorchScript
// module, "__torch__.…" in a torch.jit.save archive's data.pkl, is such an Object whose
// attributes BUILD sets, read as data like the rest); references to
// modules that can run code or touch the system (os, subprocess, builtins.eval, ...)
// are refused outright with IoError(RefusedGlobal) — no real checkpoint contains them.
//
// Values live in an arena (Document::nodes) and refer to each other by index, so
// self-referencing pickles cannot leak and deep ones cannot overflow the stack on
// destruction.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"
#include "core/io/raw_tensor.h"

namespace attnlab::io::pickle {

using NodeId = uint32_t;

enum class Kind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  String,
  Bytes,
  List,
  Tuple,
  Dict,
  Set,
  Global,   // a class/function reference: text = "module.name"
  Storage,  // a torch storage from a persistent id: text = key, dtype, int_value = numel
  Tensor,   // int_value = index into Document::tensors
  Object,   // something we do not represent: text = class, items = [args..., state]
};

struct Node {
  Kind kind = Kind::None;
  DType dtype = DType::F32;  // Storage
  int64_t int_value = 0;     // Int, Bool (0/1), Storage numel, Tensor index
  double float_value = 0;
  std::string text;           // String, Bytes, Global, Storage key, Object class
  std::vector<NodeId> items;  // List/Tuple/Set elements; Dict: key0, value0, key1, ...
};

struct Document {
  std::vector<Node> nodes;
  NodeId root = 0;
  std::vector<RawTensor> tensors;
  std::vector<std::string> notes;  // what was skipped, once per class
  const Node& at(NodeId id) const { return nodes[id]; }
};

// Returns the bytes of storage `key` (the file "data/<key>" inside a .pth archive), or
// nullopt if there is no such record.
using StorageProvider = std::function<std::optional<ByteView>(const std::string& key)>;

struct Limits {
  uint64_t max_nodes = 50'000'000;
  uint64_t max_tensor_bytes = uint64_t(64) << 30;
};

// Unpickles `data` (protocols 0–5). Throws IoError naming `file` and the byte offset.
Document unpickle(ByteView data, const std::string& file, const StorageProvider& storages,
                  const Limits& limits = {});

// True for the class of a TorchScript module as data.pkl names it ("__torch__.…").
inline bool is_torchscript_module(const std::string& cls) {
  return cls.rfind("__torch__.", 0) == 0;
}

// Display helper: a one-line description of a node ("OrderedDict with 152 entries", ...).
std::string describe(const Document& doc, NodeId id);

}  // namespace attnlab::io::pickle
