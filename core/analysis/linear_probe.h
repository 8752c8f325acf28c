// A linear probe on frozen features: multinomial logistic regression trained here, the
// standard test of what a representation makes linearly decodable (Alain and Bengio,
// "Understanding intermediate layers using linear classifier probes", 2016, arXiv
// 1610.01644; the linear evaluation of DINO and DINOv2 is the same model on the class
// token). Deterministic and in float64 on the CPU:
//   standardise  x ↦ (x − mean) / std with the training set's mean and population std per
//                feature; a feature constant up to rounding (std <= 1e-12 of its largest
//                |value|) keeps std 1, so it stays ~0 instead of amplifying rounding
//   model        logits = W·x + b, W (K, C), b (K), both starting at 0 (no randomness)
//   objective    mean cross-entropy over the training set + l2/2·‖W‖² (b not decayed)
//   optimiser    torch::optim::LBFGS (strong Wolfe line search, history 10, full batch)
//                on the analytic gradient; one iteration = one L-BFGS update with its
//                line search. It stops when max |∇| <= tolerance (converged), after
//                max_iterations, or when an update leaves the parameters unchanged.
//   predict      argmax of the logits, the lowest class index on ties
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace attnlab::analysis {

struct ProbeOptions {
  int64_t classes = 0;           // K; 0 = 1 + the largest label (train and test)
  double l2 = 1e-3;              // weight decay on W (not on the bias), >= 0
  int64_t max_iterations = 200;  // L-BFGS iterations, >= 0
  double tolerance = 1e-6;       // converged when max |gradient of the objective| <= it, > 0
};

// A trained probe, in standardised space; predict() applies the standardisation itself.
struct LinearProbe {
  at::Tensor mean, std;  // (C) of the training features (std ~0 replaced by 1)
  at::Tensor weight;     // (K, C)
  at::Tensor bias;       // (K)
};

struct ProbeResult {
  LinearProbe probe;
  double train_accuracy = 0.0, test_accuracy = 0.0;
  double loss = 0.0;       // the objective (cross-entropy + l2 term) at the returned weights
  int64_t iterations = 0;  // L-BFGS iterations run
  bool converged = false;  // max |gradient| <= tolerance at the returned weights
};

// train_x (n, C), train_y (n) integer labels in [0, K), the same for test (m >= 1 rows).
// Throws std::invalid_argument for shapes that do not match (C, row counts), labels that
// are not 1-D integers or lie outside [0, K), non-finite features, fewer than 2 classes
// among the training labels, an empty test set, or options out of range.
ProbeResult train_linear_probe(const at::Tensor& train_x, const at::Tensor& train_y,
                               const at::Tensor& test_x, const at::Tensor& test_y,
                               const ProbeOptions& options = {});

// The probe's logits (m, K) float64 for features x (m, C), standardised with its mean and
// std. Throws std::invalid_argument for x that is not (m, C) or holds non-finite values.
at::Tensor probe_logits(const LinearProbe& probe, const at::Tensor& x);

// argmax of probe_logits per row (lowest class on ties): (m) int64.
at::Tensor predict(const LinearProbe& probe, const at::Tensor& x);

struct ProbeSplit {
  at::Tensor train, test;  // int64 sample indices, ascending
};

// A deterministic stratified split of n samples with integer labels (n): within each class,
// counting its samples in order of appearance from 0, the samples whose count % every ==
// every − 1 go to the test set (every = 5: the 5th, 10th, ... of each class, 20%), the
// rest to the training set. Throws std::invalid_argument for labels that are not 1-D
// integers of length n or are negative, every < 2, or a split with no test sample (no
// class has `every` samples).
ProbeSplit split_for_probe(int64_t n, const at::Tensor& labels, int64_t every = 5);

}  // namespace attnlab::analysis
