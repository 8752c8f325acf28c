// deform_conv2d (DCNv1, torchvision semantics with mask None): zero offsets are a plain
// convolution; integer offsets per tap are shifted convolutions (which pins the channel
// order 2t = dy, 2t+1 = dx and the tap order t = i·kw + j); a hand-computed bilinear sample;
// out-of-range corners contribute 0; autograd agrees with finite differences; the
// DeformConv2dPack module's names and initialisation; refusals; CUDA = CPU where CUDA exists.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/deform_conv.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

using models::deform_conv2d;
using models::DeformConvGeometry;

at::Tensor conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                const DeformConvGeometry& g) {
  return at::conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
}

// s[y][x] = x[y + dy][x + dx], zero where that is outside.
at::Tensor shifted(const at::Tensor& x, int64_t dy, int64_t dx) {
  const int64_t pad = 4, h = x.size(2), w = x.size(3);
  at::Tensor p = at::constant_pad_nd(x, {pad, pad, pad, pad});
  return p.slice(2, pad + dy, pad + dy + h).slice(3, pad + dx, pad + dx + w);
}

struct Case {
  int64_t in, out, kh, kw;
  DeformConvGeometry g;
  int64_t offset_groups;
};

std::vector<Case> cases() {
  std::vector<Case> c(3);
  c[0] = {6, 4, 2, 2, {}, 1};  // LITv2's DTM
  c[0].g.stride = {2, 2};
  c[1] = {4, 6, 3, 3, {}, 2};  // padding, conv groups, two offset groups
  c[1].g.padding = {1, 1};
  c[1].g.groups = 2;
  c[2] = {3, 5, 3, 2, {}, 3};  // rectangular kernel, mixed stride, dilation
  c[2].g.stride = {2, 1};
  c[2].g.padding = {1, 0};
  c[2].g.dilation = {2, 1};
  return c;
}

TEST(DeformConv, ZeroOffsetsEqualConv2d) {
  at::manual_seed(1);
  for (const auto& c : cases()) {
    at::Tensor x = at::randn({2, c.in, 9, 8});
    at::Tensor w = at::randn({c.out, c.in / c.g.groups, c.kh, c.kw});
    at::Tensor b = at::randn({c.out});
    at::Tensor ref = conv(x, w, b, c.g);
    at::Tensor off = at::zeros({2, 2 * c.offset_groups * c.kh * c.kw, ref.size(2), ref.size(3)});
    const double d = max_abs_diff(deform_conv2d(x, off, w, b, c.g), ref);
    std::cout << "[deform_conv] zero offsets vs conv2d: max |delta| = " << d << "\n";
    EXPECT_LE(d, 1e-5);
  }
}

TEST(DeformConv, IntegerOffsetsPerTapEqualShiftedConvolutions) {
  at::manual_seed(2);
  for (const auto& c : cases()) {
    at::Tensor x = at::randn({2, c.in, 9, 8});
    at::Tensor w = at::randn({c.out, c.in / c.g.groups, c.kh, c.kw});
    at::Tensor b = at::randn({c.out});
    at::Tensor ref_shape = conv(x, w, b, c.g);
    const int64_t taps = c.kh * c.kw, cg = c.in / c.offset_groups;
    at::Tensor off =
        at::zeros({2, 2 * c.offset_groups * taps, ref_shape.size(2), ref_shape.size(3)});
    at::Tensor ref = b.view({1, -1, 1, 1}).expand_as(ref_shape).clone();
    at::Tensor padded =
        at::constant_pad_nd(x, {c.g.padding[1], c.g.padding[1], c.g.padding[0], c.g.padding[0]});
    for (int64_t t = 0; t < taps; ++t) {
      at::Tensor tap_w = at::zeros_like(w);
      tap_w.select(2, t / c.kw)
          .select(2, t % c.kw)
          .copy_(w.select(2, t / c.kw).select(2, t % c.kw));
      // Each offset group shifts its own channels; the shifted input is assembled per group.
      std::vector<at::Tensor> parts;
      for (int64_t grp = 0; grp < c.offset_groups; ++grp) {
        const int64_t dy = (t + grp) % 3 - 1, dx = 2 - (t * 2 + grp) % 4;
        off.select(1, grp * 2 * taps + 2 * t).fill_(static_cast<double>(dy));
        off.select(1, grp * 2 * taps + 2 * t + 1).fill_(static_cast<double>(dx));
        parts.push_back(shifted(padded.slice(1, grp * cg, (grp + 1) * cg), dy, dx));
      }
      // The padding is applied before shifting: a sample may move from the padding into
      // the image, and then it reads the image.
      DeformConvGeometry unpadded = c.g;
      unpadded.padding = {0, 0};
      ref = ref + conv(at::cat(parts, 1), tap_w, at::Tensor(), unpadded);
    }
    const double d = max_abs_diff(deform_conv2d(x, off, w, b, c.g), ref);
    std::cout << "[deform_conv] integer offsets vs shifted conv2d: max |delta| = " << d << "\n";
    EXPECT_LE(d, 1e-4);
  }
}

