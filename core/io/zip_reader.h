// A read-only zip archive reader for PyTorch checkpoints (torch.save since 1.6 writes an
// uncompressed zip). Parses the end-of-central-directory record (and its zip64 form),
// the central directory and local headers; entries are stored (method 0) or deflated
// (method 8, in case a checkpoint was re-zipped). All offsets are bounds-checked and
// CRC-32 is verified on read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/byte_reader.h"

namespace attnlab::io {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;  // where the (compressed) bytes start in the archive
};

class ZipReader {
 public:
  // `data` must outlive the reader. Throws IoError(BadZip / Truncated / ...).
  ZipReader(ByteView data, std::string file);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(const std::string& name) const;

  // The entry's bytes: a view into the archive for stored entries (no copy), or into a
  // buffer owned by this reader for deflated ones. CRC-32 is checked either way.
  ByteView read(const ZipEntry& entry);

 private:
  void parse_central_directory();
  ByteView data_;
  std::string file_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> inflated_;
};

}  // namespace attnlab::io
