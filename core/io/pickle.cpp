// The restricted unpickler's opcode interpreter. See pickle.h for the policy; this file
// only turns opcodes into arena nodes. Nothing here calls out of the process.
#include "core/io/pickle.h"

#include <cstdlib>
#include <cstring>
#include <set>
#include <unordered_map>

#include "core/io/pickle_globals.h"

namespace attnlab::io::pickle {

namespace {

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
      fail(IoErrorKind::LimitExceeded, "more than " + std::to_string(limits_.max_nodes) + " values");
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
    if (stack_.size() <= floor()) fail(IoErrorKind::BadPickle, std::string(op) + " on an empty stack");
    NodeId id = stack_.back();
    stack_.pop_back();
    return id;
  }
  NodeId top(const char* op) {
    if (stack_.size() <= floor()) fail(IoErrorKind::BadPickle, std::string(op) + " on an empty stack");
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
  int64_t parse_decimal(const std::string& s, const char* what);
  NodeId make_long(ByteView bytes);
  void memo_put(uint64_t index) { memo_[index] = top("PUT"); }
  NodeId memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end())
      fail(IoErrorKind::BadPickle, "memo entry " + std::to_string(index) + " read before it was written");
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

int64_t Unpickler::parse_decimal(const std::string& s, const char* what) {
  std::string t = s;
  if (!t.empty() && t.back() == 'L') t.pop_back();  // protocol-0 longs end in 'L'
  if (t.empty()) fail(IoErrorKind::BadPickle, std::string("empty ") + what);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || end != t.c_str() + t.size())
    fail(IoErrorKind::BadPickle, std::string("bad ") + what + " '" + s.substr(0, 40) + "'");
  return v;
}

NodeId Unpickler::make_long(ByteView b) {
  if (b.size == 0) return add_int(0);
  if (b.size > 8) {
    note_once("an integer wider than 64 bits was skipped");
    return object_of("int (wider than 64 bits)", {});
  }
  uint64_t v = 0;
  for (size_t i = 0; i < b.size; ++i) v |= uint64_t(b.data[i]) << (8 * i);
  if (b.size < 8 && (b.data[b.size - 1] & 0x80)) v |= ~uint64_t(0) << (8 * b.size);  // sign-extend
  return add_int(static_cast<int64_t>(v));
}

NodeId Unpickler::make_global(const std::string& module, const std::string& name) {
  if (is_refused_global(module, name))
    fail(IoErrorKind::RefusedGlobal,
         "the pickle references " + module + "." + name +
             ", which could execute code; refusing to load this file (a checkpoint never needs it)");
  return add_text(Kind::Global, module + "." + name);
}

NodeId Unpickler::object_of(const std::string& cls, std::vector<NodeId> items) {
  note_once("skipped " + cls + " (not representable; kept as an opaque object)");
  Node n;
  n.kind = Kind::Object;
  n.text = cls;
  n.items = std::move(items);
  return add(std::move(n));
}

void Unpickler::append_items(NodeId target, const std::vector<NodeId>& items, const char* op) {
  Kind k = node(target).kind;
  if (k != Kind::List && k != Kind::Object && k != Kind::Set)
    fail(IoErrorKind::BadPickle, std::string(op) + " on a value that is not a list");
  auto& v = node(target).items;
  v.insert(v.end(), items.begin(), items.end());
}

void Unpickler::set_items(NodeId target, const std::vector<NodeId>& kv, const char* op) {
  if (kv.size() % 2) fail(IoErrorKind::BadPickle, std::string(op) + " with an odd number of items");
  Kind k = node(target).kind;
  if (k != Kind::Dict && k != Kind::Object)
    fail(IoErrorKind::BadPickle, std::string(op) + " on a value that is not a dict");
  auto& v = node(target).items;  // duplicates allowed; readers let the last one win
  v.insert(v.end(), kv.begin(), kv.end());
}

std::vector<int64_t> Unpickler::int_tuple(NodeId id, const char* what) {
  const Node& n = node(id);
  if (n.kind != Kind::Tuple && n.kind != Kind::List)
    fail(IoErrorKind::BadPickle, std::string(what) + " is not a tuple");
  std::vector<int64_t> out;
  for (NodeId c : n.items) {
    if (node(c).kind != Kind::Int) fail(IoErrorKind::BadPickle, std::string(what) + " holds a non-integer");
    out.push_back(node(c).int_value);
  }
  return out;
}

