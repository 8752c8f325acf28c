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
#include <utility>
#include <vector>

namespace attnlab::analysis {
namespace {

std::string shape_str(at::IntArrayRef s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// The centred DFT matrix of length n, M[r][y] = exp(-2πi·k·y/n) with row r at frequency
// k = r - n/2 (integer n/2), the order fftshift gives, as its real parts: cos (n, n) and
// sin (n, n) with M = cos - i·sin, float64. The phase is reduced mod n in integers first,
// so every entry is accurate to the last bit.
std::pair<at::Tensor, at::Tensor> centred_dft_parts(int64_t n) {
  at::Tensor c = at::empty({n, n}, at::kDouble), sn = at::empty({n, n}, at::kDouble);
  double* pc = c.data_ptr<double>();
  double* ps = sn.data_ptr<double>();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t k = ((r - n / 2) % n + n) % n;
    for (int64_t y = 0; y < n; ++y) {
      const double angle = 2.0 * M_PI * static_cast<double>((k * y) % n) / static_cast<double>(n);
      pc[r * n + y] = std::cos(angle);
      ps[r * n + y] = std::sin(angle);
    }
  }
  return {c, sn};
}

// Row (or column) of the centred order holding the frequency opposite to row r's: row r is
// frequency k = r - n/2 (integer n/2, mod n), so -k sits at row (2·(n/2) - r) mod n.
int64_t mirrored(int64_t r, int64_t n) {
  return ((2 * (n / 2) - r) % n + n) % n;
}

// The spectrum of real features is conjugate-symmetric, F(-ky, -kx) = conj F(ky, kx), so
// its power is symmetric: only the rows r <= H/2 are transformed (8 of 14 on a ViT grid,
// the transform's cost with them), and each other row r is row mirrored(r) read with its
// columns mirrored. `rest_rows` and `mirror_columns` index that read.
struct HalfPower {
  at::Tensor rows;  // (B, H/2 + 1, W, C) float64: rows 0 .. H/2 of the centred power
  at::Tensor rest_rows, mirror_columns;  // long, on rows' device

