// softmax(q·kᵀ·scale + bias)·v, the product every softmax-family mechanism ends with
// (softmax, softmax_rope, sra, swin's windows, HiLo's two branches), computed one of two ways:
//   eager  the reference code's form: the (…, N, K) probabilities materialised, then ·v;
//   fused  at::scaled_dot_product_attention (LibTorch >= 2.0): flash / memory-efficient
//          kernels that never hold the N×K matrix (on an H200 at 12 544 tokens, bf16:
//          5.6× faster and 79× less memory than eager; docs/BENCHMARKS.md, issue 51).
// softmax_attention picks fused whenever it is built and allowed, else eager. Mechanisms call
// it only where the output does not need the probabilities (not for the explicit form), so
// every map still comes from the trace's recorded q, k, v (implicit rows) and nothing is lost.
// Eager is used instead while a MacCounter counts (a fused kernel hides the two products the
// complexity report counts), inside an EagerAttentionScope (the bench's softmax row, tests),
// and everywhere when ATTNLAB_FUSED_ATTENTION=0 (the reference's numerics, to the last bit).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace attnlab::attention {

// How the eager form computes the scores, so that each mechanism keeps its reference's order
// of operations to the last bit (the fused kernel has its own).
struct ScoreForm {
  bool scale_queries = false;  // (q·scale)·kᵀ as Swin's reference; else (q·kᵀ)·scale (timm)
  std::vector<at::Tensor> biases;  // added to the scores in this order (Swin: bias, then mask)
};

// q (…, N, d), k (…, K, d), v (…, K, e) with the same leading dims (at least one: the batch);
// each bias broadcastable to the scores' shape without their first dim, (…, N, K). Returns
// (…, N, e).
at::Tensor softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             double scale, const ScoreForm& form = {});
at::Tensor eager_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale, const ScoreForm& form = {});
// Throws std::runtime_error naming the LibTorch version when not built with one >= 2.0.
at::Tensor fused_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale, const ScoreForm& form = {});

// Whether this build's LibTorch has at::scaled_dot_product_attention (>= 2.0).
bool fused_attention_built();
// Built, not switched off by ATTNLAB_FUSED_ATTENTION=0, and no EagerAttentionScope on this
// thread.
bool fused_attention_enabled();
// "LibTorch 2.5.1: at::scaled_dot_product_attention" or why not ("LibTorch 1.13.0 has no ...").
const char* fused_attention_description();

// How many softmax_attention calls took each path, since the process started (all threads).
struct AttentionPathCounts {
  int64_t fused = 0, eager = 0;
};
AttentionPathCounts attention_path_counts();

// softmax_attention computes eagerly on this thread while alive.
class EagerAttentionScope {
 public:
  EagerAttentionScope();
  ~EagerAttentionScope();
  EagerAttentionScope(const EagerAttentionScope&) = delete;
  EagerAttentionScope& operator=(const EagerAttentionScope&) = delete;

 private:
  bool previous_;
};

// One softmax_attention call as an AttentionCallRecorder saw it: copies of the q, k, v the
// mechanism passed and of the result, the scale and form as passed, and the path taken.
struct AttentionCall {
  at::Tensor q, k, v;
  double scale = 1.0;
  ScoreForm form;
  at::Tensor out;
  bool fused = false;
};

// For tests: while alive, every softmax_attention call on this thread is appended to calls().
// A test holds a mechanism's core to the float64 truth of the very q, k, v (and Swin's bias
// and mask) it was given, which no trace exposes in the core's own arrangement
// (tests/attention/fused_mechanism_test.cpp). Without one, a call pays one thread-local read.
class AttentionCallRecorder {
 public:
  AttentionCallRecorder();
  ~AttentionCallRecorder();
  AttentionCallRecorder(const AttentionCallRecorder&) = delete;
  AttentionCallRecorder& operator=(const AttentionCallRecorder&) = delete;
  const std::vector<AttentionCall>& calls() const { return calls_; }
  void add(AttentionCall call) { calls_.push_back(std::move(call)); }

 private:
  AttentionCallRecorder* previous_;
  std::vector<AttentionCall> calls_;
};

}  // namespace attnlab::attention