NodeId Unpickler::persistent_load(NodeId pid) {
  const Node& p = node(pid);
  if (p.kind != Kind::Tuple || p.items.size() < 5 || node(p.items[0]).kind != Kind::String ||
      node(p.items[0]).text != "storage")
    fail(IoErrorKind::BadPickle, "persistent id is not a ('storage', type, key, location, numel) tuple");
  const Node& type = node(p.items[1]);
  const Node& key = node(p.items[2]);
  const Node& numel = node(p.items[4]);
  if (type.kind != Kind::Global || key.kind != Kind::String || numel.kind != Kind::Int ||
      numel.int_value < 0)
    fail(IoErrorKind::BadPickle, "malformed storage persistent id");
  auto dtype = storage_dtype(type.text);
  if (!dtype)
    fail(IoErrorKind::UnknownDType, "storage type " + type.text +
                                        " is not supported (float, half, bfloat16, double, long, "
                                        "int, short, char, byte, bool are)");
  auto it = storage_cache_.find(key.text);
  if (it == storage_cache_.end()) {
    std::optional<ByteView> bytes = storages_ ? storages_(key.text) : std::nullopt;
    if (!bytes)
      fail(IoErrorKind::MissingEntry, "tensor storage '" + key.text + "' is not in the archive (data/" +
                                          key.text + " missing)");
    it = storage_cache_.emplace(key.text, *bytes).first;
  }
  uint64_t need = 0;
  if (__builtin_mul_overflow(uint64_t(numel.int_value), uint64_t(dtype_size(*dtype)), &need) ||
      it->second.size < need)
    fail(IoErrorKind::ShapeMismatch, "storage '" + key.text + "' should hold " +
                                         std::to_string(numel.int_value) + " " + dtype_name(*dtype) +
                                         " elements but has " + std::to_string(it->second.size) + " bytes");
  Node s;
  s.kind = Kind::Storage;
  s.dtype = *dtype;
  s.int_value = numel.int_value;
  s.text = key.text;
  return add(std::move(s));
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks, ...)
NodeId Unpickler::rebuild_tensor(const std::vector<NodeId>& args) {
  if (args.size() < 4 || node(args[0]).kind != Kind::Storage || node(args[1]).kind != Kind::Int)
    fail(IoErrorKind::BadPickle, "tensor rebuild expects (storage, offset, size, stride, ...)");
  const Node& st = node(args[0]);
  int64_t offset = node(args[1]).int_value;
  std::vector<int64_t> size = int_tuple(args[2], "tensor size");
  std::vector<int64_t> stride = int_tuple(args[3], "tensor stride");
  if (size.size() != stride.size())
    fail(IoErrorKind::BadPickle, "tensor size and stride have different lengths");
  if (offset < 0) fail(IoErrorKind::OffsetOutOfRange, "negative storage offset");
  const size_t esize = dtype_size(st.dtype);
  uint64_t numel = 1, last = uint64_t(offset);
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || stride[i] < 0) fail(IoErrorKind::BadPickle, "negative tensor size or stride");
    uint64_t span = 0;
    if (__builtin_mul_overflow(numel, uint64_t(size[i]), &numel) ||
        (size[i] > 0 && (__builtin_mul_overflow(uint64_t(size[i] - 1), uint64_t(stride[i]), &span) ||
                         __builtin_add_overflow(last, span, &last))))
      fail(IoErrorKind::LimitExceeded, "tensor size/stride overflow");
  }
  if (numel > 0 && last >= uint64_t(st.int_value))
    fail(IoErrorKind::OffsetOutOfRange,
         "tensor view reaches element " + std::to_string(last) + " of storage '" + st.text +
             "', which has " + std::to_string(st.int_value) + " elements");
  uint64_t nbytes = numel * esize;
  if (__builtin_add_overflow(tensor_bytes_, nbytes, &tensor_bytes_) ||
      tensor_bytes_ > limits_.max_tensor_bytes)
    fail(IoErrorKind::LimitExceeded, "tensors exceed " + std::to_string(limits_.max_tensor_bytes) + " bytes");

  RawTensor t;
  t.dtype = st.dtype;
  t.shape = size;
  t.bytes.resize(nbytes);
  const uint8_t* src = storage_cache_.at(st.text).data;
  // Copy in C order: walk a multi-index, or one memcpy when the view is contiguous.
  bool contiguous = true;
  for (int64_t i = int64_t(size.size()) - 1, expect = 1; i >= 0; --i) {
    if (size[i] != 1 && stride[i] != expect) contiguous = false;
    expect *= size[i];
  }
  if (numel == 0) {
  } else if (contiguous) {
    std::memcpy(t.bytes.data(), src + uint64_t(offset) * esize, nbytes);
  } else {
    std::vector<int64_t> idx(size.size(), 0);
    for (uint64_t e = 0; e < numel; ++e) {
      uint64_t at = uint64_t(offset);
      for (size_t d = 0; d < size.size(); ++d) at += uint64_t(idx[d] * stride[d]);
      std::memcpy(t.bytes.data() + e * esize, src + at * esize, esize);
      for (size_t d = size.size(); d-- > 0;) {
        if (++idx[d] < size[d]) break;
        idx[d] = 0;
      }
    }
  }
  doc_.tensors.push_back(std::move(t));
  Node n;
  n.kind = Kind::Tensor;
  n.int_value = int64_t(doc_.tensors.size() - 1);
  return add(std::move(n));
}

