// PyTorch checkpoints as torch.save writes them since 1.6: a zip archive holding
// <archive>/data.pkl (the pickled object), <archive>/data/<key> (one record per tensor
// storage), <archive>/version and, in newer versions, <archive>/byteorder. The pickle
// is read by the restricted unpickler (pickle.h); storages are resolved from the zip.
#pragma once

#include <string>

#include "core/io/byte_reader.h"
#include "core/io/pickle.h"

namespace attnlab::io {

struct PthArchive {
  std::string archive_name;  // the folder inside the zip ("deit_mini")
  std::string version;       // content of the version record, e.g. "3"
  // A TorchScript archive (torch.jit.save: constants.pkl and code/ beside data.pkl). Its
  // data.pkl is read like any other, as data; the code is never looked at.
  bool torchscript = false;
  pickle::Document doc;
};

// True when the bytes look like a legacy (pre-1.6) torch.save file or a bare pickle.
bool looks_like_legacy_pickle(ByteView head);

// Throws IoError: BadZip / Truncated for a broken archive, MissingEntry when data.pkl or
// a storage record is absent, UnsupportedFormat for a TorchScript archive of the old
// format without data.pkl and for big-endian saves, and whatever the unpickler raises.
PthArchive parse_pth(ByteView data, const std::string& file);

}  // namespace attnlab::io
