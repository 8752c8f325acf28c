// bf16 matrix products that accumulate in fp32 on every CPU.
//
// LibTorch 1.13 computes a bf16 matrix product on the CPU with oneDNN (fp32 accumulation)
// only where the CPU has AVX-512; elsewhere (AVX2 machines: most AMD EPYC/Ryzen before
// Zen 4, many Intel desktops) its own gemm adds the products into the bf16 output, so a
// sum of 1024 ones comes out as 256: past 256 an added 1 is below half of bf16's spacing
// and is lost. That is not bf16's rounding of a result, it is a different (and for long
// reductions meaningless) computation, and it made `--dtype bf16` depend on the CPU.
//
// install_fp32_accumulating_bf16_products() probes for it and, where LibTorch's products
// lose the sum, registers CPU kernels for the products a forward uses (mm, bmm, addmm,
// baddbmm, mv, addmv, dot, and the unfolded conv2d) that, for bf16 operands, compute in
// fp32 from the bf16 values and round the result to bf16 once: what oneDNN and the GPUs'
// tensor cores do. Every other dtype goes to LibTorch's own CPU kernel unchanged.
#pragma once

#include <string>

namespace attnlab::runtime {

// Whether this LibTorch's CPU bf16 matrix product of a row of 1024 ones by a column of
// 1024 ones gives less than 1024 (computed once).
bool cpu_bf16_products_lose_sums();

// Installs the kernels when cpu_bf16_products_lose_sums(); once per process, and before any
// thread but the caller's runs LibTorch ops (the GUI and the test main call it at start; a
// bf16 target or Backbone::set_precision(bf16) call it too). Returns whether they are
// installed.
bool install_fp32_accumulating_bf16_products();

// What `attnlab info` says: "LibTorch's own (fp32 accumulation)" or "fp32 accumulation
// (attnlab's kernels: LibTorch's own add in bf16 on this CPU)".
std::string bf16_products_description();

}  // namespace attnlab::runtime