// numpy.core.multiarray.scalar(dtype, bytes): numpy scalars in training checkpoints
// (best accuracy, ...). Decoded when the dtype is a plain little-endian number.
NodeId Unpickler::numpy_scalar(const std::vector<NodeId>& args) {
  if (args.size() == 2 && node(args[0]).kind == Kind::Object && !node(args[0]).items.empty() &&
      node(node(args[0]).items[0]).kind == Kind::String &&
      (node(args[1]).kind == Kind::Bytes || node(args[1]).kind == Kind::String)) {
    const std::string& code = node(node(args[0]).items[0]).text;
    const std::string& raw = node(args[1]).text;
    auto le = [&](size_t n) {
      uint64_t v = 0;
      for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(raw[i])) << (8 * i);
      return v;
    };
    if (code == "f8" && raw.size() == 8) {
      Node n;
      n.kind = Kind::Float;
      uint64_t v = le(8);
      std::memcpy(&n.float_value, &v, 8);
      return add(std::move(n));
    }
    if (code == "f4" && raw.size() == 4) {
      Node n;
      n.kind = Kind::Float;
      uint32_t v = uint32_t(le(4));
      float f;
      std::memcpy(&f, &v, 4);
      n.float_value = static_cast<double>(f);
      return add(std::move(n));
    }
    if (code == "i8" && raw.size() == 8) return add_int(int64_t(le(8)));
  }
  return object_of("numpy scalar", args);
}

NodeId Unpickler::call(NodeId callable, NodeId args_id, const char* op) {
  const Node& c = node(callable);
  const Node& a = node(args_id);
  if (a.kind != Kind::Tuple) fail(IoErrorKind::BadPickle, std::string(op) + " arguments are not a tuple");
  std::vector<NodeId> args = a.items;
  if (c.kind != Kind::Global) return object_of("call of a non-global value", args);
  const std::string f = c.text;  // copy: adding nodes below may move the arena
  if (f == "collections.OrderedDict" || f == "builtins.dict" || f == "collections.defaultdict") {
    NodeId d = add(Kind::Dict);
    if (f != "collections.defaultdict" && args.size() == 1 && node(args[0]).kind == Kind::List) {
      for (NodeId pair : std::vector<NodeId>(node(args[0]).items)) {
        const Node& p = node(pair);
        if ((p.kind != Kind::Tuple && p.kind != Kind::List) || p.items.size() != 2)
          fail(IoErrorKind::BadPickle, "OrderedDict item is not a (key, value) pair");
        set_items(d, p.items, op);
      }
    }
    return d;
  }
  if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor")
    return rebuild_tensor(args);
  if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") {
    if (args.empty() || node(args[0]).kind != Kind::Tensor)
      fail(IoErrorKind::BadPickle, "parameter rebuild without a tensor");
    return args[0];
  }
  if (f == "torch._tensor._rebuild_from_type_v2" && args.size() >= 3 &&
      node(args[2]).kind == Kind::Tuple && node(args[0]).kind == Kind::Global &&
      node(args[0]).text != f)
    return call(args[0], args[2], op);  // (func, type, args, state): the tensor itself
  if (f == "torch.Size" && args.size() == 1 &&
      (node(args[0]).kind == Kind::List || node(args[0]).kind == Kind::Tuple))
    return make_sequence(Kind::Tuple, node(args[0]).items);
  if ((f == "builtins.set" || f == "builtins.frozenset") &&
      (args.empty() || node(args[0]).kind == Kind::List || node(args[0]).kind == Kind::Tuple))
    return make_sequence(Kind::Set, args.empty() ? std::vector<NodeId>{} : node(args[0]).items);
  if (f == "copyreg._reconstructor" && !args.empty() && node(args[0]).kind == Kind::Global)
    return object_of(node(args[0]).text, {});
  if (f == "numpy.core.multiarray.scalar" || f == "numpy._core.multiarray.scalar")
    return numpy_scalar(args);
  if (f == "numpy.dtype") return object_of_quiet("numpy.dtype", args);
  return object_of(f, args);
}

