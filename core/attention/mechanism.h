// The one interface every attention mechanism implements, so that backbones, analyses
// and the GUI never care which one they run:
//
//   out = mech.forward(tokens, layout)                      // (B, N, C) -> (B, N, C)
//   auto [out, trace] = mech.forward_traced(tokens, layout)  // plus an AttentionTrace
//
// tokens are (B, N, C) with N = layout.tokens() (prefix tokens first, then the H×W grid,
// row-major). A mechanism is a torch::nn::Module whose parameter names are exactly the
// reference implementation's (qkv.weight, l_kv.bias, to_out.0.weight, ...), so a
// state-dict slice loads into it unchanged. train()/eval() switches training-only
// branches (Castling's masked softmax).
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/attention/attention_trace.h"
#include "core/attention/token_layout.h"

namespace attnlab::attention {

// Bad configuration or input (wrong shape, heads not dividing C, prefix tokens given to a
// grid-only mechanism, ...). The message names the mechanism and the problem.
struct AttentionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// dim, heads and named options (validated and filled with defaults by the registry; see
// registry.h for each mechanism's options).
struct MechanismConfig {
  int64_t dim = 0;
  int64_t heads = 0;
  std::map<std::string, double> options;

  int64_t head_dim() const { return heads > 0 ? dim / heads : 0; }
  double option(const std::string& name) const;  // throws AttentionError if absent
  int64_t int_option(const std::string& name) const;
  bool flag(const std::string& name) const { return option(name) != 0.0; }
};

struct TraceOptions {
  // Keep the N×N score matrix a mechanism computes only as an auxiliary (Castling's
  // masked softmax, needed for its mask statistics). Off by default: it is N² memory.
  bool keep_scores = false;
  // Run the layer through its explicit form: every head's implicit attention materialised
  // as an (N, K) matrix per image (AttentionTrace::explicit_rows, with autograd history),
  // the output computed from those matrices. The output equals the ordinary forward's
  // (tests/attention/explicit_form_test.cpp), so the class score's gradient with respect
  // to the matrices explains the real layer (gradient-weighted rollout). The trace then
  // keeps its tensors with autograd history (AttentionTrace::keeps_history). Refused above
  // kExplicitMaxTokens tokens.
  bool explicit_attention = false;
};

// The largest layer (tokens N) the explicit form is built for: N×K per head and image.
constexpr int64_t kExplicitMaxTokens = 4096;

struct TracedOutput {
  at::Tensor output;
  std::shared_ptr<const AttentionTrace> trace;
};

class AttentionMechanism : public torch::nn::Module {
 public:
  AttentionMechanism(std::string name, MechanismConfig config);

  const std::string& mechanism_name() const { return name_; }
  const MechanismConfig& config() const { return config_; }

  at::Tensor forward(const at::Tensor& tokens, const TokenLayout& layout);
  TracedOutput forward_traced(const at::Tensor& tokens, const TokenLayout& layout,
                              const TraceOptions& options = {});

  // A regulariser the last training-mode forward produced (with autograd history), or an
  // undefined tensor. Only Castling has one: the mean mass its masked softmax branch kept
  // (per head and query, Σ_j (S_ij > ε)·S_ij), which a trainer may weight to push the
  // auxiliary mask towards sparsity.
  const at::Tensor& training_penalty() const { return penalty_; }

  // Its parameters' element count (the complexity report's per-layer parameters).
  int64_t parameter_count() const;

 protected:
  // A trace request: the options, and where the mechanism puts the trace it builds.
  struct TraceRequest {
    TraceOptions options;
    std::shared_ptr<AttentionTrace> trace;
  };
  // What the mechanism computes. tokens are already checked against layout and dim.
  // When request is non-null, build the mechanism's trace into request->trace.
  virtual at::Tensor run(const at::Tensor& tokens, const TokenLayout& layout,
                         TraceRequest* request) = 0;
  // Fill a trace's common fields (called by mechanisms when they create their trace),
  // including whether it keeps autograd history (the explicit form).
  void init_trace(AttentionTrace& trace, const at::Tensor& tokens, const TokenLayout& layout,
                  const TraceRequest& request) const;
  // Throws unless the layout has no prefix tokens (RoPE, windows, pooling need a grid).
  void require_pure_grid(const TokenLayout& layout) const;
  void set_training_penalty(at::Tensor penalty) { penalty_ = std::move(penalty); }
  // True when the caller asked for the explicit form (TraceOptions::explicit_attention).
  static bool wants_explicit(const TraceRequest* request) {
    return request && request->options.explicit_attention;
  }
  // The explicit form's mixing: for every head and image the trace's full (N, K) rows
  // (kept in trace.explicit_rows, (B, N, K) per head) times the head's values in its key
  // space, giving (B, h, N, d) on the layer's tokens. Each mechanism applies what follows
  // its mixing (normalisation, projection, gate) to this.
  at::Tensor explicit_mix(AttentionTrace& trace) const;

 private:
  void check_input(const at::Tensor& tokens, const TokenLayout& layout) const;
  std::string name_;
  MechanismConfig config_;
  at::Tensor penalty_;
};

// (B, N, h·d) head-major channels -> (B, h, N, d), and back.
at::Tensor split_heads(const at::Tensor& x, int64_t heads);
at::Tensor merge_heads(const at::Tensor& x);

// The output of a Linear(C, 3C) laid out [q | k | v] (each head-major), split per head.
struct HeadQkv {
  at::Tensor q, k, v;  // (B, h, N, d) views
};
HeadQkv split_qkv(const at::Tensor& qkv, int64_t heads);

// The head group of a mechanism whose heads all attend over the trace's own tokens (its
// layout, already set by init_trace), holding q, k, v as the trace keeps tensors.
HeadGroup all_heads_group(const AttentionTrace& trace, int64_t heads, const at::Tensor& q,
                          const at::Tensor& k, const at::Tensor& v);

}  // namespace attnlab::attention
