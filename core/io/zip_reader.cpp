#include "core/io/zip_reader.h"

#include <zlib.h>

#include <algorithm>

#include "core/io/inflate.h"

namespace attnlab::io {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEocdSig = 0x06054b50,
                   kZip64EocdSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr size_t kEocdSize = 22;

struct Eocd {
  uint64_t entries, cd_size, cd_offset;
};

// Finds the end-of-central-directory record by scanning back over a possible comment.
size_t find_eocd(ByteView d, const std::string& file) {
  if (d.size < kEocdSize)
    throw IoError(IoErrorKind::BadZip, file,
                  "too short for a zip archive (" + std::to_string(d.size) +
                      " bytes; the end record alone is 22) — truncated?");
  size_t lowest = d.size > kEocdSize + 0xFFFF ? d.size - kEocdSize - 0xFFFF : 0;
  for (size_t p = d.size - kEocdSize + 1; p-- > lowest;) {
    uint32_t sig = uint32_t(d.data[p]) | uint32_t(d.data[p + 1]) << 8 |
                   uint32_t(d.data[p + 2]) << 16 | uint32_t(d.data[p + 3]) << 24;
    if (sig == kEocdSig) return p;
  }
  throw IoError(
      IoErrorKind::BadZip, file,
      "no zip end-of-central-directory record found: the archive is truncated or not a zip");
}

Eocd read_eocd(ByteView d, size_t pos, const std::string& file) {
  ByteReader r(d, file, pos + 4);
  uint16_t disk = r.u16le("EOCD disk number");
  uint16_t cd_disk = r.u16le("EOCD central-directory disk");
  r.u16le("EOCD entries on this disk");
  Eocd e{r.u16le("EOCD entry count"), r.u32le("EOCD central-directory size"),
         r.u32le("EOCD central-directory offset")};
  if (disk != 0 || cd_disk != 0)
    r.fail_at(IoErrorKind::UnsupportedFormat, pos, "multi-volume zip archives are not supported");
  bool needs64 = e.entries == 0xFFFF || e.cd_size == 0xFFFFFFFF || e.cd_offset == 0xFFFFFFFF;
  if (!needs64 && !(pos >= 20 && d.data[pos - 20] == 0x50 && d.data[pos - 19] == 0x4b &&
                    d.data[pos - 18] == 0x06 && d.data[pos - 17] == 0x07))
    return e;
  if (pos < 20) r.fail_at(IoErrorKind::BadZip, pos, "zip64 locator missing before the end record");
  ByteReader loc(d, file, pos - 20);
  if (loc.u32le("zip64 locator signature") != kZip64LocatorSig)
    loc.fail_at(IoErrorKind::BadZip, pos - 20, "zip64 locator missing before the end record");
  loc.u32le("zip64 locator disk");
  uint64_t rec = loc.u64le("zip64 end record offset");
  ByteReader z(d, file);
  z.seek(rec, "zip64 end record");
  if (z.u32le("zip64 end record signature") != kZip64EocdSig)
    z.fail_at(IoErrorKind::BadZip, rec, "bad zip64 end-of-central-directory signature");
  z.u64le("zip64 record size");
  z.u16le("zip64 version made by");
  z.u16le("zip64 version needed");
  z.u32le("zip64 disk");
  z.u32le("zip64 cd disk");
  z.u64le("zip64 entries on disk");
  e.entries = z.u64le("zip64 entry count");
  e.cd_size = z.u64le("zip64 central-directory size");
  e.cd_offset = z.u64le("zip64 central-directory offset");
  return e;
}

}  // namespace

ZipReader::ZipReader(ByteView data, std::string file) : data_(data), file_(std::move(file)) {
  parse_central_directory();
}