Document Unpickler::run() {
  bool stopped = false;
  while (!stopped) {
    op_pos_ = r_.pos();
    uint8_t op = r_.u8("a pickle opcode (missing STOP?)");
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t v = r_.u8("protocol");
        if (v > 5) fail(IoErrorKind::UnsupportedFormat, "pickle protocol " + std::to_string(v));
        break;
      }
      case 0x95: r_.u64le("frame length"); break;  // FRAME: framing is only an I/O hint
      case '.': stopped = true; break;             // STOP
      case '(': marks_.push_back(stack_.size()); break;
      case '0': pop("POP"); break;
      case '1': pop_mark("POP_MARK"); break;
      case '2': push(top("DUP")); break;
      case 'N': push(add(Kind::None)); break;
      case 0x88: case 0x89: {  // NEWTRUE / NEWFALSE
        NodeId id = add(Kind::Bool);
        node(id).int_value = op == 0x88;
        push(id);
        break;
      }
      case 'I': {  // INT (text); "00"/"01" are protocol-0 booleans
        std::string s = read_line("INT");
        if (s == "00" || s == "01") {
          NodeId id = add(Kind::Bool);
          node(id).int_value = s == "01";
          push(id);
        } else {
          push(add_int(parse_decimal(s, "INT")));
        }
        break;
      }
      case 'L': push(add_int(parse_decimal(read_line("LONG"), "LONG"))); break;
      case 'J': push(add_int(int32_t(r_.u32le("BININT")))); break;
      case 'K': push(add_int(r_.u8("BININT1"))); break;
      case 'M': push(add_int(r_.u16le("BININT2"))); break;
      case 0x8a: push(make_long(r_.bytes(r_.u8("LONG1 length"), "LONG1"))); break;
      case 0x8b: {
        int32_t n = int32_t(r_.u32le("LONG4 length"));
        if (n < 0) fail(IoErrorKind::BadPickle, "negative LONG4 length");
        push(make_long(r_.bytes(size_t(n), "LONG4")));
        break;
      }
      case 'F': {  // FLOAT (text)
        std::string s = read_line("FLOAT");
        char* end = nullptr;
        Node n;
        n.kind = Kind::Float;
        n.float_value = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) fail(IoErrorKind::BadPickle, "bad FLOAT text");
        push(add(std::move(n)));
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        ByteView b = r_.bytes(8, "BINFLOAT");
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | b.data[i];
        Node n;
        n.kind = Kind::Float;
        std::memcpy(&n.float_value, &v, 8);
        push(add(std::move(n)));
        break;
      }
      case 'X': push(add_text(Kind::String, std::string(r_.bytes(r_.u32le("BINUNICODE length"), "BINUNICODE").str()))); break;
      case 0x8c: push(add_text(Kind::String, std::string(r_.bytes(r_.u8("SHORT_BINUNICODE length"), "SHORT_BINUNICODE").str()))); break;
      case 0x8d: push(add_text(Kind::String, std::string(r_.bytes(r_.u64le("BINUNICODE8 length"), "BINUNICODE8").str()))); break;
      case 'V': push(add_text(Kind::String, read_line("UNICODE"))); break;
      case 'S': {  // STRING: a quoted repr; kept verbatim without the quotes
        std::string s = read_line("STRING");
        if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"') && s.back() == s[0]) s = s.substr(1, s.size() - 2);
        push(add_text(Kind::String, s));
        break;
      }
      case 'T': {
        int32_t n = int32_t(r_.u32le("BINSTRING length"));
        if (n < 0) fail(IoErrorKind::BadPickle, "negative BINSTRING length");
        push(add_text(Kind::String, std::string(r_.bytes(size_t(n), "BINSTRING").str())));
        break;
      }
      case 'U': push(add_text(Kind::String, std::string(r_.bytes(r_.u8("SHORT_BINSTRING length"), "SHORT_BINSTRING").str()))); break;
      case 'B': push(add_text(Kind::Bytes, std::string(r_.bytes(r_.u32le("BINBYTES length"), "BINBYTES").str()))); break;
      case 'C': push(add_text(Kind::Bytes, std::string(r_.bytes(r_.u8("SHORT_BINBYTES length"), "SHORT_BINBYTES").str()))); break;
      case 0x8e: push(add_text(Kind::Bytes, std::string(r_.bytes(r_.u64le("BINBYTES8 length"), "BINBYTES8").str()))); break;
      case 0x96: push(add_text(Kind::Bytes, std::string(r_.bytes(r_.u64le("BYTEARRAY8 length"), "BYTEARRAY8").str()))); break;
      case ']': push(add(Kind::List)); break;
      case '}': push(add(Kind::Dict)); break;
      case ')': push(add(Kind::Tuple)); break;
      case 0x8f: push(add(Kind::Set)); break;
      case 'l': push(make_sequence(Kind::List, pop_mark("LIST"))); break;
      case 't': push(make_sequence(Kind::Tuple, pop_mark("TUPLE"))); break;
      case 0x91: push(make_sequence(Kind::Set, pop_mark("FROZENSET"))); break;
      case 'd': {
        std::vector<NodeId> kv = pop_mark("DICT");
        NodeId d = add(Kind::Dict);
        set_items(d, kv, "DICT");
        push(d);
        break;
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        size_t n = size_t(op - 0x84);
        std::vector<NodeId> items(n);
        for (size_t i = n; i-- > 0;) items[i] = pop("TUPLEn");
        push(make_sequence(Kind::Tuple, std::move(items)));
        break;
      }
      case 'a': {
        NodeId v = pop("APPEND");
        append_items(top("APPEND"), {v}, "APPEND");
        break;
      }
      case 'e': {
        std::vector<NodeId> items = pop_mark("APPENDS");
        append_items(top("APPENDS"), items, "APPENDS");
        break;
      }
      case 0x90: {
        std::vector<NodeId> items = pop_mark("ADDITEMS");
        append_items(top("ADDITEMS"), items, "ADDITEMS");
        break;
      }
      case 's': {
        NodeId v = pop("SETITEM"), k = pop("SETITEM");
        set_items(top("SETITEM"), {k, v}, "SETITEM");
        break;
      }
      case 'u': {
        std::vector<NodeId> kv = pop_mark("SETITEMS");
        set_items(top("SETITEMS"), kv, "SETITEMS");
        break;
      }
      case 'p': memo_put(uint64_t(parse_decimal(read_line("PUT"), "PUT index"))); break;
      case 'q': memo_put(r_.u8("BINPUT")); break;
      case 'r': memo_put(r_.u32le("LONG_BINPUT")); break;
      case 0x94: memo_put(memo_.size()); break;  // MEMOIZE
      case 'g': push(memo_get(uint64_t(parse_decimal(read_line("GET"), "GET index")))); break;
      case 'h': push(memo_get(r_.u8("BINGET"))); break;
      case 'j': push(memo_get(r_.u32le("LONG_BINGET"))); break;
      case 'c': {  // GLOBAL "module\nname\n"
        std::string module = read_line("GLOBAL module");
        std::string name = read_line("GLOBAL name");
        push(make_global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        NodeId name = pop("STACK_GLOBAL"), module = pop("STACK_GLOBAL");
        if (node(name).kind != Kind::String || node(module).kind != Kind::String)
          fail(IoErrorKind::BadPickle, "STACK_GLOBAL needs two strings");
        push(make_global(node(module).text, node(name).text));
        break;
      }
      case 'i': {  // INST "module\nname\n" + marked args: an instance of a class
        std::string module = read_line("INST module");
        std::string name = read_line("INST name");
        make_global(module, name);  // refuse dangerous names here too
        push(object_of(module + "." + name, pop_mark("INST")));
        break;
      }
      case 'o': {  // OBJ: mark, class, args...
        std::vector<NodeId> items = pop_mark("OBJ");
        if (items.empty() || node(items[0]).kind != Kind::Global)
          fail(IoErrorKind::BadPickle, "OBJ without a class");
        std::string cls = node(items[0]).text;
        items.erase(items.begin());
        push(object_of(cls, std::move(items)));
        break;
      }
      case 'R': {  // REDUCE: callable(*args) — interpreted, never called
        NodeId args = pop("REDUCE"), f = pop("REDUCE");
        push(call(f, args, "REDUCE"));
        break;
      }
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
        NodeId args = pop("NEWOBJ"), cls = pop("NEWOBJ");
        if (node(cls).kind == Kind::Global && node(cls).text == "collections.OrderedDict")
          push(add(Kind::Dict));
        else
          push(object_of(node(cls).kind == Kind::Global ? node(cls).text : "object", node(args).items));
        break;
      }
      case 0x92: {  // NEWOBJ_EX: cls, args, kwargs
        pop("NEWOBJ_EX");
        NodeId args = pop("NEWOBJ_EX"), cls = pop("NEWOBJ_EX");
        push(object_of(node(cls).kind == Kind::Global ? node(cls).text : "object", node(args).items));
        break;
      }
      case 'b': {  // BUILD: set state; kept on opaque objects, ignored on dicts/tensors
        NodeId state = pop("BUILD");
        NodeId target = top("BUILD");
        if (node(target).kind == Kind::Object) node(target).items.push_back(state);
        break;
      }
      case 'Q': push(persistent_load(pop("BINPERSID"))); break;
      case 'P':
        fail(IoErrorKind::UnsupportedFormat, "text persistent ids (PERSID) are not used by torch.save");
      case 0x82: case 0x83: case 0x84:
        fail(IoErrorKind::UnsupportedFormat, "pickle extension-registry codes (EXT1/2/4) are not supported");
      case 0x97: case 0x98:
        fail(IoErrorKind::UnsupportedFormat, "out-of-band pickle buffers are not supported");
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(IoErrorKind::UnknownOpcode, std::string("unknown pickle opcode ") + hex);
      }
    }
  }
  if (stack_.size() != 1 || !marks_.empty())
    fail(IoErrorKind::BadPickle, "STOP with " + std::to_string(stack_.size()) +
                                     " values on the stack (expected exactly 1)");
  doc_.root = stack_.back();
  return std::move(doc_);
}

}  // namespace

