// What the unpickler makes of calls: the reconstructors torch.save uses
// (OrderedDict, _rebuild_tensor_v2, _rebuild_parameter, storages via persistent ids),
// a few plain-data builtins and numpy scalars; everything else becomes an opaque
// Object with a note. Tensor views are bounds-checked against their storage and copied
// out in C order.
#include <cstring>

#include "core/io/pickle_globals.h"
#include "core/io/pickle_unpickler.h"

namespace attnlab::io::pickle::detail {

std::vector<int64_t> Unpickler::int_tuple(NodeId id, const char* what) {
  const Node& n = node(id);
  if (n.kind != Kind::Tuple && n.kind != Kind::List)
    fail(IoErrorKind::BadPickle, std::string(what) + " is not a tuple");
  std::vector<int64_t> out;
  for (NodeId c : n.items) {
    if (node(c).kind != Kind::Int)
      fail(IoErrorKind::BadPickle, std::string(what) + " holds a non-integer");
    out.push_back(node(c).int_value);
  }
  return out;
}

NodeId Unpickler::persistent_load(NodeId pid) {
  const Node& p = node(pid);
  if (p.kind != Kind::Tuple || p.items.size() < 5 || node(p.items[0]).kind != Kind::String ||
      node(p.items[0]).text != "storage")
    fail(IoErrorKind::BadPickle,
         "persistent id is not a ('storage', type, key, location, numel) tuple");
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
      fail(IoErrorKind::MissingEntry, "tensor storage '" + key.text +
                                          "' is not in the archive (data/" + key.text +
                                          " missing)");
    it = storage_cache_.emplace(key.text, *bytes).first;
  }
  uint64_t need = 0;
  if (__builtin_mul_overflow(uint64_t(numel.int_value), uint64_t(dtype_size(*dtype)), &need) ||
      it->second.size < need)
    fail(IoErrorKind::ShapeMismatch, "storage '" + key.text + "' should hold " +
                                         std::to_string(numel.int_value) + " " +
                                         dtype_name(*dtype) + " elements but has " +
                                         std::to_string(it->second.size) + " bytes");
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
  if (!checked_nbytes(size, st.dtype))
    fail(IoErrorKind::LimitExceeded, "tensor size overflows 64 bits");
  const size_t esize = dtype_size(st.dtype);
  uint64_t numel = 1, last = uint64_t(offset);
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || stride[i] < 0)
      fail(IoErrorKind::BadPickle, "negative tensor size or stride");
    uint64_t span = 0;
    if (__builtin_mul_overflow(numel, uint64_t(size[i]), &numel) ||
        (size[i] > 0 &&
         (__builtin_mul_overflow(uint64_t(size[i] - 1), uint64_t(stride[i]), &span) ||
          __builtin_add_overflow(last, span, &last))))
      fail(IoErrorKind::LimitExceeded, "tensor size/stride overflow");
  }
  if (numel > 0 && last >= uint64_t(st.int_value))
    fail(IoErrorKind::OffsetOutOfRange, "tensor view reaches element " + std::to_string(last) +
                                            " of storage '" + st.text + "', which has " +
                                            std::to_string(st.int_value) + " elements");
  uint64_t nbytes = numel * esize;
  if (__builtin_add_overflow(tensor_bytes_, nbytes, &tensor_bytes_) ||
      tensor_bytes_ > limits_.max_tensor_bytes)
    fail(IoErrorKind::LimitExceeded,
         "tensors exceed " + std::to_string(limits_.max_tensor_bytes) + " bytes");

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
  if (a.kind != Kind::Tuple)
    fail(IoErrorKind::BadPickle, std::string(op) + " arguments are not a tuple");
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
  // TorchScript's typed containers: restore_type_tag(value, type) is the value; the
  // build_*list(list) functions are the list.
  if (f == "torch.jit._pickle.restore_type_tag" && !args.empty()) return args[0];
  if (f.rfind("torch.jit._pickle.build_", 0) == 0 && args.size() == 1 &&
      node(args[0]).kind == Kind::List)
    return args[0];
  return object_of(f, args);
}

}  // namespace attnlab::io::pickle::detail
