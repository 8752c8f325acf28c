// Frequency spectra (core/analysis/spectra.h): pure 2-D sinusoids on square and non-square
// grids peak at their bins and rings; the high-frequency ratio of analytic mixtures; the
// radial profile and bin radii against naive loops; the streaming mean; and the HiLo branch
// outputs of litv2_mini (fixture tensors and a traced model run) against a direct DFT in
// double written here.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/analysis/spectra.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::frequency_radius;
using analysis::high_frequency_ratio;
using analysis::log_amplitude_spectrum;
using analysis::radial_profile;

constexpr double kTwoPi = 6.283185307179586477;

// amplitude · cos(2π(u·y/H + v·x/W)) as (1, H, W, 1), evaluated in double, stored float32.
at::Tensor sinusoid(int64_t h, int64_t w, int64_t u, int64_t v, double amplitude = 1.0) {
  at::Tensor out = at::empty({1, h, w, 1}, at::kDouble);
  auto a = out.accessor<double, 4>();
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      a[0][y][x][0] =
          amplitude * std::cos(kTwoPi * (static_cast<double>(u * y) / static_cast<double>(h) +
                                         static_cast<double>(v * x) / static_cast<double>(w)));
  return out.to(at::kFloat);
}

// log max(|F|, 1e-20) of the centred DFT by direct summation in double: (B, C, H, W). Shifted
// position p holds frequency p − n/2 (integer n/2), which is what fftshift does.
at::Tensor naive_log_amplitude(const at::Tensor& bhwc) {
  const at::Tensor x = bhwc.to(at::kDouble).contiguous();
  const int64_t nb = x.size(0), h = x.size(1), w = x.size(2), nc = x.size(3);
  auto in = x.accessor<double, 4>();
  at::Tensor out = at::empty({nb, nc, h, w}, at::kDouble);
  auto o = out.accessor<double, 4>();
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t c = 0; c < nc; ++c)
      for (int64_t py = 0; py < h; ++py)
        for (int64_t px = 0; px < w; ++px) {
          const int64_t fy = py - h / 2, fx = px - w / 2;
          double re = 0.0, im = 0.0;
          for (int64_t y = 0; y < h; ++y)
            for (int64_t x2 = 0; x2 < w; ++x2) {
              const double phase = kTwoPi * (static_cast<double>(fy * y) / static_cast<double>(h) +
                                             static_cast<double>(fx * x2) / static_cast<double>(w));
              re += in[b][y][x2][c] * std::cos(phase);
              im -= in[b][y][x2][c] * std::sin(phase);
            }
          o[b][c][py][px] = std::log(std::max(std::hypot(re, im), 1e-20));
        }
  return out;
}

// max |a − ref| / max |ref| in double.
double spectra_relative(const at::Tensor& a, const at::Tensor& ref) {
  return max_abs_diff(a, ref) / ref.to(at::kDouble).abs().max().item<double>();
}

TEST(Spectra, SinusoidPeaksAtItsBinsAndRing) {
  struct Case {
    int64_t h, w, u, v;
  };
  for (const Case k : {Case{16, 16, 3, 5}, Case{12, 20, 2, -3}, Case{12, 20, 4, 6}}) {
    const at::Tensor spec = log_amplitude_spectrum(sinusoid(k.h, k.w, k.u, k.v));
    ASSERT_EQ(spec.sizes(), at::IntArrayRef({1, 1, k.h, k.w}));
    EXPECT_EQ(spec.scalar_type(), at::kFloat);
    const at::Tensor map = spec[0][0].to(at::kDouble);
    // The two bins ±(u, v) around the centre (H/2, W/2) hold H·W/2 each; nothing else is
    // within e^10 of them.
    const double peak = std::log(static_cast<double>(k.h * k.w) / 2.0);
    const int64_t y1 = k.h / 2 + k.u, x1 = k.w / 2 + k.v, y2 = k.h / 2 - k.u, x2 = k.w / 2 - k.v;
    EXPECT_NEAR(map[y1][x1].item<double>(), peak, 1e-4 * peak);
    EXPECT_NEAR(map[y2][x2].item<double>(), peak, 1e-4 * peak);
    at::Tensor rest = map.clone();
    rest[y1][x1] = -1e9;
    rest[y2][x2] = -1e9;
    EXPECT_LT(rest.max().item<double>(), peak - 10.0) << k.h << "×" << k.w;

    // Radial profile of the amplitude: the ring round(r · max(H, W)) of the tone is the peak.
    const double r = std::hypot(static_cast<double>(k.u) / static_cast<double>(k.h),
                                static_cast<double>(k.v) / static_cast<double>(k.w));
    const int64_t scale = std::max(k.h, k.w);
    const at::Tensor profile = radial_profile(map.exp());
    const int64_t rings = std::lround(std::sqrt(0.5) * static_cast<double>(scale)) + 1;
    ASSERT_EQ(profile.sizes(), at::IntArrayRef({rings}));
    EXPECT_EQ(profile.argmax().item<int64_t>(), std::lround(r * static_cast<double>(scale)));
  }
}

