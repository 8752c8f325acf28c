// What a trace offers the attention-map rank analysis (core/analysis/map_rank.h, issue 26)
// beyond rows: its head's implicit map A in factored form, so its singular values come
// from the factors in O((N + K)·r²) without forming N×K, and the token mixing the layer
// adds beside A (a depthwise conv on v), which is what lifts a low-rank map back up
// (FLatten's Fig. 5). Traces implement these as mix-ins next to AttentionTrace; analyses
// find them with dynamic_cast, so mechanisms without them change nothing.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace attnlab::attention {

// rows(b, head, every token) = left · rightᵀ + identity · I, in the head's key space.
// left (N, r), right (K, r); `identity` only when K = N (Castling's own 0.5·v_i term).
struct MapFactors {
  at::Tensor left, right;
  double identity = 0.0;
};

class MapFactorSource {
 public:
  virtual ~MapFactorSource() = default;
  // Head `head` of image b; nullopt when this forward's map is not of that form (Castling's
  // training-time sparse branch adds an N×N softmax).
  virtual std::optional<MapFactors> map_factors(int64_t b, int64_t head) const = 0;
};

class AddedMixingSource {
 public:
  virtual ~AddedMixingSource() = default;
  // The layer adds, beside the head's attention output A·v, a linear token mixing of the
  // same v: out_c = A·v_c + W_c·v_c (+ a bias), channel c of the head. One (N, N) float64
  // CPU matrix W_c per entry of `channels` (0 <= c < head_dim). Empty when the mixing cannot
  // be written over the head's keys (FLatten with sr_ratio > 1 interpolates v first).
  virtual std::vector<at::Tensor> added_mixing(int64_t head,
                                               const std::vector<int64_t>& channels) const = 0;
  // Its name in tables and captions: "dwc", "lepe", "dconv".
  virtual std::string added_mixing_name() const = 0;
};

// The (H·W, H·W) matrix of a 2-D cross-correlation with `kernel` (kh, kw), zero padding
// (pad_h, pad_w), stride 1, on a row-major H × W grid: out = W · in for one channel, so
// W[(y, x), (y', x')] = kernel[y' − y + pad_h, x' − x + pad_w] where that index exists.
// float64 on the CPU. Throws std::invalid_argument for a kernel that is not 2-D or a
// padding that does not keep the grid's size (kernel side ≠ 2·pad + 1).
at::Tensor conv_mixing_matrix(const at::Tensor& kernel, int64_t height, int64_t width,
                              int64_t pad_h, int64_t pad_w);

}  // namespace attnlab::attention
