// The restricted unpickler's opcode interpreter. See pickle.h for the policy; this file
// only turns opcodes into arena nodes (pickle_reconstruct.cpp decides what a call means).
// Nothing here calls out of the process.
#include "core/io/pickle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/io/pickle_unpickler.h"

namespace attnlab::io::pickle {

namespace detail {

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
      case 0x95:
        r_.u64le("frame length");
        break;  // FRAME: framing is only an I/O hint
      case '.':
        stopped = true;
        break;  // STOP
      case '(':
        marks_.push_back(stack_.size());
        break;
      case '0':
        pop("POP");
        break;
      case '1':
        pop_mark("POP_MARK");
        break;
      case '2':
        push(top("DUP"));
        break;
      case 'N':
        push(add(Kind::None));
        break;
      case 0x88:
      case 0x89: {  // NEWTRUE / NEWFALSE
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
      case 'L':
        push(add_int(parse_decimal(read_line("LONG"), "LONG")));
        break;
      case 'J':
        push(add_int(int32_t(r_.u32le("BININT"))));
        break;
      case 'K':
        push(add_int(r_.u8("BININT1")));
        break;
      case 'M':
        push(add_int(r_.u16le("BININT2")));
        break;
      case 0x8a:
        push(make_long(r_.bytes(r_.u8("LONG1 length"), "LONG1")));
        break;
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
        if (s.empty() || end != s.c_str() + s.size())
          fail(IoErrorKind::BadPickle, "bad FLOAT text");
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
      // Length-prefixed strings and bytes: the opcode fixes the width of the length.
      case 'X':
        push_sized(Kind::String, r_.u32le("BINUNICODE length"), "BINUNICODE");
        break;
      case 0x8c:
        push_sized(Kind::String, r_.u8("SHORT_BINUNICODE length"), "SHORT_BINUNICODE");
        break;
      case 0x8d:
        push_sized(Kind::String, r_.u64le("BINUNICODE8 length"), "BINUNICODE8");
        break;
      case 'T': {
        int32_t n = int32_t(r_.u32le("BINSTRING length"));
        if (n < 0) fail(IoErrorKind::BadPickle, "negative BINSTRING length");
        push_sized(Kind::String, uint64_t(n), "BINSTRING");
        break;
      }
      case 'U':
        push_sized(Kind::String, r_.u8("SHORT_BINSTRING length"), "SHORT_BINSTRING");
        break;
      case 'B':
        push_sized(Kind::Bytes, r_.u32le("BINBYTES length"), "BINBYTES");
        break;
      case 'C':
        push_sized(Kind::Bytes, r_.u8("SHORT_BINBYTES length"), "SHORT_BINBYTES");
        break;
      case 0x8e:
        push_sized(Kind::Bytes, r_.u64le("BINBYTES8 length"), "BINBYTES8");
        break;
      case 0x96:
        push_sized(Kind::Bytes, r_.u64le("BYTEARRAY8 length"), "BYTEARRAY8");
        break;
      case 'V':
        push(add_text(Kind::String, read_line("UNICODE")));
        break;
      case 'S': {  // STRING: a quoted repr; kept verbatim without the quotes
        std::string s = read_line("STRING");
        if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"') && s.back() == s[0])
          s = s.substr(1, s.size() - 2);
        push(add_text(Kind::String, s));
        break;
      }
      case ']':
        push(add(Kind::List));
        break;
      case '}':
        push(add(Kind::Dict));
        break;
      case ')':
        push(add(Kind::Tuple));
        break;
      case 0x8f:
        push(add(Kind::Set));
        break;
      case 'l':
        push(make_sequence(Kind::List, pop_mark("LIST")));
        break;
      case 't':
        push(make_sequence(Kind::Tuple, pop_mark("TUPLE")));
        break;
      case 0x91:
        push(make_sequence(Kind::Set, pop_mark("FROZENSET")));
        break;
      case 'd': {
        std::vector<NodeId> kv = pop_mark("DICT");
        NodeId d = add(Kind::Dict);
        set_items(d, kv, "DICT");
        push(d);
        break;
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
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
      case 'p':
        memo_put(uint64_t(parse_decimal(read_line("PUT"), "PUT index")));
        break;
      case 'q':
        memo_put(r_.u8("BINPUT"));
        break;
      case 'r':
        memo_put(r_.u32le("LONG_BINPUT"));
        break;
      case 0x94:
        memo_put(memo_.size());
        break;  // MEMOIZE
      case 'g':
        push(memo_get(uint64_t(parse_decimal(read_line("GET"), "GET index"))));
        break;
      case 'h':
        push(memo_get(r_.u8("BINGET")));
        break;
      case 'j':
        push(memo_get(r_.u32le("LONG_BINGET")));
        break;
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
        else if (node(cls).kind == Kind::Global && is_torchscript_module(node(cls).text))
          // A TorchScript module (data.pkl of torch.jit.save): its attributes arrive by
          // BUILD and are walked as a state dict (tensor_file.cpp); nothing to note.
          push(object_of_quiet(node(cls).text, node(args).items));
        else
          push(object_of(node(cls).kind == Kind::Global ? node(cls).text : "object",
                         node(args).items));
        break;
      }
      case 0x92: {  // NEWOBJ_EX: cls, args, kwargs
        pop("NEWOBJ_EX");
        NodeId args = pop("NEWOBJ_EX"), cls = pop("NEWOBJ_EX");
        push(object_of(node(cls).kind == Kind::Global ? node(cls).text : "object",
                       node(args).items));
        break;
      }
      case 'b': {  // BUILD: set state; kept on opaque objects, ignored on dicts/tensors
        NodeId state = pop("BUILD");
        NodeId target = top("BUILD");
        if (node(target).kind == Kind::Object) node(target).items.push_back(state);
        break;
      }
      case 'Q':
        push(persistent_load(pop("BINPERSID")));
        break;
      case 'P':
        fail(IoErrorKind::UnsupportedFormat,
             "text persistent ids (PERSID) are not used by torch.save");
      case 0x82:
      case 0x83:
      case 0x84:
        fail(IoErrorKind::UnsupportedFormat,
             "pickle extension-registry codes (EXT1/2/4) are not supported");
      case 0x97:
      case 0x98:
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

}  // namespace detail

Document unpickle(ByteView data, const std::string& file, const StorageProvider& storages,
                  const Limits& limits) {
  if (data.size == 0) throw IoError(IoErrorKind::Empty, file, "pickle is empty (0 bytes)");
  return detail::Unpickler(data, file, storages, limits).run();
}

std::string describe(const Document& doc, NodeId id) {
  const Node& n = doc.at(id);
  switch (n.kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return n.int_value ? "True" : "False";
    case Kind::Int:
      return std::to_string(n.int_value);
    case Kind::Float: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", n.float_value);
      return buf;
    }
    case Kind::String:
      return n.text.size() > 60 ? "'" + n.text.substr(0, 57) + "...'" : "'" + n.text + "'";
    case Kind::Bytes:
      return "bytes (" + std::to_string(n.text.size()) + ")";
    case Kind::List:
      return "list of " + std::to_string(n.items.size());
    case Kind::Tuple:
      return "tuple of " + std::to_string(n.items.size());
    case Kind::Set:
      return "set of " + std::to_string(n.items.size());
    case Kind::Dict:
      return "dict with " + std::to_string(n.items.size() / 2) + " entries";
    case Kind::Global:
      return n.text;
    case Kind::Storage:
      return "storage " + n.text;
    case Kind::Tensor:
      return "tensor " + doc.tensors[size_t(n.int_value)].describe();
    case Kind::Object:
      return n.text + " (skipped)";
  }
  return "?";
}

}  // namespace attnlab::io::pickle
