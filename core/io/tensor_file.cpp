// Format sniffing and the flattening of a .pth container into named tensors.
#include "core/io/tensor_file.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/io/file_bytes.h"
#include "core/io/idx.h"
#include "core/io/npy.h"
#include "core/io/pth.h"
#include "core/io/safetensors.h"

namespace attnlab::io {

const char* file_format_name(FileFormat f) {
  switch (f) {
    case FileFormat::Safetensors:
      return "safetensors";
    case FileFormat::TorchZip:
      return "PyTorch zip checkpoint (.pth)";
    case FileFormat::Npy:
      return "NumPy .npy";
    case FileFormat::Idx:
      return "IDX";
    case FileFormat::Unknown:
      return "unknown";
  }
  return "unknown";
}

FileFormat sniff_format(ByteView h) {
  if (h.size >= 4 && std::memcmp(h.data, "PK\x03\x04", 4) == 0) return FileFormat::TorchZip;
  if (h.size >= 6 && std::memcmp(h.data, "\x93NUMPY", 6) == 0) return FileFormat::Npy;
  if (h.size >= 2 && h.data[0] == 0x1f && h.data[1] == 0x8b) return FileFormat::Idx;  // gzipped IDX
  if (h.size >= 4 && h.data[0] == 0 && h.data[1] == 0 &&
      (h.data[2] == 0x08 || h.data[2] == 0x09 || (h.data[2] >= 0x0B && h.data[2] <= 0x0E)))
    return FileFormat::Idx;
  // safetensors: u64 header length, then a JSON object.
  if (h.size >= 9 && h.data[8] == '{') return FileFormat::Safetensors;
  return FileFormat::Unknown;
}

namespace {

using pickle::Document;
using pickle::Kind;
using pickle::NodeId;

std::string key_text(const Document& doc, NodeId id) {
  const pickle::Node& n = doc.at(id);
  if (n.kind == Kind::String) return n.text;
  if (n.kind == Kind::Int) return std::to_string(n.int_value);
  return pickle::describe(doc, id);
}

// Dict entries with later duplicates winning, in first-seen order.
std::vector<std::pair<NodeId, NodeId>> dict_entries(const Document& doc, NodeId id) {
  const auto& items = doc.at(id).items;
  std::vector<std::pair<NodeId, NodeId>> out;
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    std::string k = key_text(doc, items[i]);
    auto [it, fresh] = seen.emplace(k, out.size());
    if (fresh)
      out.emplace_back(items[i], items[i + 1]);
    else
      out[it->second].second = items[i + 1];
  }
  return out;
}

struct TensorRef {
  std::string container_key, name;
  size_t tensor_index;
};

// Walks a container depth-first, collecting every tensor with its dotted path. Shared
// sub-containers are walked once per path (that is what their names are), so the walk
// has a budget: a pickle that reuses containers to explode into billions of paths is
// refused rather than walked.
class Flattener {
 public:
  Flattener(const Document& doc, const std::string& file) : doc_(doc), file_(file) {}

  void walk(NodeId id, const std::string& container_key, const std::string& path, int depth) {
    if (++visits_ > kMaxVisits)
      throw IoError(IoErrorKind::LimitExceeded, file_,
                    "the checkpoint's containers reference each other into more than " +
                        std::to_string(kMaxVisits) + " paths; refusing to walk them");
    const pickle::Node& n = doc_.at(id);
    if (n.kind == Kind::Tensor) {
      refs.push_back({container_key, path, size_t(n.int_value)});
      return;
    }
    // A TorchScript module: its attributes (submodules, parameters, buffers) are the dict
    // BUILD gave it, so it is walked as that dict; other objects hold no weights we read.
    if (n.kind == Kind::Object) {
      if (!pickle::is_torchscript_module(n.text) || n.items.empty() ||
          doc_.at(n.items.back()).kind != Kind::Dict)
        return;
      walk(n.items.back(), container_key, path, depth);
      return;
    }
    bool is_container = n.kind == Kind::Dict || n.kind == Kind::List || n.kind == Kind::Tuple;
    if (!is_container) return;
    if (depth > kMaxDepth || !on_path_.insert(id).second) {
      truncated = true;  // cycles and absurd nesting hold no weights worth walking into
      return;
    }
    auto child = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
    if (n.kind == Kind::Dict) {
      for (auto [k, v] : dict_entries(doc_, id))
        walk(v, container_key, child(key_text(doc_, k)), depth + 1);
    } else {
      for (size_t i = 0; i < n.items.size(); ++i)
        walk(n.items[i], container_key, child(std::to_string(i)), depth + 1);
    }
    on_path_.erase(id);
  }

