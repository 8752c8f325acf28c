// AdamW and the warm-up + cosine learning-rate schedule.
#include "models/training/adamw.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <stdexcept>

namespace attnlab::training {

AdamW::AdamW(std::vector<std::pair<std::string, at::Tensor>> params, AdamWOptions options)
    : options_(options) {
  for (auto& [name, p] : params) {
    Slot s;
    s.name = name;
    s.param = p;
    s.exp_avg = at::zeros_like(p);
    s.exp_avg_sq = at::zeros_like(p);
    s.decay = p.dim() >= 2;
    slots_.push_back(std::move(s));
  }
}

bool AdamW::decays(const std::string& name) const {
  for (const Slot& s : slots_)
    if (s.name == name) return s.decay;
  return false;
}

void AdamW::zero_grad() {
  for (Slot& s : slots_) {
    at::Tensor& g = s.param.mutable_grad();
    if (g.defined()) g.zero_();
  }
}

void AdamW::step(double lr) {
  c10::NoGradGuard no_grad;
  ++steps_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double bias1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(b2, static_cast<double>(steps_));
  for (Slot& s : slots_) {
    const at::Tensor& g = s.param.grad();
    if (!g.defined()) continue;
    if (s.decay && options_.weight_decay > 0) s.param.mul_(1.0 - lr * options_.weight_decay);
    s.exp_avg.mul_(b1).add_(g, 1.0 - b1);
    s.exp_avg_sq.mul_(b2).addcmul_(g, g, 1.0 - b2);
    at::Tensor denom = (s.exp_avg_sq / bias2).sqrt_().add_(options_.eps);
    s.param.addcdiv_(s.exp_avg, denom, -lr / bias1);
  }
}

std::map<std::string, at::Tensor> AdamW::state() const {
  std::map<std::string, at::Tensor> out;
  for (const Slot& s : slots_) {
    out["exp_avg." + s.name] = s.exp_avg.detach().clone();
    out["exp_avg_sq." + s.name] = s.exp_avg_sq.detach().clone();
  }
  return out;
}

void AdamW::load_state(const std::map<std::string, at::Tensor>& state, int64_t steps) {
  std::string problems;
  for (const Slot& s : slots_)
    for (const char* part : {"exp_avg.", "exp_avg_sq."}) {
      const auto it = state.find(part + s.name);
      if (it == state.end())
        problems += " missing " + std::string(part) + s.name + ";";
      else if (!it->second.sizes().equals(s.param.sizes()))
        problems += " mis-shaped " + std::string(part) + s.name + ";";
    }
  if (state.size() != 2 * slots_.size())
    problems += " " + std::to_string(state.size()) + " moment tensors for " +
                std::to_string(slots_.size()) + " parameters;";
  if (!problems.empty())
    throw std::runtime_error("optimizer state does not fit the model:" + problems);
  c10::NoGradGuard no_grad;
  for (Slot& s : slots_) {
    s.exp_avg.copy_(state.at("exp_avg." + s.name));
    s.exp_avg_sq.copy_(state.at("exp_avg_sq." + s.name));
  }
  steps_ = steps;
}

double warmup_cosine_lr(int64_t step, int64_t total, int64_t warmup, double peak, double floor) {
  if (warmup > 0 && step < warmup)
    return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const int64_t span = total - warmup;
  if (span <= 0) return peak;
  const double t = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(span));
  return floor + 0.5 * (peak - floor) * (1.0 + std::cos(M_PI * t));
}

}  // namespace attnlab::training
