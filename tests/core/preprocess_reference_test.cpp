// The presets' evaluation preprocessing against the reference pipelines themselves: PIL +
// torchvision (DeiT: Resize(248, bicubic), CenterCrop(224); LITv2 / RAVLT: Resize(256,
// bicubic), CenterCrop(224); both ToTensor + ImageNet Normalize) ran on a committed photo
// (scripts/make_preprocess_reference.py, Pillow 9.4, torchvision 0.14; tests/data/
// preprocess_reference.{npz,json}), and image::preprocess runs on the same photo here.
//
// Tolerance. PIL resamples in 8-bit fixed point and rounds to uint8 between its passes;
// resample.cpp reproduces that arithmetic, so both sides should reach the same uint8 pixels
// and differ only in the float32 rounding of (p / 255 − mean) / std, a few units in the
// last place. The comparison allows the project's reordering bound (64 ulps of the largest
// magnitude, 3.1e-5 here), which is 550 times smaller than one 8-bit step after
// normalisation (1 / (255 · 0.229) = 0.0171): a single pixel one level off fails the test.
// Measured (AMD EPYC, x86-64): max |difference| 0 for both pipelines, the same pixels
// and the same float operations. OpenCV's INTER_CUBIC in place of the PIL resampling is
// 0.31 (18 levels) off; the second test checks the comparison sees such a difference.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>
#include <string>

#include "core/image/preprocess.h"
#include "core/io/file_bytes.h"
#include "core/io/image_io.h"
#include "core/io/npy.h"
#include "core/io/torch_bridge.h"
#include "core/io/zip_reader.h"
#include "models/presets.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

const std::string kPreprocessReferenceSource = ATTNLAB_SOURCE_DIR;

struct Reference {
  nlohmann::json meta;
  std::map<std::string, at::Tensor> arrays;  // case name -> (1, 3, 224, 224) float32
};

Reference read_reference() {
  Reference r;
  std::ifstream meta(kPreprocessReferenceSource + "/tests/data/preprocess_reference.json");
  r.meta = nlohmann::json::parse(meta);
  const std::string npz = kPreprocessReferenceSource + "/tests/data/preprocess_reference.npz";
  const std::vector<uint8_t> bytes = io::read_file_bytes(npz);
  io::ZipReader zip(io::ByteView(bytes.data(), bytes.size()), npz);
  for (const auto& c : r.meta.at("cases")) {
    const std::string name = c.at("name");
    const io::ZipEntry* entry = zip.find(name + ".npy");
    if (!entry) throw std::runtime_error(npz + " has no " + name + ".npy");
    r.arrays[name] = io::to_torch(io::parse_npy(zip.read(*entry), npz + ":" + name)).clone();
  }
  return r;
}

// The smallest 8-bit step after normalisation: that of the channel with the largest std.
double one_level(const image::Preprocessing& p) {
  return 1.0 / (255.0 * static_cast<double>(*std::max_element(p.std.begin(), p.std.end())));
}

TEST(PreprocessReference, PresetsMatchPilAndTorchvisionOnAPhoto) {
  const Reference ref = read_reference();
  ASSERT_EQ(ref.meta.at("cases").size(), 2u);
  for (const auto& c : ref.meta.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const io::RgbImage photo =
        io::load_rgb_image(kPreprocessReferenceSource + "/" + c.at("image").get<std::string>());
    ASSERT_EQ(photo.width, ref.meta.at("photo_size")[0].get<int>());
    ASSERT_EQ(photo.height, ref.meta.at("photo_size")[1].get<int>());
    const at::Tensor& want = ref.arrays.at(name);
    ASSERT_EQ(want.scalar_type(), at::kFloat);
    for (const auto& preset_name : c.at("presets")) {
      SCOPED_TRACE(preset_name.get<std::string>());
      // The preset carries the pipeline the reference ran.
      const image::Preprocessing& p = models::find_preset(preset_name).preprocessing;
      EXPECT_EQ(p.filter, image::Filter::Bicubic);
      EXPECT_EQ(p.resize_short, c.at("resize").get<int>());
      EXPECT_EQ(p.crop, c.at("crop").get<int>());
      for (int ch = 0; ch < 3; ++ch) {
        EXPECT_EQ(p.mean[ch], c.at("mean")[ch].get<float>());
        EXPECT_EQ(p.std[ch], c.at("std")[ch].get<float>());
      }
      const at::Tensor got = image::preprocess(photo, p);
      const double diff = max_abs_diff(got, want);
      EXPECT_TRUE(agree_up_to_reordering(got, want))
          << "max |difference| " << diff << ", one 8-bit level is " << one_level(p);
      // What differs, if anything: the number of elements more than half a level off.
      EXPECT_EQ((got - want).abs().gt(0.5 * one_level(p)).sum().item<int64_t>(), 0);
      std::ostringstream text;
      text << diff;
      RecordProperty(name + "_max_abs_diff", text.str());
    }
  }
}

TEST(PreprocessReference, AResizeWithoutAntialiasingIsFarFromTheReference) {
  // The comparison above can tell resamplers apart: OpenCV's bicubic (a = −0.75, no
  // widening of the kernel when it downscales) on the same photo, then the same crop and
  // normalisation, is off by many levels.
  const Reference ref = read_reference();
  const auto& c = ref.meta.at("cases")[0];
  const io::RgbImage photo =
      io::load_rgb_image(kPreprocessReferenceSource + "/" + c.at("image").get<std::string>());
  const image::Preprocessing p = image::imagenet_eval(c.at("resize"), c.at("crop"));
  const auto [w, h] = image::resized_size(photo.width, photo.height, p.resize_short);
  cv::Mat src(photo.height, photo.width, CV_8UC3, const_cast<uint8_t*>(photo.rgb.data()));
  cv::Mat dst;
  cv::resize(src, dst, cv::Size(w, h), 0, 0, cv::INTER_CUBIC);
  io::RgbImage resized;
  resized.width = w;
  resized.height = h;
  resized.rgb.assign(dst.data, dst.data + static_cast<size_t>(w) * h * 3);
  image::Preprocessing crop_only = p;
  crop_only.resize_short = 0;
  const at::Tensor opencv = image::preprocess(resized, crop_only);
  const double diff = max_abs_diff(opencv, ref.arrays.at(c.at("name")));
  EXPECT_GT(diff, 5 * one_level(p));
  std::ostringstream text;
  text << diff;
  RecordProperty("opencv_max_abs_diff", text.str());
}

}  // namespace
}  // namespace attnlab::testing