TEST(Spectra, FrequencyRadiusAndRadialProfileMatchNaiveLoops) {
  const std::vector<std::pair<int64_t, int64_t>> grids = {{5, 6}, {14, 14}, {3, 20}, {1, 1}};
  for (const auto& [h, w] : grids) {
    const at::Tensor radius = frequency_radius(h, w);
    ASSERT_EQ(radius.sizes(), at::IntArrayRef({h, w}));
    at::manual_seed(static_cast<uint64_t>(h * 100 + w));
    const at::Tensor maps = at::randn({2, 3, h, w}, at::kDouble);
    const double scale = static_cast<double>(std::max(h, w));
    // Rings by hand: frequency (y − ⌊H/2⌋)/H, ring ⌊r·max(H, W) + ½⌋.
    std::map<int64_t, std::pair<at::Tensor, int64_t>> rings;
    int64_t last = 0;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const double fy = static_cast<double>(y - h / 2) / static_cast<double>(h);
        const double fx = static_cast<double>(x - w / 2) / static_cast<double>(w);
        EXPECT_NEAR(radius[y][x].item<double>(), std::sqrt(fy * fy + fx * fx), 1e-15);
        const auto ring =
            static_cast<int64_t>(std::floor(std::sqrt(fy * fy + fx * fx) * scale + 0.5));
        last = std::max(last, ring);
        auto& [sum, count] = rings[ring];
        sum = sum.defined() ? sum + maps.select(-2, y).select(-1, x)
                            : maps.select(-2, y).select(-1, x);
        ++count;
      }
    const at::Tensor profile = radial_profile(maps);
    ASSERT_EQ(profile.sizes(), at::IntArrayRef({2, 3, last + 1})) << h << "×" << w;
    for (int64_t k = 0; k <= last; ++k) {
      const at::Tensor got = profile.select(-1, k);
      if (!rings.count(k)) {
        EXPECT_TRUE(at::isnan(got).all().item<bool>()) << "empty ring " << k;
        continue;
      }
      const auto& [sum, count] = rings.at(k);
      EXPECT_LE(max_abs_diff(got, sum / static_cast<double>(count)), 1e-12) << "ring " << k;
    }
  }
  // 14×14: max radius √½ gives 9.9 rings' worth; the corner bins round to ring 10.
  EXPECT_EQ(radial_profile(at::zeros({14, 14})).size(0), 11);
}

TEST(Spectra, HighFrequencyRatioOfPureAndMixedTones) {
  auto ratio = [](const at::Tensor& x) { return high_frequency_ratio(x)[0][0].item<double>(); };
  // Radius beyond 0.25: (5/16, 0) = 0.3125, (4/12, 0) = 0.33, (3/16, 3/16) = 0.265.
  EXPECT_NEAR(ratio(sinusoid(16, 16, 5, 0)), 1.0, 1e-6);
  EXPECT_NEAR(ratio(sinusoid(12, 20, 4, 0)), 1.0, 1e-6);
  EXPECT_NEAR(ratio(sinusoid(16, 16, 3, 3)), 1.0, 1e-6);
  // Radius within 0.25, including exactly 0.25 (not "beyond"): (2/16, 1/16), (4/16, 0), (2/12,
  // 3/20).
  EXPECT_NEAR(ratio(sinusoid(16, 16, 2, 1)), 0.0, 1e-6);
  EXPECT_NEAR(ratio(sinusoid(16, 16, 4, 0)), 0.0, 1e-6);
  EXPECT_NEAR(ratio(sinusoid(12, 20, 2, 3)), 0.0, 1e-6);
  // Amplitudes 2 (high) and 1 (low): energy share 4 / (4 + 1).
  EXPECT_NEAR(ratio(sinusoid(12, 20, 5, 1, 2.0) + sinusoid(12, 20, 1, 2)), 0.8, 1e-6);
  // Per image and channel; an all-zero channel is 0.
  const at::Tensor two = at::cat({sinusoid(16, 16, 6, 2), at::zeros({1, 16, 16, 1})}, 3);
  const at::Tensor r = high_frequency_ratio(at::cat({two, two.flip(3)}, 0));
  ASSERT_EQ(r.sizes(), at::IntArrayRef({2, 2}));
  EXPECT_EQ(r.scalar_type(), at::kDouble);
  EXPECT_NEAR(r[0][0].item<double>(), 1.0, 1e-6);
  EXPECT_EQ(r[0][1].item<double>(), 0.0);
  EXPECT_EQ(r[1][0].item<double>(), 0.0);
  EXPECT_NEAR(r[1][1].item<double>(), 1.0, 1e-6);
}