  std::vector<TensorRef> refs;
  bool truncated = false;

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxVisits = 1'000'000;  // real checkpoints: tens of thousands
  const Document& doc_;
  const std::string& file_;
  size_t visits_ = 0;
  std::unordered_set<NodeId> on_path_;
};

ContainerEntry describe_entry(const Document& doc, const std::string& key, NodeId id,
                              size_t tensors) {
  const pickle::Node& n = doc.at(id);
  ContainerEntry e{key, "", pickle::describe(doc, id), tensors};
  switch (n.kind) {
    case Kind::Tensor:
      e.kind = "tensor";
      break;
    case Kind::Dict: {
      size_t direct = 0;
      for (auto [k, v] : dict_entries(doc, id)) direct += doc.at(v).kind == Kind::Tensor;
      e.kind = direct > 0 ? "state dict" : "dict";
      e.summary =
          std::to_string(n.items.size() / 2) + " entries, " + std::to_string(tensors) + " tensors";
      break;
    }
    case Kind::List:
    case Kind::Tuple:
    case Kind::Set:
      e.kind = "sequence";
      break;
    case Kind::Int:
      e.kind = "int";
      break;
    case Kind::Float:
      e.kind = "float";
      break;
    case Kind::String:
      e.kind = "str";
      break;
    case Kind::Bool:
      e.kind = "bool";
      break;
    case Kind::None:
      e.kind = "None";
      break;
    case Kind::Object:
      e.kind = "object";
      break;
    default:
      e.kind = "other";
      break;
  }
  return e;
}

void fill_from_pth(PthArchive&& pth, uint64_t file_size, TensorFile& out) {
  Document& doc = pth.doc;
  Flattener flat(doc, out.path);
  const pickle::Node& root = doc.at(doc.root);
  bool root_is_flat_state_dict = false;
  if (root.kind == Kind::Dict) {
    auto entries = dict_entries(doc, doc.root);
    root_is_flat_state_dict = !entries.empty();
    for (auto [k, v] : entries) root_is_flat_state_dict &= doc.at(v).kind == Kind::Tensor;
    for (auto [k, v] : entries) {
      std::string key = key_text(doc, k);
      size_t before = flat.refs.size();
      if (root_is_flat_state_dict)
        flat.walk(v, "", key, 1);
      else
        flat.walk(v, key, "", 1);
      if (!root_is_flat_state_dict)
        out.container.push_back(describe_entry(doc, key, v, flat.refs.size() - before));
    }
  } else {
    flat.walk(doc.root, "", "", 0);
    out.container.push_back(describe_entry(doc, "(root)", doc.root, flat.refs.size()));
  }
  if (flat.truncated)
    out.notes.push_back("some nested containers were cyclic or deeper than 64 levels; not walked");
  if (pth.torchscript)
    out.notes.push_back(
        "a TorchScript archive (torch.jit.save): its modules' tensors were read as data, named "
        "by their attribute paths as a state dict; nothing in its code/ was run");
  out.notes.insert(out.notes.end(), doc.notes.begin(), doc.notes.end());

  // Move each tensor out on its last reference; earlier references (shared tensors) copy.
  // Copies are budgeted like the unpickler's views: about the file's own size.
  std::vector<size_t> uses(doc.tensors.size(), 0);
  for (const auto& r : flat.refs) ++uses[r.tensor_index];
  uint64_t copied = 0;
  const uint64_t copy_budget = 8 * file_size + (64u << 20);
  for (size_t i = 0; i < uses.size(); ++i)
    if (uses[i] > 1) copied += (uses[i] - 1) * uint64_t(doc.tensors[i].bytes.size());
  if (copied > copy_budget)
    throw IoError(IoErrorKind::LimitExceeded, out.path,
                  "the container references its tensors so often that listing them would take " +
                      std::to_string(copied) + " bytes of copies");
  for (const auto& r : flat.refs) {
    std::string full = r.container_key.empty()
                           ? r.name
                           : (r.name.empty() ? r.container_key : r.container_key + "." + r.name);
    if (out.tensors.find(full)) {
      out.notes.push_back("duplicate tensor path '" + full + "' kept once");
      continue;
    }
    RawTensor t = --uses[r.tensor_index] == 0 ? std::move(doc.tensors[r.tensor_index])
                                              : doc.tensors[r.tensor_index];
    out.tensors.add(full, std::move(t));
    out.container_key.push_back(r.container_key);
    out.name_in_container.push_back(r.name);
  }
  if (!pth.version.empty()) out.metadata["torch.save format version"] = pth.version;
}

void add_flat(TensorFile& out, const std::string& name, RawTensor t) {
  out.tensors.add(name, std::move(t));
  out.container_key.emplace_back();
  out.name_in_container.push_back(name);
}

// An attnlab training checkpoint: "model.<name>" and "optimizer.<name>" tensors are the
// two containers, like a .pth's {'model': ..., 'optimizer': ...}, so the loaders take the
// weights from "model" by the usual rule.
void add_training_container(TensorFile& out, SafetensorsFile& st) {
  std::map<std::string, size_t> counts;
  for (size_t i = 0; i < st.tensors.size(); ++i) {
    const std::string name = st.tensors.entries()[i].name;
    const size_t dot = name.find('.');
    const std::string key = dot == std::string::npos ? "" : name.substr(0, dot);
    out.tensors.add(name, st.tensors.take(i));
    out.container_key.push_back(key);
    out.name_in_container.push_back(dot == std::string::npos ? name : name.substr(dot + 1));
    ++counts[key];
  }
  for (const auto& [key, n] : counts) {
    ContainerEntry e;
    e.key = key;
    e.kind = "state dict";
    e.summary = std::to_string(n) + " tensors";
    e.tensor_count = n;
    out.container.push_back(e);
  }
}

}  // namespace