void ZipReader::parse_central_directory() {
  size_t eocd_pos = find_eocd(data_, file_);
  Eocd eocd = read_eocd(data_, eocd_pos, file_);
  if (!in_bounds(eocd.cd_offset, eocd.cd_size, data_.size))
    throw IoError(IoErrorKind::BadZip, file_,
                  "central directory [" + std::to_string(eocd.cd_offset) + ", +" +
                      std::to_string(eocd.cd_size) + ") lies outside the file — truncated archive?",
                  static_cast<int64_t>(eocd_pos));
  // Each central entry takes at least 46 bytes: an absurd count is caught before allocating.
  if (eocd.entries > eocd.cd_size / 46)
    throw IoError(IoErrorKind::BadZip, file_,
                  std::to_string(eocd.entries) + " entries cannot fit in a central directory of " +
                      std::to_string(eocd.cd_size) + " bytes",
                  static_cast<int64_t>(eocd_pos));
  ByteReader r(data_, file_);
  r.seek(eocd.cd_offset, "central directory");
  entries_.reserve(eocd.entries);
  for (uint64_t i = 0; i < eocd.entries; ++i) {
    size_t at = r.pos();
    if (r.u32le("central directory entry signature") != kCentralSig)
      r.fail_at(IoErrorKind::BadZip, at, "expected a central directory entry (PK\\1\\2)");
    r.u16le("version made by");
    r.u16le("version needed");
    uint16_t flags = r.u16le("flags");
    ZipEntry e;
    e.method = r.u16le("compression method");
    r.u16le("mod time");
    r.u16le("mod date");
    e.crc32 = r.u32le("crc-32");
    e.compressed_size = r.u32le("compressed size");
    e.size = r.u32le("uncompressed size");
    uint16_t name_len = r.u16le("name length");
    uint16_t extra_len = r.u16le("extra length");
    uint16_t comment_len = r.u16le("comment length");
    r.u16le("disk number");
    r.u16le("internal attributes");
    r.u32le("external attributes");
    e.local_header_offset = r.u32le("local header offset");
    e.name = std::string(r.bytes(name_len, "entry name").str());
    ByteView extra = r.bytes(extra_len, "extra field");
    r.bytes(comment_len, "entry comment");
    if (flags & 0x1)
      r.fail_at(IoErrorKind::UnsupportedFormat, at, "encrypted entry '" + e.name + "'");

    // zip64 extended information: only the fields that were 0xFFFFFFFF, in this order.
    ByteReader x(extra, file_);
    while (x.remaining() >= 4) {
      uint16_t id = x.u16le("extra id");
      uint16_t len = x.u16le("extra length");
      ByteView body = x.bytes(len, "extra body");
      if (id != 0x0001) continue;
      ByteReader z(body, file_);
      if (e.size == 0xFFFFFFFF) e.size = z.u64le("zip64 size");
      if (e.compressed_size == 0xFFFFFFFF) e.compressed_size = z.u64le("zip64 compressed size");
      if (e.local_header_offset == 0xFFFFFFFF) e.local_header_offset = z.u64le("zip64 offset");
    }

    ByteReader l(data_, file_);
    l.seek(e.local_header_offset, "local header");
    if (l.u32le("local header signature") != kLocalSig)
      l.fail_at(IoErrorKind::BadZip, e.local_header_offset,
                "expected the local header of '" + e.name + "' (PK\\3\\4)");
    l.bytes(22, "local header");
    uint16_t lname = l.u16le("local name length");
    uint16_t lextra = l.u16le("local extra length");
    l.bytes(size_t(lname) + lextra, "local name and extra");
    e.data_offset = l.pos();
    if (!in_bounds(e.data_offset, e.compressed_size, data_.size))
      throw IoError(IoErrorKind::Truncated, file_,
                    "entry '" + e.name + "' needs " + std::to_string(e.compressed_size) +
                        " bytes from offset " + std::to_string(e.data_offset) +
                        " but the file has " + std::to_string(data_.size) + " — truncated archive?",
                    static_cast<int64_t>(e.data_offset));
    if (e.method != 0 && e.method != 8)
      throw IoError(IoErrorKind::UnsupportedFormat, file_,
                    "entry '" + e.name + "' uses compression method " + std::to_string(e.method) +
                        "; only stored (0) and deflate (8) are supported");
    if (e.method == 0 && e.compressed_size != e.size)
      throw IoError(IoErrorKind::BadZip, file_,
                    "stored entry '" + e.name + "' has different compressed and plain sizes");
    if (!index_.emplace(e.name, entries_.size()).second)
      throw IoError(IoErrorKind::BadZip, file_, "entry '" + e.name + "' appears twice");
    entries_.push_back(std::move(e));
  }
}

const ZipEntry* ZipReader::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

ByteView ZipReader::read(const ZipEntry& e) {
  ByteView out = data_.sub(e.data_offset, e.compressed_size);
  if (e.method == 8) {
    // The declared size is the reserve hint, so it must be believable first.
    if (e.size > e.compressed_size * kMaxDeflateRatio + 1024 || e.size > (uint64_t(16) << 30))
      throw IoError(IoErrorKind::BadZip, file_,
                    "entry '" + e.name + "' declares " + std::to_string(e.size) + " bytes from " +
                        std::to_string(e.compressed_size) +
                        " compressed: more than deflate can produce",
                    static_cast<int64_t>(e.local_header_offset));
    std::unique_ptr<std::vector<uint8_t>> buf;
    try {
      buf = std::make_unique<std::vector<uint8_t>>(
          inflate_bounded(out, DeflateWrapper::Raw, e.size, e.size, file_));
    } catch (const IoError& err) {
      throw IoError(IoErrorKind::BadZip, file_,
                    "entry '" + e.name + "' does not inflate to its declared " +
                        std::to_string(e.size) + " bytes: " + err.message(),
                    static_cast<int64_t>(e.data_offset));
    }
    if (buf->size() != e.size)
      throw IoError(IoErrorKind::BadZip, file_,
                    "entry '" + e.name + "' inflates to " + std::to_string(buf->size()) +
                        " bytes, not its declared " + std::to_string(e.size),
                    static_cast<int64_t>(e.data_offset));
    out = ByteView(buf->data(), buf->size());
    inflated_.push_back(std::move(buf));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < out.size;) {  // crc32() takes uInt lengths
    uInt n = static_cast<uInt>(std::min<uint64_t>(out.size - done, 1u << 30));
    crc = crc32(crc, out.data + done, n);
    done += n;
  }
  if (crc != e.crc32)
    throw IoError(IoErrorKind::ChecksumMismatch, file_,
                  "entry '" + e.name + "' fails its CRC-32 check (corrupt download?)",
                  static_cast<int64_t>(e.data_offset));
  return out;
}

}  // namespace attnlab::io
