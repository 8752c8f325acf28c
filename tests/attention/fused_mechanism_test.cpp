// Issue 65: every mechanism that calls the softmax core computes the same forward through the
// fused path (at::scaled_dot_product_attention) as through the eager one, at fp32 and bf16.
// Neither is compared with the other directly: each is held to the float64 truth T of the
// same module (its weights and input converted exactly, run eagerly) within a bound derived
// for that path, so the two agree within the sum of their bounds. Per core call:
//
//   core   |c − c_T| ≤ core_error_bound(q, k, v) + |core_truth(q, k, v) − c_T| elementwise,
//          where q, k, v (and Swin's bias and mask) are the operands this path passed to the
//          core, recorded by an AttentionCallRecorder, and c_T is the float64 module's core
//          output. The first term is the core's own roundings (attention_core_bound.h); the
//          second is how far the roundings before the core (projections, RoPE, the
//          reduction's norm, pooling) moved its operands, carried through the core in
//          float64: computed from the operands alone, so a wrong fused kernel cannot widen
//          it. Checked on the recorded c itself, then carried to the output.
//   gate   softmax_rope's ((c + lepe) ⊙ o) first, elementwise: lepe and o come before the
//          core, so the path's own are read from its trace and their distance from T's in
//          float64, as for the operands; the sum and the product round once each (gated).
//   after  merging heads, reversing windows, cropping padding and joining branches move
//          values exactly, channel j of the projection's input being head j / d's feature
//          j mod d; E_j, M_j: the largest error and magnitude bound on channel j. A
//          projection y = W·c + b with n inputs (the float64 module's W and b are the path's
//          exactly) carries them to output channel i as Σ_j |W_ij|·E_j, and adds its own
//          roundings: an fp32 sum of n products and the bias, γ_{n+1} ≤ (n+1)·u32·(1 +
//          2(n+1)·u32) of Σ_j |W_ij|·M_j + |b_i| (times 1 + u: relative to a rounded value),
//          then at most two roundings at the dtype (of W·c, then of the sum with b), u of
//          |W·c| ≤ |y| + |b_i| and u of |y|, |y| ≤ Y_i + tol_i (Y_i the largest |T| on channel
//          i): tol_i = [(Σ_j |W_ij| E_j + γ(Σ_j |W_ij| M_j + |b_i|))(1 + u) + u(1 + 2u)(2Y_i +
//          |b_i|)] / (1 − 2u).
//
// No first-order step: the float64 module's own roundings (2^-53 of a value, under 2^-45
// after its sums of at most 81 terms) are below u32 by a factor of 2^21 and not counted.
// Each path must also be the one taken: the fused run with every core call fused (else the
// test would compare eager with eager), the eager run with none.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/attention/fused_attention.h"
#include "core/runtime/precision.h"
#include "tests/attention/attention_core_bound.h"
#include "tests/attention/fused_mechanism_cases.h"

