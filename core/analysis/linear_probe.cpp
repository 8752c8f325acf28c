// Linear probe (see linear_probe.h): the objective and its gradient in closed form,
//   ∇_W = (softmax(Z) − Y)ᵀ·X / n + l2·W,   ∇_b = Σ_i (softmax(Z) − Y)_i / n,
// handed to LibTorch's L-BFGS one iteration at a time, so that this file counts the
// iterations and decides convergence on its own gradient.
#include "core/analysis/linear_probe.h"

#include <ATen/ATen.h>
#include <torch/optim/lbfgs.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::analysis {
namespace {

at::Tensor probe_checked_features(const at::Tensor& x, int64_t c, const std::string& what) {
  if (!x.defined() || x.dim() != 2)
    throw std::invalid_argument("linear probe: " + what + " must be (samples, features)");
  if (c >= 0 && x.size(1) != c)
    throw std::invalid_argument("linear probe: " + what + " has " + std::to_string(x.size(1)) +
                                " features, expected " + std::to_string(c));
  at::Tensor d = x.to(at::kCPU, at::kDouble).contiguous();
  if (!at::isfinite(d).all().item<bool>())
    throw std::invalid_argument("linear probe: " + what + " hold NaN or Inf values");
  return d;
}

at::Tensor probe_checked_labels(const at::Tensor& y, int64_t n, const std::string& what) {
  if (!y.defined() || y.dim() != 1 || !at::isIntegralType(y.scalar_type(), /*includeBool=*/false))
    throw std::invalid_argument("linear probe: " + what + " must be a 1-D integer tensor");
  if (y.size(0) != n)
    throw std::invalid_argument("linear probe: " + what + " has " + std::to_string(y.size(0)) +
                                " entries for " + std::to_string(n) + " samples");
  at::Tensor l = y.to(at::kCPU, at::kLong).contiguous();
  if (n > 0 && l.min().item<int64_t>() < 0)
    throw std::invalid_argument("linear probe: " + what + " hold a negative label");
  return l;
}

struct ProbeObjective {
  double loss = 0;
  at::Tensor grad_w, grad_b;
  double max_grad = 0;
};

ProbeObjective probe_objective(const at::Tensor& x, const at::Tensor& onehot, const at::Tensor& w,
                               const at::Tensor& b, double l2) {
  const double n = double(x.size(0));
  const at::Tensor logp = at::log_softmax(at::addmm(b, x, w.t()), 1);
  ProbeObjective o;
  o.loss = -(onehot * logp).sum().item<double>() / n + 0.5 * l2 * (w * w).sum().item<double>();
  const at::Tensor g = (logp.exp() - onehot) / n;
  o.grad_w = at::matmul(g.t(), x) + l2 * w;
  o.grad_b = g.sum(0);
  o.max_grad = std::max(o.grad_w.abs().max().item<double>(), o.grad_b.abs().max().item<double>());
  return o;
}

double probe_accuracy(const LinearProbe& p, const at::Tensor& x, const at::Tensor& y) {
  return predict(p, x).eq(y).to(at::kDouble).mean().item<double>();
}

}  // namespace

at::Tensor probe_logits(const LinearProbe& probe, const at::Tensor& x) {
  if (!probe.weight.defined())
    throw std::invalid_argument("linear probe: the probe is not trained");
  const at::Tensor d = probe_checked_features(x, probe.weight.size(1), "the features");
  return at::addmm(probe.bias, (d - probe.mean) / probe.std, probe.weight.t());
}

at::Tensor predict(const LinearProbe& probe, const at::Tensor& x) {
  return probe_logits(probe, x).argmax(1);
}

