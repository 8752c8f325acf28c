// Arena and stack helpers of the unpickler: literals, memo, globals (with the refusal
// policy of pickle_globals.h), and the mutations APPEND/SETITEM make.
#include <cerrno>
#include <cstdlib>

#include "core/io/pickle_globals.h"
#include "core/io/pickle_unpickler.h"

namespace attnlab::io::pickle::detail {

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
    fail(
        IoErrorKind::RefusedGlobal,
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

}  // namespace attnlab::io::pickle::detail
