// Reads an image's declared width and height from its header without decoding it, so
// a huge (or hostile) image can be refused before any pixel memory is allocated.
// Knows PNG, JPEG, BMP and GIF; other formats return nullopt and rely on the decoder's
// own limit.
#pragma once

#include <cstdint>
#include <optional>

#include "core/io/byte_reader.h"

namespace attnlab::io {

struct ImageSize {
  int64_t width = 0, height = 0;
};

std::optional<ImageSize> peek_image_size(ByteView data);

}  // namespace attnlab::io
