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
#include <map>
#include <memory>
#include <mutex>
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
// columns mirrored. What that takes for one grid size, built once (float64 and long, on
// the CPU): the transform's matrices, the whole grid's reading of the half, and each half
// cell's weight in the whole grid's sums.
struct GridTransform {
  int64_t rows = 0;        // R = H/2 + 1
  at::Tensor along_h;      // (2R, H): rows 2y, 2y+1 the real and imaginary parts of row y
  at::Tensor along_w;      // (2W, 2W): [[Cw, Sw], [-Sw, Cw]]
  at::Tensor whole_index;  // (H·W): each cell of the whole grid -> its cell of the half (R·W)
  at::Tensor sum_weights;  // (R, W, 2): per half cell, how many whole cells read it; and of
                           // those, how many lie beyond half the Nyquist radius
};

GridTransform make_grid_transform(int64_t h, int64_t w) {
  GridTransform t;
  t.rows = h / 2 + 1;
  const auto [ch, sh] = centred_dft_parts(h);
  const auto [cw, sw] = centred_dft_parts(w);
  t.along_h = at::stack({ch.narrow(0, 0, t.rows), -sh.narrow(0, 0, t.rows)}, 1)
                  .reshape({2 * t.rows, h})
                  .contiguous();
  t.along_w = at::cat({at::cat({cw, sw}, 1), at::cat({-sw, cw}, 1)}).contiguous();
  t.whole_index = at::empty({h * w}, at::kLong);
  t.sum_weights = at::zeros({t.rows, w, 2}, at::kDouble);
  int64_t* index = t.whole_index.data_ptr<int64_t>();
  double* weight = t.sum_weights.data_ptr<double>();
  const at::Tensor radius = frequency_radius(h, w);
  const double* rad = radius.data_ptr<double>();
  for (int64_t r = 0; r < h; ++r)
    for (int64_t col = 0; col < w; ++col) {
      const int64_t half = r < t.rows ? r * w + col : mirrored(r, h) * w + mirrored(col, w);
      index[r * w + col] = half;
      weight[2 * half] += 1.0;
      if (rad[r * w + col] > 0.25) weight[2 * half + 1] += 1.0;
    }
  return t;
}

// Shared by every call (the session transforms each layer's features on several threads).
const GridTransform& grid_transform(int64_t h, int64_t w) {
  static std::mutex lock;
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<const GridTransform>> built;
  const std::lock_guard<std::mutex> held(lock);
  auto& slot = built[{h, w}];
  if (!slot) slot = std::make_unique<const GridTransform>(make_grid_transform(h, w));
  return *slot;
}

struct HalfPower {
  at::Tensor rows;  // (B, H/2 + 1, C, W) float64: rows 0 .. H/2 of the centred power
  const GridTransform* grid = nullptr;
};

// (B, H, W, C) real features -> |fftshift(fft2)|² over H, W, its rows 0 .. H/2 as
// (B, H/2 + 1, C, W) float64 (channels before columns: the logarithms' (C, H, W) order is
// then a copy of W-long runs, not of single values). Always in float64: a
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
  HalfPower out;
  out.grid = &grid_transform(h, w);
  const int64_t rows = out.grid->rows;
  const at::Tensor along_h = out.grid->along_h.to(device);
  const at::Tensor along_w = out.grid->along_w.to(device);
  const at::Tensor x = bhwc.to(at::kDouble).contiguous();
  // Per image, the H side as one plain product (2R, H)·(H, W·C), then its (2R, W·C) viewed
  // as (R, 2W, C) (per row y, [A_y; B_y]) and the W side as R products with one matrix,
  // transposed: [A_y; B_y]ᵀ·along_wᵀ gives each row's (C, 2W), real parts then imaginary.
  // mm and bmm, not matmul: LibTorch 1.13's matmul of a matrix with a stack folds the
  // stack into a transposed operand, many times slower here than these plain products.
  const at::Tensor along_w_t = along_w.t().expand({rows, 2 * w, 2 * w});
  std::vector<at::Tensor> per_image;
  for (int64_t i = 0; i < b; ++i) {
    const at::Tensor ab = at::mm(along_h, x[i].view({h, w * c})).view({rows, 2 * w, c});
    per_image.push_back(at::bmm(ab.transpose(1, 2), along_w_t));
  }
  const at::Tensor f = b == 1 ? per_image.front() : at::cat(per_image);  // (B·R, C, 2W)
  const at::Tensor re = f.narrow(2, 0, w), im = f.narrow(2, w, w);
  out.rows = (re * re).addcmul_(im, im).view({b, rows, c, w});
  return out;
}