TensorFile parse_tensor_file(ByteView data, const std::string& path) {
  TensorFile out;
  out.path = path;
  if (data.size == 0) throw IoError(IoErrorKind::Empty, path, "file is empty (0 bytes)");
  out.format = sniff_format(data);
  switch (out.format) {
    case FileFormat::Safetensors: {
      SafetensorsFile st = parse_safetensors(data, path);
      out.metadata = std::move(st.metadata);
      const auto container = out.metadata.find("attnlab.container");
      if (container != out.metadata.end() && container->second == "training") {
        add_training_container(out, st);
      } else {
        for (size_t i = 0; i < st.tensors.size(); ++i)
          add_flat(out, st.tensors.entries()[i].name, st.tensors.take(i));
      }
      break;
    }
    case FileFormat::TorchZip:
      fill_from_pth(parse_pth(data, path), data.size, out);
      break;
    case FileFormat::Npy:
      add_flat(out, "array", parse_npy(data, path));
      break;
    case FileFormat::Idx: {
      RawTensor t = (data.data[0] == 0x1f) ? [&] {
        std::vector<uint8_t> raw = gunzip(data, path, uint64_t(4) << 30);
        return parse_idx(ByteView(raw.data(), raw.size()), path);
      }() : parse_idx(data, path);
      add_flat(out, "array", std::move(t));
      break;
    }
    case FileFormat::Unknown:
      if (looks_like_legacy_pickle(data))
        throw IoError(
            IoErrorKind::UnsupportedFormat, path,
            "legacy (pre-1.6) torch.save format or a bare pickle: unsupported; re-save it with "
            "torch >= 1.6 (torch.save(torch.load(f), 'new.pth')) or convert to safetensors");
      throw IoError(
          IoErrorKind::UnsupportedFormat, path,
          "unrecognised file format (expected safetensors, a torch.save zip, .npy or IDX)", 0);
  }
  return out;
}

TensorFile read_tensor_file(const std::string& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_tensor_file(ByteView(bytes.data(), bytes.size()), path);
}

}  // namespace attnlab::io
