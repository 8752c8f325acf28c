#include "core/io/image_io.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>
#include <mutex>

#include "core/io/file_bytes.h"
#include "core/io/image_header.h"

namespace attnlab::io {

namespace {
std::once_flag opencv_guard_once;
}  // namespace

RgbImage load_rgb_image(const std::string& path, const ImageLimits& limits) {
  std::vector<uint8_t> bytes = read_file_bytes(path, uint64_t(2) << 30);
  if (bytes.empty()) throw IoError(IoErrorKind::Empty, path, "image file is empty (0 bytes)");
  auto too_large = [&](int64_t w, int64_t h) {
    return IoError(IoErrorKind::LimitExceeded, path,
                   "image is " + std::to_string(w) + "x" + std::to_string(h) +
                       ", over the limit of " + std::to_string(limits.max_pixels) + " pixels");
  };
  // Refuse by the declared size before decoding allocates anything.
  if (auto size = peek_image_size(ByteView(bytes.data(), bytes.size()));
      size && (size->width > limits.max_pixels || size->height > limits.max_pixels ||
               size->width * size->height > limits.max_pixels))
    throw too_large(size->width, size->height);
  // Formats we cannot peek: OpenCV's own guard (read once, at its first decode) is set to
  // the default limit unless the user chose one. Once per process: setenv is not
  // thread-safe, and two loads may run at the same time.
  std::call_once(opencv_guard_once, [] {
    setenv("OPENCV_IO_MAX_IMAGE_PIXELS", std::to_string(ImageLimits{}.max_pixels).c_str(), 0);
  });
  cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8UC1, bytes.data());
  cv::Mat img;
  try {
    img = cv::imdecode(encoded, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    throw IoError(IoErrorKind::BadHeader, path,
                  std::string("image could not be decoded: ") + e.what());
  }
  if (img.empty())
    throw IoError(IoErrorKind::BadHeader, path,
                  "not a readable image (corrupt, truncated, or a format OpenCV cannot decode)");
  if (int64_t(img.cols) * img.rows > limits.max_pixels) throw too_large(img.cols, img.rows);
  cv::Mat rgb;
  cv::cvtColor(img, rgb, cv::COLOR_BGR2RGB);
  RgbImage out;
  out.width = rgb.cols;
  out.height = rgb.rows;
  out.rgb.assign(rgb.data, rgb.data + rgb.total() * 3);
  return out;
}

void save_png(const std::string& path, int width, int height, int channels, const uint8_t* pixels) {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3))
    throw IoError(IoErrorKind::BadHeader, path,
                  "cannot write a " + std::to_string(width) + "x" + std::to_string(height) + "x" +
                      std::to_string(channels) + " image as PNG (1 or 3 channels)");
  const cv::Mat in(height, width, channels == 1 ? CV_8UC1 : CV_8UC3, const_cast<uint8_t*>(pixels));
  cv::Mat out = in;
  if (channels == 3) cv::cvtColor(in, out, cv::COLOR_RGB2BGR);  // OpenCV writes BGR
  std::vector<uint8_t> png;
  if (!cv::imencode(".png", out, png))
    throw IoError(IoErrorKind::BadHeader, path, "OpenCV could not encode the image as PNG");
  write_file_atomic(path, png.data(), png.size());
}

}  // namespace attnlab::io
