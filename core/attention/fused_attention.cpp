// The eager and fused softmax attention; see fused_attention.h.
#include "core/attention/fused_attention.h"

#include <ATen/ATen.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/attention/kernels.h"
#include "core/runtime/mac_counter.h"
#include "core/runtime/torch_compat.h"

// ATTNLAB_HAS_SDPA and ATTNLAB_SDPA_HAS_SCALE: runtime/torch_compat.h.

namespace attnlab::attention {
namespace {

std::atomic<int64_t> fused_calls{0}, eager_calls{0};
thread_local bool eager_forced = false;
thread_local AttentionCallRecorder* recorder = nullptr;

// ATTNLAB_FUSED_ATTENTION=0 (or "off", "false") switches the fused path off for the process.
bool switched_off_by_environment() {
  static const bool off = [] {
    const char* env = std::getenv("ATTNLAB_FUSED_ATTENTION");
    return env &&
           (!std::strcmp(env, "0") || !std::strcmp(env, "off") || !std::strcmp(env, "false"));
  }();
  return off;
}

#ifdef ATTNLAB_HAS_SDPA
// (B, …, L, E) as the kernels' (B, X, L, E), each row's E features adjacent. CUDA's flash and
// memory-efficient kernels refuse an operand whose last dim is strided, and
// at::scaled_dot_product_attention then takes its math path, which builds the L×L scores (in
// fp32): RAVLT's softmax_rope, whose per-head q, k, v are transposed views of an NCHW
// convolution, used 8.2 GB and 4× the eager time at 12 544 tokens in bf16 on an H200
// (docs/BENCHMARKS.md). Copying such an operand costs O(L·E), not O(L²).
at::Tensor as_kernel_operand(const at::Tensor& t) {
  const at::Tensor four = t.dim() == 4 ? t : t.reshape({t.size(0), -1, t.size(-2), t.size(-1)});
  return four.stride(-1) == 1 ? four : four.contiguous();
}
#endif

}  // namespace

bool fused_attention_built() {
#ifdef ATTNLAB_HAS_SDPA
  return true;
#else
  return false;
#endif
}

bool fused_attention_enabled() {
  return fused_attention_built() && !eager_forced && !switched_off_by_environment();
}

const char* fused_attention_description() {
#ifdef ATTNLAB_HAS_SDPA
  return "LibTorch " TORCH_VERSION ": at::scaled_dot_product_attention";
#else
  return "LibTorch " TORCH_VERSION " has no at::scaled_dot_product_attention (2.0 and later)";
#endif
}

AttentionPathCounts attention_path_counts() {
  return {fused_calls.load(std::memory_order_relaxed), eager_calls.load(std::memory_order_relaxed)};
}

EagerAttentionScope::EagerAttentionScope() : previous_(eager_forced) {
  eager_forced = true;
}
EagerAttentionScope::~EagerAttentionScope() {
  eager_forced = previous_;
}

AttentionCallRecorder::AttentionCallRecorder() : previous_(recorder) {
  recorder = this;
}
AttentionCallRecorder::~AttentionCallRecorder() {
  recorder = previous_;
}

at::Tensor eager_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale, const ScoreForm& form) {
  eager_calls.fetch_add(1, std::memory_order_relaxed);
  if (!form.scale_queries && form.biases.empty())  // timm's and LITv2's (q kᵀ)·scale
    return at::matmul(softmax_scores(q, k, scale), v);
  at::Tensor scores;
  {
    const runtime::MacGroupScope label("scores");  // for the complexity report
    scores = form.scale_queries ? at::matmul(q * scale, k.transpose(-2, -1))
                                : at::matmul(q, k.transpose(-2, -1)).mul_(scale);
  }
  for (const auto& bias : form.biases) scores = scores + bias;
  return at::matmul(at::softmax(scores, -1), v);
}

at::Tensor fused_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale, const ScoreForm& form) {
#ifdef ATTNLAB_HAS_SDPA
  if (q.dim() < 3 || k.dim() != q.dim() || v.dim() != q.dim())
    throw std::invalid_argument(
        "fused_softmax_attention: q, k, v must have the same number (>= 3) "
        "of dims");
  fused_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t n = q.size(-2), keys = k.size(-2);
  c10::optional<at::Tensor> mask;
  if (!form.biases.empty()) {
    at::Tensor sum = form.biases.front();
    for (size_t i = 1; i < form.biases.size(); ++i) sum = sum + form.biases[i];
    std::vector<int64_t> shape(q.sizes().begin() + 1, q.sizes().end() - 1);
    shape.push_back(keys);  // the scores' shape without the batch
    mask = sum.expand(shape).reshape({1, -1, n, keys}).to(q.scalar_type());
  }
#ifdef ATTNLAB_SDPA_HAS_SCALE
  const at::Tensor out = at::scaled_dot_product_attention(
      as_kernel_operand(q), as_kernel_operand(k), as_kernel_operand(v), mask, 0.0, false, scale);
#else  // 2.0 divides by √d itself
  const double d = static_cast<double>(q.size(-1));
  const at::Tensor out = at::scaled_dot_product_attention(
      as_kernel_operand(q * (scale * std::sqrt(d))), as_kernel_operand(k), as_kernel_operand(v),
      mask, 0.0, false);
#endif
  std::vector<int64_t> out_shape(q.sizes().begin(), q.sizes().end() - 1);
  out_shape.push_back(v.size(-1));
  return out.reshape(out_shape);
#else
  (void)q, (void)k, (void)v, (void)scale, (void)form;
  throw std::runtime_error(std::string("fused softmax attention: ") +
                           fused_attention_description());
#endif
}

at::Tensor softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             double scale, const ScoreForm& form) {
  const bool fused = fused_attention_enabled() && !runtime::counting_macs();
  at::Tensor out = fused ? fused_softmax_attention(q, k, v, scale, form)
                         : eager_softmax_attention(q, k, v, scale, form);
  if (recorder) recorder->add({q.clone(), k.clone(), v.clone(), scale, form, out.clone(), fused});
  return out;
}

}  // namespace attnlab::attention