namespace attnlab::testing {
namespace {

using attention::AttentionCall;

// One traced forward (what every analysis runs; the plain forward is the same code keeping
// nothing) with its core calls recorded and the paths it took counted.
struct RecordedForward {
  at::Tensor out;
  std::shared_ptr<const attention::AttentionTrace> trace;
  std::vector<AttentionCall> calls;
  attention::AttentionPathCounts paths;
};

RecordedForward recorded_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                 const attention::TokenLayout& layout, bool eager) {
  at::NoGradGuard no_grad;
  std::optional<attention::EagerAttentionScope> scope;
  if (eager) scope.emplace();
  const attention::AttentionCallRecorder recorder;
  const auto before = attention::attention_path_counts();
  auto [out, trace] = m.forward_traced(x, layout);
  const auto after = attention::attention_path_counts();
  return {out, trace, recorder.calls(), {after.fused - before.fused, after.eager - before.eager}};
}

double largest(const at::Tensor& t) {
  return t.to(at::kDouble).abs().max().item<double>();
}

// |c − c_T| for a core call whose result is c, elementwise (header comment, "core").
at::Tensor core_error(const AttentionCall& call, const at::Tensor& core_t, double u) {
  return core_error_bound(call, u) + (core_truth(call) - core_t).abs();
}

// Elementwise bounds on an error and on the magnitude of the value it is the error of.
struct Carried {
  at::Tensor error, magnitude;
};

// softmax_rope's G = (c + lepe) ⊙ o, elementwise on the (B, h, N, d) per-head layout that c,
// lepe and o share. The sum rounds once: |s − s_T| ≤ e_c + |lepe − lepe_T| + u·A, A = M_c +
// |lepe| bounding |c + lepe|; the product rounds once: |G − G_T| ≤ |s − s_T|·|o| +
// |s_T|·|o − o_T| + u·A(1 + u)·|o|, and |G| ≤ A·|o|·(1 + u)².
Carried gated(const Carried& core, const at::Tensor& core_t, const attention::AttentionTrace& run,
              const attention::AttentionTrace& truth, double u) {
  const auto read = [](const attention::AttentionTrace& t, const char* name) {
    return t.internal(name).to(at::kDouble);
  };
  const at::Tensor lepe = read(run, "softmax_rope.lepe"), lepe_t = read(truth, "softmax_rope.lepe");
  const at::Tensor o = read(run, "softmax_rope.o").abs(), o_t = read(truth, "softmax_rope.o");
  const at::Tensor a = core.magnitude + lepe.abs();
  const at::Tensor sum_error = core.error + (lepe - lepe_t).abs() + u * a;
  const at::Tensor s_t = (core_t.to(at::kDouble) + lepe_t).abs();
  return {sum_error * o + s_t * (read(run, "softmax_rope.o") - o_t).abs() + u * (1 + u) * a * o,
          a * o * (1 + u) * (1 + u)};
}

// A core output's per-channel maxima: (B, h, …, d) -> (h·d,), the head-major channels that
// merging heads (or putting windows back) gives the projection.
at::Tensor per_channel(const at::Tensor& t) {
  return t.movedim(1, 0).reshape({t.size(1), -1, t.size(-1)}).amax(1).reshape({-1});
}

// Bounds on |out − T| per output channel for one path's recorded forward (header comment):
// each core call's projection gives its own slice of the channels, in call order.
at::Tensor output_bounds(const FusedCase& c, const attention::AttentionMechanism& m64,
                         const RecordedForward& run, const RecordedForward& truth, double u) {
  const double u32 = std::ldexp(1.0, -24);
  const auto params = m64.named_parameters();
  const at::Tensor y_t = truth.out.abs().reshape({-1, truth.out.size(-1)}).amax(0);
  std::vector<at::Tensor> slices;
  int64_t first = 0;
  for (size_t i = 0; i < run.calls.size(); ++i) {
    const at::Tensor& core_t = truth.calls[i].out;
    const at::Tensor e = core_error(run.calls[i], core_t, u);
    Carried in{e, core_t.abs() + e};
    if (c.gated) in = gated(in, core_t, *run.trace, *truth.trace, u);
    const at::Tensor w = params[c.projections[i] + ".weight"];
    const at::Tensor abs_w = w.reshape({w.size(0), -1}).abs();
    const at::Tensor* bias = params.find(c.projections[i] + ".bias");
    const at::Tensor b = bias ? bias->abs() : at::zeros({w.size(0)}, w.options());
    const at::Tensor carried = at::mv(abs_w, per_channel(in.error));
    const at::Tensor terms = at::mv(abs_w, per_channel(in.magnitude)) + b;
    const double n = double(abs_w.size(1));
    const double gamma = (n + 1) * u32 * (1 + 2 * (n + 1) * u32);  // γ_{n+1}
    const at::Tensor y = y_t.slice(0, first, first + w.size(0));
    slices.push_back(((carried + gamma * terms) * (1 + u) + u * (1 + 2 * u) * (2 * y + b)) /
                     (1 - 2 * u));
    first += w.size(0);
  }
  EXPECT_EQ(first, truth.out.size(-1)) << "the projections do not cover the output's channels";
  return at::cat(slices);
}

// Both paths of every case at `dtype` against the float64 truth; false when the fused path
// is not taken here (fused_path_unavailable; only the eager one was checked).
bool check_cases_at(at::ScalarType dtype) {
  const double u = unit_roundoff(dtype);
  const bool fused_taken = fused_path_unavailable().empty();
  for (const FusedCase& c : fused_cases()) {
    SCOPED_TRACE(c.label + " at " + runtime::dtype_name(dtype));
    auto m = make_fused_case(c);
    redraw_parameters(*m, 11);
    copy_floating_state(*m, *m, dtype);
    auto m64 = make_fused_case(c);
    copy_floating_state(*m, *m64, at::kDouble);
    at::manual_seed(12);
    const at::Tensor x = at::randn({2, c.layout.tokens(), kFusedCaseDim}).to(dtype);
    const RecordedForward truth = recorded_forward(*m64, x.to(at::kDouble), c.layout, true);
    const size_t calls = c.projections.size();
    if (truth.calls.size() != calls) {
      ADD_FAILURE() << "the case lists " << calls << " core calls; the forward made "
                    << truth.calls.size();
      continue;
    }
    for (const bool eager : {false, true}) {
      if (!eager && !fused_taken) continue;
      SCOPED_TRACE(eager ? "eager path" : "fused path");
      const RecordedForward run = recorded_forward(*m, x, c.layout, eager);
      if (run.calls.size() != calls) {
        ADD_FAILURE() << "this path made " << run.calls.size() << " core calls, not " << calls;
        continue;
      }
      for (const AttentionCall& call : run.calls) EXPECT_EQ(call.fused, !eager);
      EXPECT_EQ(run.paths.fused, eager ? 0 : int64_t(calls));
      EXPECT_EQ(run.paths.eager, eager ? int64_t(calls) : 0);
      EXPECT_EQ(run.out.scalar_type(), dtype);
      // The core calls first: each within its own bound of the float64 module's.
      double core_excess = -1e300, core_err = 0.0, core_tol = 0.0;
      for (size_t i = 0; i < calls; ++i) {
        const at::Tensor& got = run.calls[i].out;
        const at::Tensor& want = truth.calls[i].out;
        const at::Tensor bound = core_error(run.calls[i], want, u);
        core_excess = std::max(core_excess, bound_excess(got, want, bound));
        core_err = std::max(core_err, (got.to(at::kDouble) - want).abs().max().item<double>());
        core_tol = std::max(core_tol, bound.max().item<double>());
      }
      const at::Tensor tol = output_bounds(c, *m64, run, truth, u);
      const double err = (run.out.to(at::kDouble) - truth.out).abs().max().item<double>();
      std::printf(
          "%-36s %s %-5s core %.2g (bound %.2g), output %.2g (bound %.2g..%.2g, scale %.2g)\n",
          c.label.c_str(), runtime::dtype_name(dtype).c_str(), eager ? "eager" : "fused", core_err,
          core_tol, err, tol.min().item<double>(), tol.max().item<double>(), largest(truth.out));
      EXPECT_LE(core_excess, 0.0) << "a core call beyond its bound";
      EXPECT_LE(bound_excess(run.out, truth.out, tol), 0.0) << "the output beyond its bound";
    }
  }
  return fused_taken;
}

TEST(FusedMechanisms, BothPathsMeetTheFloat64TruthAtFp32) {
  if (!check_cases_at(at::kFloat))
    GTEST_SKIP() << "eager checked; no fused path here: " << fused_path_unavailable();
}

TEST(FusedMechanisms, BothPathsMeetTheFloat64TruthAtBf16) {
  try {
    runtime::select_target("cpu", "bf16");  // fp32-accumulating products, then the probe
  } catch (const std::invalid_argument& e) {
    GTEST_SKIP() << e.what();
  }
  if (!check_cases_at(at::kBFloat16))
    GTEST_SKIP() << "eager checked; no fused path here: " << fused_path_unavailable();
}

}  // namespace
}  // namespace attnlab::testing
