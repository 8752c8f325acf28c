#include "core/io/image_io.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/io/file_bytes.h"

namespace attnlab::io {

RgbImage load_rgb_image(const std::string& path, const ImageLimits& limits) {
  std::vector<uint8_t> bytes = read_file_bytes(path, uint64_t(2) << 30);
  if (bytes.empty()) throw IoError(IoErrorKind::Empty, path, "image file is empty (0 bytes)");
  cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8UC1, bytes.data());
  cv::Mat img;
  try {
    // Decode the header-declared size first would need codec internals; OpenCV's own
    // guard (OPENCV_IO_MAX_IMAGE_PIXELS) applies, and we check the result below.
    img = cv::imdecode(encoded, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    throw IoError(IoErrorKind::BadHeader, path, std::string("image could not be decoded: ") + e.what());
  }
  if (img.empty())
    throw IoError(IoErrorKind::BadHeader, path,
                  "not a readable image (corrupt, truncated, or a format OpenCV cannot decode)");
  if (int64_t(img.cols) * img.rows > limits.max_pixels)
    throw IoError(IoErrorKind::LimitExceeded, path,
                  "image is " + std::to_string(img.cols) + "x" + std::to_string(img.rows) +
                      ", over the limit of " + std::to_string(limits.max_pixels) + " pixels");
  cv::Mat rgb;
  cv::cvtColor(img, rgb, cv::COLOR_BGR2RGB);
  RgbImage out;
  out.width = rgb.cols;
  out.height = rgb.rows;
  out.rgb.assign(rgb.data, rgb.data + rgb.total() * 3);
  return out;
}

}  // namespace attnlab::io
