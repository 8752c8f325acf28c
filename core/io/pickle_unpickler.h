// Internal to core/io: the Unpickler class shared by pickle.cpp (opcodes),
// pickle_values.cpp (arena helpers) and pickle_reconstruct.cpp (what REDUCE, persistent
// ids and tensor rebuilds mean). Not part of the public API; include pickle.h instead.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/pickle.h"

namespace attnlab::io::pickle::detail {

class Unpickler {
 public:
  Unpickler(ByteView data, const std::string& file, const StorageProvider& storages,
            const Limits& limits)
      : r_(data, file), storages_(storages), limits_(limits) {}

  Document run();

 private:
  // --- arena and stack -------------------------------------------------------------
  NodeId add(Node n) {
    if (doc_.nodes.size() >= limits_.max_nodes)
      fail(IoErrorKind::LimitExceeded,
           "more than " + std::to_string(limits_.max_nodes) + " values");
    doc_.nodes.push_back(std::move(n));
    return static_cast<NodeId>(doc_.nodes.size() - 1);
  }
  NodeId add(Kind k) {
    Node n;
    n.kind = k;
    return add(std::move(n));
  }
  NodeId add_int(int64_t v) {
    Node n;
    n.kind = Kind::Int;
    n.int_value = v;
    return add(std::move(n));
  }
  NodeId add_text(Kind k, std::string s) {
    Node n;
    n.kind = k;
    n.text = std::move(s);
    return add(std::move(n));
  }
  Node& node(NodeId id) { return doc_.nodes[id]; }
  void push(NodeId id) { stack_.push_back(id); }
  NodeId pop(const char* op) {
    if (stack_.size() <= floor())
      fail(IoErrorKind::BadPickle, std::string(op) + " on an empty stack");
    NodeId id = stack_.back();
    stack_.pop_back();
    return id;
  }
  NodeId top(const char* op) {
    if (stack_.size() <= floor())
      fail(IoErrorKind::BadPickle, std::string(op) + " on an empty stack");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<NodeId> pop_mark(const char* op) {
    if (marks_.empty()) fail(IoErrorKind::BadPickle, std::string(op) + " without a MARK");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<NodeId> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  [[noreturn]] void fail(IoErrorKind kind, const std::string& msg) const {
    r_.fail_at(kind, op_pos_, msg);
  }
  void note_once(const std::string& text) {
    if (noted_.insert(text).second) doc_.notes.push_back(text);
  }

  // --- opcode helpers --------------------------------------------------------------
  std::string read_line(const char* what) { return std::string(r_.until('\n', what)); }
  // Reads `n` bytes (bounds-checked) and pushes them as a String or Bytes node.
  void push_sized(Kind k, uint64_t n, const char* what) {
    if (n > r_.remaining())
      fail(IoErrorKind::Truncated, std::string(what) + " of " + std::to_string(n) +
                                       " bytes runs past the end of the pickle");
    push(add_text(k, std::string(r_.bytes(size_t(n), what).str())));
  }
  int64_t parse_decimal(const std::string& s, const char* what);
  NodeId make_long(ByteView bytes);
  void memo_put(uint64_t index) { memo_[index] = top("PUT"); }
  NodeId memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end())
      fail(IoErrorKind::BadPickle,
           "memo entry " + std::to_string(index) + " read before it was written");
    return it->second;
  }
  NodeId make_global(const std::string& module, const std::string& name);
  NodeId make_sequence(Kind k, std::vector<NodeId> items) {
    Node n;
    n.kind = k;
    n.items = std::move(items);
    return add(std::move(n));
  }
  void append_items(NodeId target, const std::vector<NodeId>& items, const char* op);
  void set_items(NodeId target, const std::vector<NodeId>& kv, const char* op);
  NodeId call(NodeId callable, NodeId args, const char* op);
  NodeId object_of(const std::string& cls, std::vector<NodeId> items);
  // An opaque object that is only ever an argument of something we decode (numpy.dtype).
  NodeId object_of_quiet(const std::string& cls, std::vector<NodeId> items) {
    Node n;
    n.kind = Kind::Object;
    n.text = cls;
    n.items = std::move(items);
    return add(std::move(n));
  }
  NodeId persistent_load(NodeId pid);
  NodeId rebuild_tensor(const std::vector<NodeId>& args);
  std::vector<int64_t> int_tuple(NodeId id, const char* what);
  NodeId numpy_scalar(const std::vector<NodeId>& args);

  ByteReader r_;
  const StorageProvider& storages_;
  Limits limits_;
  Document doc_;
  std::vector<NodeId> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, NodeId> memo_;
  std::unordered_map<std::string, ByteView> storage_cache_;
  std::set<std::string> noted_;
  size_t op_pos_ = 0;
  uint64_t tensor_bytes_ = 0;
};

}  // namespace attnlab::io::pickle::detail