// One channel, 1×1 kernel of weight 1: the output is the sampled value itself.
at::Tensor sample(const at::Tensor& img, int64_t y, int64_t x, double dy, double dx) {
  at::Tensor off = at::zeros({1, 2, img.size(2), img.size(3)});
  off[0][0][y][x] = dy;
  off[0][1][y][x] = dx;
  return deform_conv2d(img, off, at::ones({1, 1, 1, 1}), at::Tensor())[0][0][y][x];
}

TEST(DeformConv, BilinearSampleComputedByHand) {
  at::Tensor img = at::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 10.f}).view({1, 1, 3, 3});
  // (1.5, 1.25): 5·0.5·0.75 + 6·0.5·0.25 + 8·0.5·0.75 + 10·0.5·0.25 = 6.875
  EXPECT_NEAR(sample(img, 1, 1, 0.5, 0.25).item<double>(), 6.875, 1e-6);
  // (0.25, 1.5) from output (1, 0): 2·.75·.5 + 3·.75·.5 + 5·.25·.5 + 6·.25·.5 = 3.25
  EXPECT_NEAR(sample(img, 1, 0, -0.75, 1.5).item<double>(), 3.25, 1e-6);
}

TEST(DeformConv, OutOfRangeCornersContributeZero) {
  at::Tensor img = at::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 10.f}).view({1, 1, 3, 3});
  // (−0.5, 0): only corner (0, 0) is inside, with weight 0.5.
  EXPECT_NEAR(sample(img, 0, 0, -0.5, 0.0).item<double>(), 0.5, 1e-6);
  // (2.5, 2.75): only (2, 2) = 10 inside, weight 0.5·0.25.
  EXPECT_NEAR(sample(img, 2, 2, 0.5, 0.75).item<double>(), 1.25, 1e-6);
  // (1, −0.25): (1, 0) = 4 with weight 0.75; the column −1 corners are 0.
  EXPECT_NEAR(sample(img, 1, 0, 0.0, -0.25).item<double>(), 3.0, 1e-6);
  // Entirely outside, and exactly on the −1 / H borders: 0.
  EXPECT_EQ(sample(img, 0, 1, -1.5, 0.0).item<double>(), 0.0);
  EXPECT_EQ(sample(img, 0, 1, -1.0, 0.0).item<double>(), 0.0);
  EXPECT_EQ(sample(img, 2, 1, 1.0, 0.3).item<double>(), 0.0);
  EXPECT_EQ(sample(img, 1, 2, 0.0, 7.0).item<double>(), 0.0);
}

