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

// (B, H, W, C) real features -> fft2 over H, W of (B, C, H, W), centred, always in float64:
// a float32 FFT's error is ~1e-7 of the largest coefficient, which on smooth maps (the Lo-Fi
// branch) is as large as the smallest coefficients, whose logs would then be wrong by 1e-2.
at::Tensor centred_fft(const at::Tensor& bhwc, const char* who) {
  if (!bhwc.defined() || bhwc.dim() != 4)
    throw std::invalid_argument(std::string(who) + ": expected features (B, H, W, C), got " +
                                (bhwc.defined() ? shape_str(bhwc.sizes()) : "none"));
  if (bhwc.is_complex() || !(at::isFloatingType(bhwc.scalar_type()) ||
                             at::isIntegralType(bhwc.scalar_type(), /*includeBool=*/false)))
    throw std::invalid_argument(std::string(who) + ": features must be real numbers, got " +
                                c10::toString(bhwc.scalar_type()));
  if (bhwc.size(1) == 0 || bhwc.size(2) == 0)
    throw std::invalid_argument(std::string(who) + ": the grid " + shape_str(bhwc.sizes()) +
                                " has no cells");
  const at::Tensor x = bhwc.permute({0, 3, 1, 2}).to(at::kDouble);
  return at::fft_fftshift(at::fft_fft2(x, c10::nullopt, {-2, -1}), at::IntArrayRef{-2, -1});
}

}  // namespace

at::Tensor log_amplitude_spectrum(const at::Tensor& bhwc) {
  const at::Tensor f = centred_fft(bhwc, "log_amplitude_spectrum");
  return f.abs().clamp_min(1e-20).log().to(at::kFloat);
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
  const at::Tensor f = centred_fft(bhwc, "high_frequency_ratio");
  const at::Tensor power = f.abs().square();  // (B, C, H, W)
  const at::Tensor high =
      (frequency_radius(f.size(2), f.size(3)) > 0.25).to(power.device(), at::kDouble);
  const at::Tensor total = power.sum({2, 3});
  const at::Tensor ratio = (power * high).sum({2, 3}) / total;
  return at::where(total > 0, ratio, at::zeros_like(ratio)).cpu();
}

void SpectrumAccumulator::add(const at::Tensor& bhwc) {
  const at::Tensor logs = log_amplitude_spectrum(bhwc).to(at::kCPU, at::kDouble);  // (B, C, H, W)
  const at::IntArrayRef chw = logs.sizes().slice(1);
  if (sum_log_.defined() && !sum_log_.sizes().equals(chw))
    throw std::invalid_argument("SpectrumAccumulator: features of shape " +
                                shape_str(bhwc.sizes()) +
                                " give spectra (C, H, W) = " + shape_str(chw) +
                                ", but the accumulated ones are " + shape_str(sum_log_.sizes()));
  const at::Tensor hf = high_frequency_ratio(bhwc);
  if (!sum_log_.defined()) {
    sum_log_ = at::zeros(chw, at::kDouble);
    sum_hf_ = at::zeros({chw[0]}, at::kDouble);
  }
  sum_log_ += logs.sum(0);
  sum_hf_ += hf.sum(0);
  images_ += bhwc.size(0);
}

Spectrum SpectrumAccumulator::result() const {
  if (images_ == 0)
    throw std::invalid_argument("SpectrumAccumulator::result: no images were added");
  Spectrum s;
  s.images = images_;
  s.mean_log_amplitude = sum_log_ / static_cast<double>(images_);   // (C, H, W) float64
  s.radial = radial_profile(s.mean_log_amplitude);                  // (C, R) float64
  s.high_frequency_ratio = sum_hf_ / static_cast<double>(images_);  // (C,) float64
  return s;
}

}  // namespace attnlab::analysis