TEST(Spectra, LogAmplitudeMatchesDirectDftOnAnOddGrid) {
  at::manual_seed(4);
  const at::Tensor x = at::randn({2, 5, 7, 3});
  const double rel = spectra_relative(log_amplitude_spectrum(x), naive_log_amplitude(x));
  std::cout << "[spectra] 5×7 random vs direct DFT: max|Δ|/max|ref| = " << rel << "\n";
  EXPECT_LE(rel, 1e-5);
  EXPECT_THROW(log_amplitude_spectrum(at::zeros({5, 7, 3})), std::invalid_argument);
  EXPECT_THROW(log_amplitude_spectrum(at::zeros({1, 5, 7, 3}, at::kComplexFloat)),
               std::invalid_argument);
  // All-zero input: every coefficient clamps to 1e-20, a finite log.
  EXPECT_NEAR(log_amplitude_spectrum(at::zeros({1, 2, 2, 1})).max().item<double>(), std::log(1e-20),
              1e-4);
}

// The transform is two products with centred DFT matrices; LibTorch's FFT (pocketfft) of
// the same float64 values is an independent computation of the same numbers. Both are
// exact to ~1e-15 of the largest coefficient, so on a DeiT-sized (14×14, 384 channels)
// random input the amplitudes agree to 1e-12 of the largest one, and the one-transform
// parts equal the two separate functions (same code path, same numbers up to summation).
TEST(Spectra, MatrixTransformMatchesLibTorchFftAtViTSize) {
  at::manual_seed(11);
  const at::Tensor x = at::randn({2, 14, 14, 384});
  const at::Tensor reference =
      at::fft_fftshift(
          at::fft_fft2(x.permute({0, 3, 1, 2}).to(at::kDouble), c10::nullopt, {-2, -1}),
          at::IntArrayRef{-2, -1})
          .abs();
  const analysis::SpectrumParts parts = analysis::spectrum_parts(x);
  const at::Tensor amplitude = parts.log_amplitude.to(at::kDouble).exp();
  const double rel = spectra_relative(amplitude, reference);
  std::cout << "[spectra] 14×14×384 matrix DFT vs fft2: max|Δ|/max|ref| = " << rel << "\n";
  EXPECT_LE(rel, 1e-6);  // the log amplitudes are stored float32 (7 digits)
  EXPECT_LE(max_abs_diff(parts.log_amplitude, log_amplitude_spectrum(x)), 1e-6);
  EXPECT_LE(max_abs_diff(parts.high_frequency_ratio, high_frequency_ratio(x)), 1e-12);
  const at::Tensor power = reference.square();
  const at::Tensor high = (frequency_radius(14, 14) > 0.25).to(at::kDouble);
  const at::Tensor ratio = (power * high).sum({2, 3}) / power.sum({2, 3});
  EXPECT_LE(max_abs_diff(parts.high_frequency_ratio, ratio), 1e-12);
}

// Only the rows up to H/2 are transformed and the others read from their mirrored
// frequencies (the power of real features is symmetric): on every parity of H and W, and on
// grids of one and two rows or columns, the parts equal LibTorch's FFT of the same values
// (the bounds of MatrixTransformMatchesLibTorchFftAtViTSize: 1e-6 for the float32 logs, 1e-12
// for the float64 ratio).
TEST(Spectra, EveryGridShapeMatchesLibTorchFft) {
  at::manual_seed(12);
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {1, 5}, {2, 3}, {3, 2}, {4, 7}, {7, 4}, {5, 5}, {6, 6}, {9, 2}}) {
    const at::Tensor x = at::randn({2, h, w, 3});
    const at::Tensor power = at::fft_fftshift(at::fft_fft2(x.permute({0, 3, 1, 2}).to(at::kDouble),
                                                           c10::nullopt, {-2, -1}),
                                              at::IntArrayRef{-2, -1})
                                 .abs()
                                 .square();
    const analysis::SpectrumParts parts = analysis::spectrum_parts(x);
    ASSERT_EQ(parts.log_amplitude.sizes(), at::IntArrayRef({2, 3, h, w}));
    EXPECT_LE(spectra_relative(parts.log_amplitude.to(at::kDouble).exp(), power.sqrt()), 1e-6)
        << h << "x" << w;
    const at::Tensor high = (frequency_radius(h, w) > 0.25).to(at::kDouble);
    const at::Tensor ratio = (power * high).sum({2, 3}) / power.sum({2, 3});
    EXPECT_LE(max_abs_diff(parts.high_frequency_ratio, ratio), 1e-12) << h << "x" << w;
    EXPECT_LE(max_abs_diff(log_amplitude_spectrum(x), parts.log_amplitude), 1e-6) << h << "x" << w;
  }
}