TEST(DeformConv, GradientsMatchFiniteDifferences) {
  at::manual_seed(4);
  const auto dbl = at::TensorOptions().dtype(at::kDouble);
  at::Tensor x = at::randn({1, 2, 5, 5}, dbl).requires_grad_();
  at::Tensor w = at::randn({3, 2, 2, 2}, dbl);
  at::Tensor off = (at::rand({1, 8, 2, 2}, dbl) * 3 - 1.5).requires_grad_();
  DeformConvGeometry g;
  g.stride = {2, 2};
  at::Tensor probe = at::randn({1, 3, 2, 2}, dbl);
  (deform_conv2d(x, off, w, at::Tensor(), g) * probe).sum().backward();
  auto f = [&](const at::Tensor& xi, const at::Tensor& oi) {
    return (deform_conv2d(xi, oi, w, at::Tensor(), g) * probe).sum().item<double>();
  };
  const double eps = 1e-6;
  double worst = 0;
  at::Tensor xd = x.detach(), od = off.detach();
  for (int64_t i = 0; i < od.numel(); ++i) {
    at::Tensor plus = od.clone(), minus = od.clone();
    plus.view(-1)[i] += eps;
    minus.view(-1)[i] -= eps;
    const double num = (f(xd, plus) - f(xd, minus)) / (2 * eps);
    worst = std::max(worst, std::abs(num - off.grad().view(-1)[i].item<double>()));
  }
  for (int64_t i = 0; i < xd.numel(); ++i) {
    at::Tensor plus = xd.clone(), minus = xd.clone();
    plus.view(-1)[i] += eps;
    minus.view(-1)[i] -= eps;
    const double num = (f(plus, od) - f(minus, od)) / (2 * eps);
    worst = std::max(worst, std::abs(num - x.grad().view(-1)[i].item<double>()));
  }
  std::cout << "[deform_conv] autograd vs finite differences: max |delta| = " << worst << "\n";
  EXPECT_LE(worst, 1e-6);
}

TEST(DeformConv, PackHasTheReferenceNamesAndStartsAsAPlainConv) {
  DeformConvGeometry g;
  g.stride = {2, 2};
  models::DeformConv2dPack pack(4, 6, {2, 2}, g);
  std::vector<std::string> names;
  for (const auto& p : pack.named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names,
            (std::vector<std::string>{"weight", "bias", "conv_offset.weight", "conv_offset.bias"}));
  EXPECT_EQ(pack.conv_offset->weight.sizes(), (std::vector<int64_t>{8, 4, 2, 2}));
  at::Tensor x = at::randn({1, 4, 6, 6});
  at::NoGradGuard no_grad;
  EXPECT_LE(max_abs_diff(pack(x), at::conv2d(x, pack.weight, pack.bias, 2)), 1e-6);
  EXPECT_THROW(models::DeformConv2dPack(4, 6, {2, 2},
                                        [] {
                                          DeformConvGeometry d;
                                          d.dilation = {2, 2};
                                          return d;
                                        }()),
               std::invalid_argument);
}

TEST(DeformConv, RefusesMismatchedShapes) {
  at::Tensor x = at::randn({1, 4, 6, 6}), w = at::randn({2, 4, 2, 2});
  DeformConvGeometry g;
  g.stride = {2, 2};
  EXPECT_THROW(deform_conv2d(x, at::zeros({1, 7, 3, 3}), w, at::Tensor(), g),
               std::invalid_argument);  // not 2·kh·kw·G channels
  EXPECT_THROW(deform_conv2d(x, at::zeros({1, 8, 4, 3}), w, at::Tensor(), g),
               std::invalid_argument);  // wrong output grid
  EXPECT_THROW(deform_conv2d(x, at::zeros({1, 24, 3, 3}), w, at::Tensor(), g),
               std::invalid_argument);  // 3 offset groups do not divide 4 channels
  EXPECT_THROW(deform_conv2d(x, at::zeros({1, 8, 3, 3}), at::randn({2, 3, 2, 2}), at::Tensor(), g),
               std::invalid_argument);
  EXPECT_THROW(deform_conv2d(x, at::zeros({1, 8, 3, 3}), w, at::zeros({3}), g),
               std::invalid_argument);
}

TEST(DeformConv, CudaComputesWhatTheCpuComputes) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA in this build/machine";
  at::manual_seed(5);
  at::Tensor x = at::randn({2, 6, 10, 9}), w = at::randn({4, 6, 2, 2}), b = at::randn({4});
  at::Tensor off = at::randn({2, 8, 5, 4}) * 2;
  DeformConvGeometry g;
  g.stride = {2, 2};
  at::Tensor cpu = deform_conv2d(x, off, w, b, g);
  at::Tensor gpu = deform_conv2d(x.cuda(), off.cuda(), w.cuda(), b.cuda(), g);
  EXPECT_TRUE(gpu.is_cuda());
  const double d = max_abs_diff(gpu.cpu(), cpu);
  std::cout << "[deform_conv] CUDA vs CPU: max |delta| = " << d << "\n";
  EXPECT_LE(d, 1e-4);
}

}  // namespace
}  // namespace attnlab::testing
