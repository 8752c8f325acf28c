#include "core/io/pth.h"

#include <algorithm>

#include "core/io/zip_reader.h"

namespace attnlab::io {

bool looks_like_legacy_pickle(ByteView head) {
  // Pickles start with PROTO (0x80) from protocol 2 on; torch's legacy format pickles a
  // magic number first, so it starts the same way.
  return head.size >= 2 && head.data[0] == 0x80 && head.data[1] <= 5;
}

PthArchive parse_pth(ByteView data, const std::string& file) {
  ZipReader zip(data, file);
  const ZipEntry* pkl = nullptr;
  bool torchscript = false;
  for (const ZipEntry& e : zip.entries()) {
    size_t slash = e.name.find('/');
    if (slash == std::string::npos) continue;
    std::string rest = e.name.substr(slash + 1);
    if (rest == "data.pkl" && !pkl) pkl = &e;
    if (rest == "constants.pkl" || rest.rfind("code/", 0) == 0) torchscript = true;
  }
  if (!pkl) {
    if (torchscript)
      throw IoError(IoErrorKind::UnsupportedFormat, file,
                    "this is a TorchScript archive (torch.jit.save) of an old format without "
                    "data.pkl; save the model's state_dict() with torch.save instead");
    throw IoError(IoErrorKind::MissingEntry, file,
                  "zip archive has no <name>/data.pkl record: not a torch.save checkpoint");
  }
  PthArchive out;
  out.torchscript = torchscript;
  out.archive_name = pkl->name.substr(0, pkl->name.find('/'));
  const std::string prefix = out.archive_name + "/";
  if (const ZipEntry* v = zip.find(prefix + "version")) {
    out.version = std::string(zip.read(*v).str());
    while (!out.version.empty() && (out.version.back() == '\n' || out.version.back() == '\r'))
      out.version.pop_back();
  }
  if (const ZipEntry* bo = zip.find(prefix + "byteorder")) {
    std::string order(zip.read(*bo).str());
    if (order != "little")
      throw IoError(IoErrorKind::UnsupportedFormat, file,
                    "checkpoint was saved on a '" + order +
                        "'-endian machine; only little-endian is supported");
  }
  pickle::StorageProvider storages = [&](const std::string& key) -> std::optional<ByteView> {
    const ZipEntry* e = zip.find(prefix + "data/" + key);
    if (!e) return std::nullopt;
    return zip.read(*e);
  };
  // Views can materialise more bytes than their storage (stride 0): a real checkpoint's
  // tensors add up to about its size, so a small file that asks for gigabytes is refused.
  pickle::Limits limits;
  limits.max_tensor_bytes =
      std::min<uint64_t>(limits.max_tensor_bytes, 8 * uint64_t(data.size) + (64u << 20));
  out.doc = pickle::unpickle(zip.read(*pkl), file + " (" + pkl->name + ")", storages, limits);
  return out;
}

}  // namespace attnlab::io
