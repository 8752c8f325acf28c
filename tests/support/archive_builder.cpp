#include "tests/support/archive_builder.h"

#include <zlib.h>

#include <cstring>
#include <memory>

namespace attnlab::testing {

namespace {
void put16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
void put32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
}  // namespace

namespace {
void put64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
}

Bytes deflate_raw(const Bytes& data) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&zs, uLong(data.size())));
  zs.next_in = const_cast<Bytef*>(data.data());
  zs.avail_in = uInt(data.size());
  zs.next_out = out.data();
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
}  // namespace

Bytes make_zip(const std::vector<std::pair<std::string, Bytes>>& entries, ZipOptions options) {
  Bytes out, central;
  for (const auto& entry : entries) {
    const std::string& name = entry.first;
    const Bytes& plain = entry.second;
    const Bytes payload = options.deflate ? deflate_raw(plain) : plain;
    uint32_t crc = uint32_t(crc32(0L, plain.data(), uInt(plain.size())));
    uint64_t offset = out.size();
    auto header = [&](Bytes& b, bool local) {
      put32(b, local ? 0x04034b50 : 0x02014b50);
      if (!local) put16(b, 45);  // version made by
      put16(b, options.zip64 ? 45 : 20);
      put16(b, 0);                        // flags
      put16(b, options.deflate ? 8 : 0);  // method
      put16(b, 0);
      put16(b, 0);  // time, date
      put32(b, crc);
      put32(b, options.zip64 ? 0xFFFFFFFF : uint32_t(payload.size()));
      put32(b, options.zip64 ? 0xFFFFFFFF : uint32_t(plain.size()));
      put16(b, uint16_t(name.size()));
      // zip64 extra: plain size, compressed size (and the offset in the central copy).
      uint16_t extra = options.zip64 ? uint16_t(4 + (local ? 16 : 24)) : 0;
      put16(b, extra);
      if (!local) {
        put16(b, 0);  // comment
        put16(b, 0);  // disk
        put16(b, 0);  // internal attrs
        put32(b, 0);  // external attrs
        put32(b, options.zip64 ? 0xFFFFFFFF : uint32_t(offset));
      }
      b.insert(b.end(), name.begin(), name.end());
      if (options.zip64) {
        put16(b, 0x0001);
        put16(b, uint16_t(extra - 4));
        put64(b, plain.size());
        put64(b, payload.size());
        if (!local) put64(b, offset);
      }
    };
    header(out, true);
    out.insert(out.end(), payload.begin(), payload.end());
    header(central, false);
  }
  uint64_t cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  if (options.zip64) {
    uint64_t record = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);  // size of the rest of the record
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, entries.size());
    put64(out, entries.size());
    put64(out, central.size());
    put64(out, cd_offset);
    put32(out, 0x07064b50);  // locator
    put32(out, 0);
    put64(out, record);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, options.zip64 ? 0xFFFF : uint16_t(entries.size()));
  put16(out, options.zip64 ? 0xFFFF : uint16_t(entries.size()));
  put32(out, options.zip64 ? 0xFFFFFFFF : uint32_t(central.size()));
  put32(out, options.zip64 ? 0xFFFFFFFF : uint32_t(cd_offset));
  put16(out, 0);
  return out;
}

PickleWriter& PickleWriter::proto(int v) {
  out_.push_back(0x80);
  out_.push_back(uint8_t(v));
  return *this;
}

PickleWriter& PickleWriter::raw(std::initializer_list<uint8_t> bytes) {
  out_.insert(out_.end(), bytes.begin(), bytes.end());
  return *this;
}

PickleWriter& PickleWriter::str(const std::string& s) {
  op('X');
  put32(out_, uint32_t(s.size()));
  out_.insert(out_.end(), s.begin(), s.end());
  return *this;
}

PickleWriter& PickleWriter::global(const std::string& module, const std::string& name) {
  op('c');
  for (char c : module + "\n" + name + "\n") out_.push_back(uint8_t(c));
  return *this;
}

PickleWriter& PickleWriter::int1(uint8_t v) {
  op('K');
  out_.push_back(v);
  return *this;
}

PickleWriter& PickleWriter::int4(int32_t v) {
  op('J');
  put32(out_, uint32_t(v));
  return *this;
}

PickleWriter& PickleWriter::int_tuple(const std::vector<int>& v) {
  mark();
  for (int x : v) int4(x);
  return tuple();
}

PickleWriter& PickleWriter::tensor(const std::string& storage_type, const std::string& key,
                                   int numel, int offset, const std::vector<int>& size,
                                   const std::vector<int>& stride) {
  global("torch._utils", "_rebuild_tensor_v2");
  mark();
  mark().str("storage").global("torch", storage_type).str(key).str("cpu").int4(numel).tuple();
  binpersid();
  int4(offset);
  int_tuple(size);
  int_tuple(stride);
  newfalse();
  global("collections", "OrderedDict").empty_tuple().reduce();
  tuple();
  return reduce();
}

