// Frequency spectra of feature maps (SPEC §1.5, §3; HiLo Figs. 5, 8, 9): the centred
// log-amplitude spectrum per image and channel, its radial profile, the high-frequency
// energy ratio, and a streaming mean over an image set (spectra.h).
//
// The shift is over the two spatial dims only. The authors' posted script calls fftshift
// with no dims, which also rolls the channel axis by C/2; we document that instead of
// copying it, so our channel c is the model's channel c.
#include "core/analysis/spectra.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {
namespace {

std::string shape_str(at::IntArrayRef s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// Row r of the centred DFT matrix of length n is frequency k = r - n/2 (integer n/2), the
// order fftshift gives: M[r][y] = exp(-2πi·k·y/n), complex float64 (n, n). The phase is
// reduced mod n in integers first, so every entry is accurate to the last bit.
at::Tensor centred_dft_matrix(int64_t n) {
  at::Tensor m = at::empty({n, n}, at::kComplexDouble);
  auto* p = m.data_ptr<c10::complex<double>>();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t k = ((r - n / 2) % n + n) % n;
    for (int64_t y = 0; y < n; ++y) {
      const double angle = -2.0 * M_PI * static_cast<double>((k * y) % n) / static_cast<double>(n);
      p[r * n + y] = c10::complex<double>(std::cos(angle), std::sin(angle));
    }
  }
  return m;
}

// (B, H, W, C) real features -> fftshift(fft2) over H, W of (B, C, H, W), always in
// float64: a float32 FFT's error is ~1e-7 of the largest coefficient, which on smooth maps
// (the Lo-Fi branch) is as large as the smallest coefficients, whose logs would then be
// wrong by 1e-2. The grids are small (a 14×14 ViT grid, 56×56 at most), so the transform
// is two matrix products with the centred DFT matrices, Fh·X·Fwᵀ: one batched complex GEMM
// per side instead of C small FFT plans, already in fftshift order. Its error is
// ~max(H, W)·eps64 of the largest coefficient, far below the float32 error above.
at::Tensor centred_fft(const at::Tensor& bhwc, const char* who) {
  if (!bhwc.defined() || bhwc.dim() != 4)
    throw std::invalid_argument(std::string(who) + ": expected features (B, H, W, C), got " +
                                (bhwc.defined() ? shape_str(bhwc.sizes()) : "none"));
  if (bhwc.is_complex() || !(at::isFloatingType(bhwc.scalar_type()) ||
                             at::isIntegralType(bhwc.scalar_type(), /*includeBool=*/false)))
    throw std::invalid_argument(std::string(who) + ": features must be real numbers, got " +
                                c10::toString(bhwc.scalar_type()));
  const int64_t h = bhwc.size(1), w = bhwc.size(2);
  if (h == 0 || w == 0)
    throw std::invalid_argument(std::string(who) + ": the grid " + shape_str(bhwc.sizes()) +
                                " has no cells");
  const c10::Device device = bhwc.device();
  const at::Tensor fh = centred_dft_matrix(h).to(device);
  const at::Tensor fw_t = centred_dft_matrix(w).transpose(0, 1).to(device);
  // Each side is one GEMM over all images and channels (a broadcast Fh·X would be B·C
  // tiny ones): contract W on (B, C, H, W) rows, then H on the transposed result's rows.
  const int64_t b = bhwc.size(0), c = bhwc.size(3);
  const at::Tensor x = bhwc.permute({0, 3, 1, 2}).to(at::kComplexDouble).reshape({b * c * h, w});
  const at::Tensor xw = at::mm(x, fw_t).view({b, c, h, w}).transpose(2, 3).reshape({b * c * w, h});
  return at::mm(xw, fh.transpose(0, 1)).view({b, c, w, h}).transpose(2, 3);
}

// |F|² beyond half the Nyquist radius over Σ|F|², per image and channel: (B, C) float64.
at::Tensor ratio_from_power(const at::Tensor& power) {
  const at::Tensor high =
      (frequency_radius(power.size(2), power.size(3)) > 0.25).to(power.device(), at::kDouble);
  const at::Tensor total = power.sum({2, 3});
  const at::Tensor ratio = (power * high).sum({2, 3}) / total;
  return at::where(total > 0, ratio, at::zeros_like(ratio)).cpu();
}

at::Tensor log_of_amplitude(const at::Tensor& amplitude) {
  return amplitude.clamp_min(1e-20).log().to(at::kFloat);
}

}  // namespace

at::Tensor log_amplitude_spectrum(const at::Tensor& bhwc) {
  return log_of_amplitude(centred_fft(bhwc, "log_amplitude_spectrum").abs());
}