TEST(Spectra, AccumulatorMeanEqualsBatchMeanAndRefusesShapeChanges) {
  at::manual_seed(8);
  const at::Tensor a = at::randn({2, 6, 8, 3}), b = at::randn({3, 6, 8, 3});
  analysis::SpectrumAccumulator acc;
  EXPECT_THROW(acc.result(), std::invalid_argument);
  acc.add(a);
  acc.add(b);
  EXPECT_EQ(acc.images(), 5);
  const analysis::Spectrum s = acc.result();
  const at::Tensor all = at::cat({a, b}, 0);
  const at::Tensor mean = log_amplitude_spectrum(all).to(at::kDouble).mean(0);
  EXPECT_EQ(s.images, 5);
  EXPECT_LE(max_abs_diff(s.mean_log_amplitude, mean), 1e-12);
  EXPECT_LE(max_abs_diff(s.high_frequency_ratio, high_frequency_ratio(all).mean(0)), 1e-12);
  EXPECT_LE(max_abs_diff(s.radial, radial_profile(mean)), 1e-12);
  EXPECT_EQ(s.radial.sizes(), at::IntArrayRef({3, 7}));  // round(√½·8) + 1

  EXPECT_THROW(acc.add(at::randn({1, 6, 9, 3})), std::invalid_argument);
  EXPECT_THROW(acc.add(at::randn({1, 6, 8, 4})), std::invalid_argument);
  EXPECT_EQ(acc.images(), 5);  // a refused batch leaves the sums alone
}

// HiLo branch outputs of litv2_mini's first stage-3 block (14×14, 32 channels each).
TEST(Spectra, HiloFixtureBranchesMatchDirectDftAndTheTracedModel) {
  const auto e = parity_expected("litv2_mini");
  std::map<std::string, at::Tensor> spectra;
  for (const std::string branch : {"hifi", "lofi"}) {
    const at::Tensor f = e.at(branch + ".layers.2.blocks.0");
    ASSERT_EQ(f.sizes(), at::IntArrayRef({1, 14, 14, 32}));
    spectra[branch] = log_amplitude_spectrum(f);
    const double rel = spectra_relative(spectra[branch], naive_log_amplitude(f));
    std::cout << "[spectra] litv2_mini " << branch << " vs direct DFT: max|Δ|/max|ref| = " << rel
              << "\n";
    EXPECT_LE(rel, 1e-4) << branch;
  }

  const std::string dir = parity_dir();
  auto loaded = models::load_model(models::config_from_file(dir + "/litv2_mini.config.json"),
                                   dir + "/litv2_mini.safetensors", "");
  models::ForwardOptions options;
  options.trace_attention = true;
  at::NoGradGuard no_grad;
  const auto r = loaded.model->run(e.at("input"), options);
  const attention::AttentionTrace* trace = nullptr;
  for (const auto& layer : r.traces)
    if (layer.path == "layers.2.blocks.0.attn") trace = layer.trace.get();
  ASSERT_NE(trace, nullptr) << "no trace for layers.2.blocks.0.attn";
  // The traced branch outputs are the reference's to the parity tolerance, and so are their
  // amplitude spectra. Not their log amplitudes: log|F| of a coefficient near zero moves
  // by O(1) when rounding moves |F| by 1e-7, so comparing logs would only hold where both
  // sides round alike (it failed under other BLAS/ATen kernels: 1e-3 relative).
  for (const std::string branch : {"hifi", "lofi"}) {
    const at::Tensor out = trace->internal("hilo." + branch + "_out");
    const double feat = spectra_relative(out, e.at(branch + ".layers.2.blocks.0"));
    const double amp =
        spectra_relative(log_amplitude_spectrum(out).exp(), spectra.at(branch).exp());
    std::cout << "[spectra] litv2_mini traced hilo." << branch
              << "_out vs fixture: features max|Δ|/max|ref| = " << feat
              << ", amplitude spectra max|Δ|/max|ref| = " << amp << "\n";
    EXPECT_LE(feat, 1e-5) << branch;
    EXPECT_LE(amp, 1e-5) << branch;
  }
}

}  // namespace
}  // namespace attnlab::testing