  // The whole grid of a tensor computed from `rows` (its H axis at `dim`, W at dim + 1):
  // rows 0 .. H/2 as given, then each row H/2 + 1 .. H - 1 read at its mirrored row and
  // columns.
  at::Tensor whole(const at::Tensor& half, int64_t dim) const {
    if (rest_rows.numel() == 0) return half;
    return at::cat({half, half.index_select(dim, rest_rows).index_select(dim + 1, mirror_columns)},
                   dim);
  }
};

// (B, H, W, C) real features -> |fftshift(fft2)|² over H, W, its rows 0 .. H/2 as
// (B, H/2 + 1, W, C) float64 (channels last, as the features come). Always in float64: a
// float32 FFT's error is ~1e-7 of the largest coefficient, which on smooth maps (the Lo-Fi
// branch) is as large as the smallest coefficients, whose logs would then be wrong by 1e-2.
// The grids are small (a 14×14 ViT grid, 56×56 at most), so the transform is matrix products
// with the centred DFT matrices, in real arithmetic (the features are real): along H,
// [Ch; -Sh]·X is one GEMM over every column (w, c), giving the real part A and imaginary part
// B of each row; along W, per row, [[Cw, Sw], [-Sw, Cw]]·[A; B] gives the real and imaginary
// parts of the spectrum, since (Cw - i·Sw)(A + i·B) = Cw·A + Sw·B + i·(Cw·B - Sw·A). Already in
// fftshift order; the error is ~max(H, W)·eps64 of the largest coefficient, far below the
// float32 error above.
HalfPower centred_half_power(const at::Tensor& bhwc, const char* who) {
  if (!bhwc.defined() || bhwc.dim() != 4)
    throw std::invalid_argument(std::string(who) + ": expected features (B, H, W, C), got " +
                                (bhwc.defined() ? shape_str(bhwc.sizes()) : "none"));
  if (bhwc.is_complex() || !(at::isFloatingType(bhwc.scalar_type()) ||
                             at::isIntegralType(bhwc.scalar_type(), /*includeBool=*/false)))
    throw std::invalid_argument(std::string(who) + ": features must be real numbers, got " +
                                c10::toString(bhwc.scalar_type()));
  const int64_t b = bhwc.size(0), h = bhwc.size(1), w = bhwc.size(2), c = bhwc.size(3);
  if (h == 0 || w == 0)
    throw std::invalid_argument(std::string(who) + ": the grid " + shape_str(bhwc.sizes()) +
                                " has no cells");
  const c10::Device device = bhwc.device();
  const int64_t rows = h / 2 + 1;
  const auto [ch, sh] = centred_dft_parts(h);
  const auto [cw, sw] = centred_dft_parts(w);
  // Rows interleaved, 2y the real part's row y and 2y+1 the imaginary part's, so that the
  // H-side product's rows are already each row y's [A_y; B_y] (a view, no copy).
  const at::Tensor along_h = at::stack({ch.narrow(0, 0, rows), -sh.narrow(0, 0, rows)}, 1)
                                 .reshape({2 * rows, h})
                                 .to(device);
  const at::Tensor along_w =
      at::cat({at::cat({cw, sw}, 1), at::cat({-sw, cw}, 1)}).to(device);  // (2W, 2W)
  const at::Tensor x = bhwc.to(at::kDouble).reshape({b, h, w * c});
  // (B, 2R, W·C) viewed as (B·R, 2W, C): per image and row y, [A_y; B_y]; then the W side.
  const at::Tensor f = at::matmul(along_w, at::matmul(along_h, x).view({b * rows, 2 * w, c}));
  const at::Tensor re = f.narrow(1, 0, w), im = f.narrow(1, w, w);
  HalfPower out;
  out.rows = (re * re + im * im).view({b, rows, w, c});
  std::vector<int64_t> rest, columns;
  for (int64_t r = rows; r < h; ++r) rest.push_back(mirrored(r, h));
  for (int64_t col = 0; col < w; ++col) columns.push_back(mirrored(col, w));
  out.rest_rows = at::tensor(rest, at::kLong).to(device);
  out.mirror_columns = at::tensor(columns, at::kLong).to(device);
  return out;
}

// The whole (B, H, W, C) power.
at::Tensor centred_power(const at::Tensor& bhwc, const char* who) {
  const HalfPower half = centred_half_power(bhwc, who);
  return half.whole(half.rows, 1);
}

// |F|² beyond half the Nyquist radius over Σ|F|², per image and channel, from (B, H, W, C)
// power: (B, C) float64 on the CPU.
at::Tensor ratio_from_power(const at::Tensor& power) {
  const at::Tensor high = (frequency_radius(power.size(1), power.size(2)) > 0.25)
                              .to(power.device(), at::kDouble)
                              .unsqueeze(-1);
  const at::Tensor total = power.sum({1, 2});
  const at::Tensor ratio = (power * high).sum({1, 2}) / total;
  return at::where(total > 0, ratio, at::zeros_like(ratio)).cpu();
}

// log|F| (floored at 1e-20) from (B, H, W, C) power, as (B, C, H, W) float32:
// ½·log(max(|F|², 1e-40)).
at::Tensor log_amplitude_from_power(const at::Tensor& power) {
  return power.clamp_min(1e-40).log().mul_(0.5).permute({0, 3, 1, 2}).to(at::kFloat).contiguous();
}

}  // namespace

at::Tensor log_amplitude_spectrum(const at::Tensor& bhwc) {
  return log_amplitude_from_power(centred_power(bhwc, "log_amplitude_spectrum"));
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
  return ratio_from_power(centred_power(bhwc, "high_frequency_ratio"));
}

SpectrumParts spectrum_parts(const at::Tensor& bhwc) {
  const HalfPower half = centred_half_power(bhwc, "spectrum_parts");
  // The logarithms of the transformed rows only; the other rows are the same numbers
  // (B, C, H, W).
  return {half.whole(log_amplitude_from_power(half.rows), 2),
          ratio_from_power(half.whole(half.rows, 1))};
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