at::Tensor frequency_radius(int64_t h, int64_t w) {
  if (h < 1 || w < 1)
    throw std::invalid_argument("frequency_radius: the grid must be at least 1×1, got " +
                                std::to_string(h) + "×" + std::to_string(w));
  // fftshift puts frequency index k at position k + n/2 (integer n/2): fy = (y − H/2)/H.
  const at::Tensor fy =
      (at::arange(h, at::kDouble) - static_cast<double>(h / 2)) / static_cast<double>(h);
  const at::Tensor fx =
      (at::arange(w, at::kDouble) - static_cast<double>(w / 2)) / static_cast<double>(w);
  return (fy.square().unsqueeze(1) + fx.square().unsqueeze(0)).sqrt();
}

at::Tensor radial_profile(const at::Tensor& maps) {
  if (!maps.defined() || maps.dim() < 2)
    throw std::invalid_argument("radial_profile: expected maps (..., H, W), got " +
                                (maps.defined() ? shape_str(maps.sizes()) : "none"));
  const int64_t h = maps.size(-2), w = maps.size(-1);
  const double scale = static_cast<double>(std::max(h, w));
  // Ring index round(radius · max(H, W)), rounding halves up (floor(x + 0.5)).
  const at::Tensor ring =
      at::floor(frequency_radius(h, w) * scale + 0.5).to(at::kLong).reshape({-1});
  const int64_t rings = ring.max().item<int64_t>() + 1;

  const at::Tensor flat = maps.to(at::kCPU, at::kDouble).reshape({-1, h * w});
  at::Tensor sums = at::zeros({flat.size(0), rings}, at::kDouble);
  sums.index_add_(1, ring, flat);
  const at::Tensor counts = at::bincount(ring, {}, rings).to(at::kDouble);
  at::Tensor profile = sums / counts;  // an empty ring is 0/0 = NaN, as documented
  profile = profile.masked_fill(counts == 0, std::numeric_limits<double>::quiet_NaN());

  std::vector<int64_t> shape(maps.sizes().begin(), maps.sizes().end() - 2);
  shape.push_back(rings);
  const auto type = at::isFloatingType(maps.scalar_type()) ? maps.scalar_type() : at::kDouble;
  return profile.reshape(shape).to(maps.device(), type);
}

at::Tensor high_frequency_ratio(const at::Tensor& bhwc) {
  return ratio_from_power(centred_fft(bhwc, "high_frequency_ratio").abs().square());
}

SpectrumParts spectrum_parts(const at::Tensor& bhwc) {
  const at::Tensor amplitude = centred_fft(bhwc, "spectrum_parts").abs();  // (B, C, H, W)
  return {log_of_amplitude(amplitude), ratio_from_power(amplitude.square())};
}

at::Tensor SpectrumAccumulator::add(const at::Tensor& bhwc) {
  SpectrumParts parts = spectrum_parts(bhwc);
  add(parts);
  return parts.high_frequency_ratio;
}

void SpectrumAccumulator::add(const SpectrumParts& parts) {
  const at::Tensor logs = parts.log_amplitude.to(at::kCPU, at::kDouble);  // (B, C, H, W)
  const at::IntArrayRef chw = logs.sizes().slice(1);
  if (sum_log_.defined() && !sum_log_.sum().sizes().equals(chw))
    throw std::invalid_argument(
        "SpectrumAccumulator: features give spectra (C, H, W) = " + shape_str(chw) +
        ", but the accumulated ones are " + shape_str(sum_log_.sum().sizes()));
  const at::Tensor hf = parts.high_frequency_ratio.to(at::kCPU, at::kDouble);
  for (int64_t b = 0; b < logs.size(0); ++b) {
    sum_log_.add(logs[b]);
    sum_hf_.add(hf[b]);
  }
  images_ += logs.size(0);
}

void SpectrumAccumulator::absorb(const CompensatedSum& log_sum, const CompensatedSum& hf_sum,
                                 int64_t images) {
  if (sum_log_.defined() && (!sum_log_.sum().sizes().equals(log_sum.sum().sizes()) ||
                             !sum_hf_.sum().sizes().equals(hf_sum.sum().sizes())))
    throw std::invalid_argument(
        "SpectrumAccumulator: a shard's spectra (C, H, W) = " + shape_str(log_sum.sum().sizes()) +
        ", but the accumulated ones are " + shape_str(sum_log_.sum().sizes()));
  sum_log_.absorb(log_sum);
  sum_hf_.absorb(hf_sum);
  images_ += images;
}

Spectrum SpectrumAccumulator::result() const {
  if (images_ == 0)
    throw std::invalid_argument("SpectrumAccumulator::result: no images were added");
  Spectrum s;
  s.images = images_;
  s.mean_log_amplitude = sum_log_.value() / static_cast<double>(images_);  // (C, H, W) float64
  s.radial = radial_profile(s.mean_log_amplitude);                  // (C, R) float64
  s.high_frequency_ratio = sum_hf_.value() / static_cast<double>(images_);  // (C,) float64
  return s;
}

}  // namespace attnlab::analysis