ProbeResult train_linear_probe(const at::Tensor& train_x, const at::Tensor& train_y,
                               const at::Tensor& test_x, const at::Tensor& test_y,
                               const ProbeOptions& options) {
  if (options.classes < 0 || !(options.l2 >= 0.0) || !std::isfinite(options.l2) ||
      options.max_iterations < 0 || !(options.tolerance > 0.0))
    throw std::invalid_argument(
        "linear probe: options out of range (classes >= 0, l2 >= 0, max_iterations >= 0, "
        "tolerance > 0)");
  const at::Tensor x = probe_checked_features(train_x, -1, "the training features");
  const int64_t n = x.size(0), c = x.size(1);
  const at::Tensor y = probe_checked_labels(train_y, n, "the training labels");
  const at::Tensor tx = probe_checked_features(test_x, c, "the test features");
  const at::Tensor ty = probe_checked_labels(test_y, tx.size(0), "the test labels");
  if (tx.size(0) == 0) throw std::invalid_argument("linear probe: the test set is empty");
  if (n == 0 || std::get<0>(at::_unique(y)).size(0) < 2)
    throw std::invalid_argument("linear probe: the training labels hold fewer than 2 classes");
  const int64_t largest = std::max(y.max().item<int64_t>(), ty.max().item<int64_t>());
  const int64_t k = options.classes > 0 ? options.classes : largest + 1;
  if (largest >= k)
    throw std::invalid_argument("linear probe: label " + std::to_string(largest) +
                                " is outside the " + std::to_string(k) + " classes");

  ProbeResult r;
  LinearProbe& p = r.probe;
  p.mean = x.mean(0);
  p.std = x.std(0, /*unbiased=*/false);
  // A feature constant up to rounding (std <= 1e-12 of its largest |value|) is constant.
  const at::Tensor scale = std::get<0>(x.abs().max(0));
  p.std = at::where(p.std <= 1e-12 * scale, at::ones_like(p.std), p.std);
  const at::Tensor xs = (x - p.mean) / p.std;
  const at::Tensor onehot = at::one_hot(y, k).to(at::kDouble);

  at::NoGradGuard no_grad;
  at::Tensor w = at::zeros({k, c}, at::kDouble), b = at::zeros({k}, at::kDouble);
  torch::optim::LBFGS lbfgs(std::vector<at::Tensor>{w, b}, torch::optim::LBFGSOptions(1.0)
                                                               .max_iter(1)
                                                               .history_size(10)
                                                               .tolerance_grad(options.tolerance)
                                                               .tolerance_change(0.0)
                                                               .line_search_fn("strong_wolfe"));
  auto closure = [&]() {
    at::NoGradGuard inner;
    ProbeObjective o = probe_objective(xs, onehot, w, b, options.l2);
    w.mutable_grad() = o.grad_w;
    b.mutable_grad() = o.grad_b;
    return at::scalar_tensor(o.loss, at::kDouble);
  };
  ProbeObjective o = probe_objective(xs, onehot, w, b, options.l2);
  while (o.max_grad > options.tolerance && r.iterations < options.max_iterations) {
    const at::Tensor w0 = w.clone(), b0 = b.clone();
    lbfgs.step(closure);
    if (at::equal(w, w0) && at::equal(b, b0)) break;  // no step left that lowers the loss
    ++r.iterations;
    o = probe_objective(xs, onehot, w, b, options.l2);
  }
  r.loss = o.loss;
  r.converged = o.max_grad <= options.tolerance;
  p.weight = w.detach().clone();
  p.bias = b.detach().clone();
  r.train_accuracy = probe_accuracy(p, x, y);
  r.test_accuracy = probe_accuracy(p, tx, ty);
  return r;
}

ProbeSplit split_for_probe(int64_t n, const at::Tensor& labels, int64_t every) {
  if (every < 2)
    throw std::invalid_argument("probe split: every must be >= 2, got " + std::to_string(every));
  const at::Tensor y = probe_checked_labels(labels, n, "the labels");
  const auto* py = y.data_ptr<int64_t>();
  std::map<int64_t, int64_t> seen;  // samples of each class so far
  std::vector<int64_t> train, test;
  for (int64_t i = 0; i < n; ++i) (seen[py[i]]++ % every == every - 1 ? test : train).push_back(i);
  if (test.empty())
    throw std::invalid_argument("probe split: no class has " + std::to_string(every) +
                                " samples, so the test set would be empty");
  ProbeSplit s;
  s.train = at::tensor(train, at::kLong);
  s.test = at::tensor(test, at::kLong);
  return s;
}

}  // namespace attnlab::analysis
