// encode_png: colour type chosen from the pixels, rows filtered, one libdeflate call, the
// chunks written by hand (IHDR, pHYs, PLTE/tRNS, one IDAT, IEND). Lossless: a reader gets
// back exactly the RGBA it was given (tests/viz/png_encode_test.cpp decodes it with libpng).
#include "viz/png_encode.h"

#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace attnlab::viz {
namespace {

enum : uint8_t { kPalette = 3, kRgb = 2, kRgba = 6 };

void put_be32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s.push_back(char((v >> (8 * i)) & 0xFF));
}

void put_chunk(std::string& out, const char type[4], const void* data, size_t n) {
  if (n > 0x7FFFFFFFu) throw std::runtime_error("png encoding: a chunk over 2 GiB");
  put_be32(out, uint32_t(n));
  const size_t start = out.size();
  out.append(type, 4);
  out.append(static_cast<const char*>(data), n);
  put_be32(out, libdeflate_crc32(0, out.data() + start, n + 4));
}

// The figure's colours in order of first appearance, or nothing when there are more
// than 256; `index` then holds each pixel's entry.
struct Palette {
  std::vector<uint32_t> colours;  // R | G << 8 | B << 16 | A << 24, as the bytes lie
  std::vector<uint8_t> index;
};

bool make_palette(const RgbaImage& im, Palette& p) {
  // Open addressing over 1024 slots (at most 256 used: never more than a quarter full).
  constexpr size_t kSlots = 1024;
  std::array<uint32_t, kSlots> key{};
  std::array<int16_t, kSlots> slot{};
  slot.fill(-1);
  const size_t n = im.pixel_count();
  p.index.resize(n);
  uint32_t last = 0;
  int last_index = -1;
  for (size_t i = 0; i < n; ++i) {
    uint32_t c;
    std::memcpy(&c, &im.rgba[i * 4], 4);
    if (c == last && last_index >= 0) {  // runs of one colour: most of a figure
      p.index[i] = uint8_t(last_index);
      continue;
    }
    size_t h = (c * 2654435761u) >> 22;  // 10 bits
    while (slot[h] >= 0 && key[h] != c) h = (h + 1) & (kSlots - 1);
    if (slot[h] < 0) {
      if (p.colours.size() == 256) return false;
      key[h] = c;
      slot[h] = int16_t(p.colours.size());
      p.colours.push_back(c);
    }
    last = c;
    last_index = slot[h];
    p.index[i] = uint8_t(last_index);
  }
  return true;
}

// The Paeth predictor, written without branches so that the row loops vectorise.
inline int paeth(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  const int bc = pb <= pc ? b : c;
  return pa <= pb && pa <= pc ? a : bc;
}

template <int Type>
inline uint8_t filtered_byte(int x, int a, int b, int c) {
  if constexpr (Type == 0) return uint8_t(x);
  if constexpr (Type == 1) return uint8_t(x - a);
  if constexpr (Type == 2) return uint8_t(x - b);
  if constexpr (Type == 3) return uint8_t(x - (a + b) / 2);
  if constexpr (Type == 4) return uint8_t(x - paeth(a, b, c));
  return 0;
}

template <int Type>
void filter_row(const uint8_t* cur, const uint8_t* prev, size_t n, size_t bpp, uint8_t* out) {
  const size_t first = std::min(bpp, n);  // the first pixel: nothing to its left
  for (size_t i = 0; i < first; ++i) out[i] = filtered_byte<Type>(cur[i], 0, prev[i], 0);
  for (size_t i = first; i < n; ++i)
    out[i] = filtered_byte<Type>(cur[i], cur[i - bpp], prev[i], prev[i - bpp]);
}

void filter_row(int type, const uint8_t* cur, const uint8_t* prev, size_t n, size_t bpp,
                uint8_t* out) {
  switch (type) {
    case 0: return filter_row<0>(cur, prev, n, bpp, out);
    case 1: return filter_row<1>(cur, prev, n, bpp, out);
    case 2: return filter_row<2>(cur, prev, n, bpp, out);
    case 3: return filter_row<3>(cur, prev, n, bpp, out);
    default: return filter_row<4>(cur, prev, n, bpp, out);
  }
}

// The sum of the bytes read as signed, in absolute value: the usual measure of how well
// a filter did (smaller compresses better, on average).
uint64_t signed_sum(const uint8_t* v, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += uint64_t(v[i] < 128 ? v[i] : 256 - v[i]);
  return sum;
}