Document unpickle(ByteView data, const std::string& file, const StorageProvider& storages,
                  const Limits& limits) {
  if (data.size == 0) throw IoError(IoErrorKind::Empty, file, "pickle is empty (0 bytes)");
  return Unpickler(data, file, storages, limits).run();
}

std::string describe(const Document& doc, NodeId id) {
  const Node& n = doc.at(id);
  switch (n.kind) {
    case Kind::None: return "None";
    case Kind::Bool: return n.int_value ? "True" : "False";
    case Kind::Int: return std::to_string(n.int_value);
    case Kind::Float: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", n.float_value);
      return buf;
    }
    case Kind::String: return n.text.size() > 60 ? "'" + n.text.substr(0, 57) + "...'" : "'" + n.text + "'";
    case Kind::Bytes: return "bytes (" + std::to_string(n.text.size()) + ")";
    case Kind::List: return "list of " + std::to_string(n.items.size());
    case Kind::Tuple: return "tuple of " + std::to_string(n.items.size());
    case Kind::Set: return "set of " + std::to_string(n.items.size());
    case Kind::Dict: return "dict with " + std::to_string(n.items.size() / 2) + " entries";
    case Kind::Global: return n.text;
    case Kind::Storage: return "storage " + n.text;
    case Kind::Tensor: return "tensor " + doc.tensors[size_t(n.int_value)].describe();
    case Kind::Object: return n.text + " (skipped)";
  }
  return "?";
}

}  // namespace attnlab::io::pickle
