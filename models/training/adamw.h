// AdamW (decoupled weight decay, Loshchilov & Hutter) over named parameters, with its
// whole state as named tensors so that a training checkpoint is one safetensors file:
//   exp_avg.<name>, exp_avg_sq.<name> per parameter, and the step count.
// Weight decay applies to matrices and convolution kernels only (dim ≥ 2); biases, norm
// weights, position embeddings and tokens are left undecayed, as timm's optimizer
// factory does for ViTs.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace attnlab::training {

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.05;
};

class AdamW {
 public:
  // params: name -> tensor with requires_grad, as torch::nn::Module::named_parameters.
  AdamW(std::vector<std::pair<std::string, at::Tensor>> params, AdamWOptions options);

  // One update at learning rate lr from the gradients now in the parameters.
  void step(double lr);
  void zero_grad();
  int64_t steps() const { return steps_; }
  bool decays(const std::string& name) const;

  // "exp_avg.<name>" / "exp_avg_sq.<name>" (copies), and back. load_state checks that every
  // parameter has both moments of its shape; throws std::runtime_error naming what differs.
  std::map<std::string, at::Tensor> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state, int64_t steps);

 private:
  struct Slot {
    std::string name;
    at::Tensor param, exp_avg, exp_avg_sq;
    bool decay = true;
  };
  std::vector<Slot> slots_;
  AdamWOptions options_;
  int64_t steps_ = 0;
};

// Linear warm-up from 0 to peak over `warmup` steps, then cosine decay to `floor` at
// `total` steps (the learning rate for update number `step`, counted from 0).
double warmup_cosine_lr(int64_t step, int64_t total, int64_t warmup, double peak, double floor);

}  // namespace attnlab::training