// The filtered scanlines: one filter byte, then the row.
std::vector<uint8_t> filtered(const std::vector<uint8_t>& raw, size_t row_bytes, int height,
                              size_t bpp, PngFilter filter) {
  std::vector<uint8_t> out(size_t(height) * (row_bytes + 1));
  const std::vector<uint8_t> zeros(row_bytes, 0);
  std::vector<uint8_t> trials(filter == PngFilter::Adaptive ? 5 * row_bytes : 0);
  for (int y = 0; y < height; ++y) {
    const uint8_t* cur = raw.data() + size_t(y) * row_bytes;
    const uint8_t* prev = y > 0 ? cur - row_bytes : zeros.data();
    uint8_t* dst = out.data() + size_t(y) * (row_bytes + 1);
    int type = int(filter);  // PngFilter's order is PNG's filter numbering
    if (filter == PngFilter::Adaptive) {
      // The filter whose bytes, read as signed, sum to the least in absolute value; its
      // row is kept rather than filtered again.
      uint64_t best = UINT64_MAX;
      for (int t = 0; t <= 4; ++t) {
        uint8_t* row = trials.data() + size_t(t) * row_bytes;
        filter_row(t, cur, prev, row_bytes, bpp, row);
        const uint64_t sum = signed_sum(row, row_bytes);
        if (sum < best) best = sum, type = t;
      }
      dst[0] = uint8_t(type);
      std::memcpy(dst + 1, trials.data() + size_t(type) * row_bytes, row_bytes);
      continue;
    }
    dst[0] = uint8_t(type);
    filter_row(type, cur, prev, row_bytes, bpp, dst + 1);
  }
  return out;
}

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

// One compressor per thread and level: figures are encoded on several threads at once.
libdeflate_compressor* compressor(int level) {
  thread_local std::array<std::unique_ptr<libdeflate_compressor, CompressorDeleter>, 13> made;
  auto& c = made[size_t(level)];
  if (!c) c.reset(libdeflate_alloc_compressor(level));
  if (!c) throw std::runtime_error("png encoding: libdeflate could not allocate a compressor");
  return c.get();
}

}  // namespace

std::string encode_png(const RgbaImage& im, double dpi, const PngSettings& s) {
  if (im.empty() || im.rgba.size() != im.pixel_count() * 4)
    throw std::invalid_argument("png encoding: an empty or inconsistent image");
  if (!(dpi > 0)) throw std::invalid_argument("png encoding: dpi must be positive");
  if (s.level < 0 || s.level > 12)
    throw std::invalid_argument("png encoding: libdeflate's levels are 0 to 12");
  const size_t n = im.pixel_count();
  Palette palette;
  bool opaque = true;
  for (size_t i = 0; i < n && opaque; ++i) opaque = im.rgba[i * 4 + 3] == 255;
  const bool indexed = s.allow_palette && make_palette(im, palette);
  const uint8_t type = indexed ? kPalette : opaque && s.allow_rgb ? kRgb : kRgba;
  const size_t bpp = type == kPalette ? 1 : type == kRgb ? 3 : 4;

  std::vector<uint8_t> raw;
  if (type == kPalette) {
    raw = std::move(palette.index);
  } else if (type == kRgb) {
    raw.resize(n * 3);
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) raw[i * 3 + size_t(c)] = im.rgba[i * 4 + size_t(c)];
  } else {
    raw = im.rgba;
  }
  const size_t row_bytes = size_t(im.width) * bpp;
  // Palette rows stay unfiltered: differences of indices carry no meaning (the PNG
  // specification's own advice).
  const std::vector<uint8_t> scan =
      filtered(raw, row_bytes, im.height, bpp, type == kPalette ? PngFilter::None : s.filter);
  libdeflate_compressor* c = compressor(s.level);
  std::vector<uint8_t> idat(libdeflate_zlib_compress_bound(c, scan.size()));
  const size_t packed = libdeflate_zlib_compress(c, scan.data(), scan.size(), idat.data(), idat.size());
  if (packed == 0) throw std::runtime_error("png encoding: libdeflate's output did not fit");

  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_be32(ihdr, uint32_t(im.width));
  put_be32(ihdr, uint32_t(im.height));
  ihdr += std::string{char(8), char(type), char(0), char(0), char(0)};  // 8 bits, deflate,
  put_chunk(out, "IHDR", ihdr.data(), ihdr.size());                     // adaptive, no interlace
  std::string phys;
  const auto ppm = uint32_t(std::lround(dpi / 0.0254));  // pixels per metre
  put_be32(phys, ppm);
  put_be32(phys, ppm);
  phys.push_back(1);
  put_chunk(out, "pHYs", phys.data(), phys.size());
  if (type == kPalette) {
    std::string plte, trns;
    size_t last_translucent = 0;
    for (size_t i = 0; i < palette.colours.size(); ++i) {
      const uint32_t col = palette.colours[i];
      plte += std::string{char(col & 0xFF), char((col >> 8) & 0xFF), char((col >> 16) & 0xFF)};
      trns.push_back(char(col >> 24));
      if ((col >> 24) != 255) last_translucent = i + 1;
    }
    put_chunk(out, "PLTE", plte.data(), plte.size());
    if (last_translucent > 0) put_chunk(out, "tRNS", trns.data(), last_translucent);
  }
  put_chunk(out, "IDAT", idat.data(), packed);
  put_chunk(out, "IEND", nullptr, 0);
  return out;
}

}  // namespace attnlab::viz
