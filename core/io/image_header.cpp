#include "core/io/image_header.h"

#include <cstdlib>
#include <cstring>

namespace attnlab::io {

namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
uint16_t be16(const uint8_t* p) {
  return uint16_t(p[0] << 8 | p[1]);
}
uint16_t le16(const uint8_t* p) {
  return uint16_t(p[0] | p[1] << 8);
}
int32_t le32(const uint8_t* p) {
  return int32_t(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                 uint32_t(p[3]) << 24);
}

// JPEG: walk the marker segments to the first start-of-frame (SOF0..SOF15 but DHT,
// JPG and DAC), which holds height then width.
std::optional<ImageSize> jpeg_size(ByteView d) {
  size_t p = 2;
  while (p + 4 <= d.size) {
    if (d.data[p] != 0xFF) return std::nullopt;
    uint8_t marker = d.data[p + 1];
    if (marker == 0xFF) {  // fill byte
      ++p;
      continue;
    }
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {  // no length
      p += 2;
      continue;
    }
    uint16_t len = be16(d.data + p + 2);
    bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof && p + 9 <= d.size) return ImageSize{be16(d.data + p + 7), be16(d.data + p + 5)};
    if (len < 2) return std::nullopt;
    p += 2 + size_t(len);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageSize> peek_image_size(ByteView d) {
  if (d.size >= 24 && std::memcmp(d.data, "\x89PNG\r\n\x1a\n", 8) == 0 &&
      std::memcmp(d.data + 12, "IHDR", 4) == 0)
    return ImageSize{be32(d.data + 16), be32(d.data + 20)};
  if (d.size >= 4 && d.data[0] == 0xFF && d.data[1] == 0xD8) return jpeg_size(d);
  if (d.size >= 26 && d.data[0] == 'B' &&
      d.data[1] == 'M')  // BITMAPINFOHEADER; height < 0 = top-down
    return ImageSize{std::abs(int64_t(le32(d.data + 18))), std::abs(int64_t(le32(d.data + 22)))};
  if (d.size >= 10 &&
      (std::memcmp(d.data, "GIF87a", 6) == 0 || std::memcmp(d.data, "GIF89a", 6) == 0))
    return ImageSize{le16(d.data + 6), le16(d.data + 8)};
  return std::nullopt;
}

}  // namespace attnlab::io