namespace {

// The module tree of dotted tensor names, children in first-seen order.
struct ModuleNode {
  std::vector<std::pair<std::string, std::unique_ptr<ModuleNode>>> children;
  int tensor = -1;  // index into the tensors when this attribute is a tensor
  ModuleNode& child(const std::string& name) {
    for (auto& [n, c] : children)
      if (n == name) return *c;
    children.emplace_back(name, std::make_unique<ModuleNode>());
    return *children.back().second;
  }
};

void write_module(PickleWriter& p, const ModuleNode& m, const std::string& cls,
                  const std::vector<ShapedTensor>& tensors, bool root) {
  p.global("__torch__.model", cls).empty_tuple().raw({0x81});  // NEWOBJ
  p.empty_dict().mark().str("training").newfalse();
  if (root)  // a typed attribute, as TorchScript pickles Dict[str, int] fields
    p.str("sizes")
        .global("torch.jit._pickle", "restore_type_tag")
        .mark()
        .empty_dict()
        .str("Dict[str, int]")
        .tuple()
        .reduce();
  for (const auto& [name, c] : m.children) {
    p.str(name);
    if (c->tensor >= 0) {
      const ShapedTensor& t = tensors[size_t(c->tensor)];
      std::vector<int> stride(t.shape.size(), 1);
      for (size_t d = t.shape.size(); d-- > 1;) stride[d - 1] = stride[d] * t.shape[d];
      int n = 1;
      for (int s : t.shape) n *= s;
      p.tensor(t.int64 ? "LongStorage" : "FloatStorage", std::to_string(c->tensor), n, 0, t.shape,
               stride);
    } else {
      write_module(p, *c, cls + "_" + name, tensors, false);
    }
  }
  p.setitems().op('b');  // BUILD: the attributes
}

}  // namespace

Bytes make_torchscript(const std::vector<ShapedTensor>& tensors, const std::string& code_marker,
                       const std::string& archive) {
  ModuleNode root;
  for (size_t i = 0; i < tensors.size(); ++i) {
    ModuleNode* m = &root;
    const std::string& name = tensors[i].name;
    size_t start = 0;
    for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1)
      m = &m->child(name.substr(start, dot - start));
    m->child(name.substr(start)).tensor = int(i);
  }
  PickleWriter p;
  p.proto();
  write_module(p, root, "Model", tensors, true);
  p.stop();
  const std::string code =
      "import os\nos.system('touch " + code_marker + "')\nclass Model(Module):\n  pass\n";
  std::vector<std::pair<std::string, Bytes>> entries;
  entries.push_back({archive + "/data.pkl", p.bytes()});
  entries.push_back({archive + "/code/__torch__/model.py", Bytes(code.begin(), code.end())});
  entries.push_back({archive + "/constants.pkl", {0x80, 2, ')', '.'}});
  for (size_t i = 0; i < tensors.size(); ++i)
    entries.push_back({archive + "/data/" + std::to_string(i), tensors[i].bytes});
  entries.push_back({archive + "/version", {'3', '\n'}});
  return make_zip(entries);
}

Bytes float_bytes(const std::vector<float>& v) {
  Bytes b(v.size() * 4);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Bytes make_pth(const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
               const std::string& archive, ZipOptions options) {
  std::vector<ShapedTensor> shaped;
  for (const auto& [name, values] : tensors)
    shaped.push_back({name, {int(values.size())}, false, float_bytes(values)});
  return make_shaped_pth(shaped, archive, options);
}

Bytes make_shaped_pth(const std::vector<ShapedTensor>& tensors, const std::string& archive,
                      ZipOptions options, const std::string& container) {
  PickleWriter p;
  p.proto();
  if (!container.empty()) p.empty_dict().str(container);
  p.global("collections", "OrderedDict").empty_tuple().reduce().mark();
  std::vector<std::pair<std::string, Bytes>> entries;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ShapedTensor& t = tensors[i];
    std::vector<int> stride(t.shape.size(), 1);
    for (size_t d = t.shape.size(); d-- > 1;) stride[d - 1] = stride[d] * t.shape[d];
    int n = 1;
    for (int s : t.shape) n *= s;
    p.str(t.name).tensor(t.int64 ? "LongStorage" : "FloatStorage", std::to_string(i), n, 0, t.shape,
                         stride);
  }
  p.setitems();
  if (!container.empty()) p.setitem();
  p.stop();
  entries.push_back({archive + "/data.pkl", p.bytes()});
  for (size_t i = 0; i < tensors.size(); ++i)
    entries.push_back({archive + "/data/" + std::to_string(i), tensors[i].bytes});
  entries.push_back({archive + "/version", {'3', '\n'}});
  return make_zip(entries, options);
}

}  // namespace attnlab::testing