// |F|² beyond half the Nyquist radius over Σ|F|², per image and channel, from the half
// power: (B, C) float64 on the CPU. Both sums over the whole grid are weighted sums over the
// half (GridTransform::sum_weights), one product.
at::Tensor ratio_from_half_power(const HalfPower& half) {
  const at::Tensor& p = half.rows;  // (B, R, C, W)
  const int64_t b = p.size(0), r = p.size(1), c = p.size(2), w = p.size(3);
  // Per half row, (C, W)·(W, 2); the rows' products summed: (B, C, 2).
  const at::Tensor weights = half.grid->sum_weights.to(p.device()).repeat({b, 1, 1});
  const at::Tensor sums = at::bmm(p.view({b * r, c, w}), weights).view({b, r, c, 2}).sum(1);
  const at::Tensor total = sums.select(2, 0), ratio = sums.select(2, 1) / total;  // (B, C)
  return at::where(total > 0, ratio, at::zeros_like(ratio)).cpu();
}

// log|F| (floored at 1e-20) from (B, H/2 + 1, C, W) power, on the whole grid as
// (B, C, H, W) float32: ½·log(max(|F|², 1e-40)), the logarithms taken on the half only and
// the whole grid read from them (GridTransform::whole_index).
at::Tensor log_amplitude_from_half_power(const HalfPower& half, int64_t h, int64_t w) {
  const at::Tensor& p = half.rows;
  const int64_t b = p.size(0), c = p.size(2);
  const at::Tensor logs = p.clamp_min(1e-40).log_().mul_(0.5).to(at::kFloat);  // (B, R, C, W)
  if (!logs.device().is_cpu())
    return logs.permute({0, 2, 1, 3})
        .reshape({b, c, -1})
        .index_select(2, half.grid->whole_index.to(p.device()))
        .view({b, c, h, w});
  // On the CPU the reordering and the reading of the whole grid are one pass (index_select
  // along an inner axis after a permuted copy took a fifth of the transform's time).
  at::Tensor out = at::empty({b, c, h, w}, logs.options());
  const float* in = logs.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t* index = half.grid->whole_index.data_ptr<int64_t>();
  const int64_t rows = half.grid->rows, cells = h * w;
  // Each whole cell's value, from channel 0's: its half row's offset (rows C·W apart) + column.
  std::vector<int64_t> offset(static_cast<size_t>(cells));
  for (int64_t cell = 0; cell < cells; ++cell)
    offset[size_t(cell)] = (index[cell] / w) * c * w + index[cell] % w;
  // Per channel, the whole grid's cells in order: written in sequence, read along half rows.
  for (int64_t i = 0; i < b; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* from = in + (i * rows * c + ch) * w;  // (row 0, channel ch)
      float* to = o + (i * c + ch) * cells;
      for (int64_t cell = 0; cell < cells; ++cell) to[cell] = from[offset[size_t(cell)]];
    }
  return out;
}

}  // namespace

at::Tensor log_amplitude_spectrum(const at::Tensor& bhwc) {
  const HalfPower half = centred_half_power(bhwc, "log_amplitude_spectrum");
  return log_amplitude_from_half_power(half, bhwc.size(1), bhwc.size(2));
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
  return ratio_from_half_power(centred_half_power(bhwc, "high_frequency_ratio"));
}

SpectrumParts spectrum_parts(const at::Tensor& bhwc) {
  const HalfPower half = centred_half_power(bhwc, "spectrum_parts");
  return {log_amplitude_from_half_power(half, bhwc.size(1), bhwc.size(2)),
          ratio_from_half_power(half)};
}

at::Tensor SpectrumAccumulator::add(const at::Tensor& bhwc) {
  SpectrumParts parts = spectrum_parts(bhwc);
  add(parts);
  return parts.high_frequency_ratio;
}

void SpectrumAccumulator::add(const SpectrumParts& parts) {
  // (B, C, H, W), float32 as computed: CompensatedSum widens each value as it adds it.
  const at::Tensor logs = parts.log_amplitude.to(at::kCPU);
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
