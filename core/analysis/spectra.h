// Frequency spectra (SPEC §1.5, §3; HiLo Figs. 5, 8, 9): features (B, H, W, C) — a HiLo
// branch output or any layer's output tokens on its grid — go to (B, C, H, W); F = fft2
// over H, W; log|fftshift(F)| with the shift over the two spatial dims only (not the
// channel axis, unlike the authors' posted script); averaged over images. Plus the radial
// (azimuthally averaged) profile and the high-frequency energy ratio: Σ|F|² beyond half
// the Nyquist radius / Σ|F|², frequencies in cycles per token (Nyquist = 0.5).
#pragma once

#include <ATen/core/Tensor.h>

#include "core/analysis/compensated_sum.h"

#include <cstdint>

namespace attnlab::analysis {

// log|fftshift(fft2(x))| per image and channel: (B, H, W, C) -> (B, C, H, W), float32.
// |F| is clamped below at 1e-20 so an exactly zero coefficient gives a finite log.
at::Tensor log_amplitude_spectrum(const at::Tensor& bhwc);

// Radius of every shifted frequency bin: sqrt(fy² + fx²), fy = (y − H/2)/H (integer H/2,
// as fftshift centres), fx likewise; (H, W) float64.
at::Tensor frequency_radius(int64_t h, int64_t w);

// Azimuthal average of maps (..., H, W) over rings of width 1/max(H, W) in radius:
// returns (..., R) with R = round(max radius · max(H, W)) + 1; ring k holds bins with
// round(radius·max(H, W)) == k (halves round up). Empty rings are NaN.
at::Tensor radial_profile(const at::Tensor& maps);

// Σ|F|² over radius > 0.25 divided by Σ|F|², per image and channel: (B, C) float64.
// 0 for an all-zero channel.
at::Tensor high_frequency_ratio(const at::Tensor& bhwc);

// Both of the above from one transform: log_amplitude (B, C, H, W) float32 and
// high_frequency_ratio (B, C) float64, equal to the two functions' results.
struct SpectrumParts {
  at::Tensor log_amplitude;
  at::Tensor high_frequency_ratio;
};
SpectrumParts spectrum_parts(const at::Tensor& bhwc);

struct Spectrum {
  at::Tensor mean_log_amplitude;    // (C, H, W) mean over images
  at::Tensor radial;                // (C, R) radial profile of the mean
  at::Tensor high_frequency_ratio;  // (C,) mean over images
  int64_t images = 0;
};

// Streams images in: memory is one (C, H, W) sum whatever the number of images.
class SpectrumAccumulator {
 public:
  // Adds the images' spectra and returns their high-frequency ratios (B, C) float64, which
  // callers tabulate per image without a second transform. Throws std::invalid_argument
  // on a shape change (and then adds nothing).
  at::Tensor add(const at::Tensor& bhwc);
  // The same with the parts already computed (spectrum_parts of the features).
  void add(const SpectrumParts& parts);
  Spectrum result() const;
  int64_t images() const { return images_; }

  // A shard's sums (attnlab merge): what it saves, and adding them to this one's.
  const CompensatedSum& log_sum() const { return sum_log_; }
  const CompensatedSum& hf_sum() const { return sum_hf_; }
  // Throws std::invalid_argument on a shape change (and then adds nothing).
  void absorb(const CompensatedSum& log_sum, const CompensatedSum& hf_sum, int64_t images);

 private:
  // Summed image by image, compensated: the means do not depend on how the images were
  // batched or sharded.
  CompensatedSum sum_log_;  // (C, H, W) float64
  CompensatedSum sum_hf_;   // (C,) float64
  int64_t images_ = 0;
};

}  // namespace attnlab::analysis
