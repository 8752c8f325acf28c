// The precision the forward pass runs at: `--dtype fp32|bf16|fp16` (or ATTNLAB_DTYPE).
// A model's floating-point weights are held in it (models::Backbone::set_precision) and
// its input is cast to it on entry to the forward; everything after the forward reads
// the results at full precision on the host (the analyses copy what they read to
// float64), and the steps that need it run in fp32 or better even on device: SVD (ranks),
// FFT (spectra), CKA (full_precision below).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace at {
class Tensor;
}

namespace attnlab::runtime {

// "fp32" | "bf16" | "fp16" (also "float32", "bfloat16", "float16") → the scalar type;
// std::invalid_argument naming the accepted names otherwise.
c10::ScalarType parse_dtype(const std::string& spec);
// "fp32", "bf16", "fp16" (what --dtype takes back).
std::string dtype_name(c10::ScalarType dtype);
// ATTNLAB_DTYPE when set and not empty, else "fp32" (the --dtype option wins over both).
std::string default_dtype_spec();

// Whether this LibTorch runs a transformer's forward ops at `dtype` on `device`: runs each
// (linear, matmul, softmax, layer norm, GELU, conv2d, depthwise conv2d, batch norm, average
// pooling) once on a tiny tensor there. "" when all run, else why not, naming the first op that
// failed (e.g. LibTorch 1.13 has no fp16 matrix product on the CPU; on an AVX-512 CPU with
// ONEDNN_MAX_CPU_ISA=AVX2, ATen hands bf16 GELU to oneDNN, which then cannot build it).
// Probed once per (device, dtype). ATTNLAB_REFUSE_PRECISION=bf16[,fp16] makes it refuse
// those precisions whatever the CPU can do, saying so: how the tests exercise every path
// that follows a refusal on a machine where bf16 runs.
std::string precision_unsupported(c10::ScalarType dtype, const c10::Device& device);
// What the user is told when it refuses: "--dtype bf16 is not supported here: <why>; use
// --dtype fp32, or a CUDA device" ("" when `dtype` runs there). The one message every path
// gives: the CLI and the GUI (select_target), a model cast to it (Backbone::set_precision),
// the attention bench, and the tests, which skip with it.
std::string precision_refusal(c10::ScalarType dtype, const c10::Device& device);
// Throws std::invalid_argument(precision_refusal(...)) when `dtype` cannot run there.
void require_precision(c10::ScalarType dtype, const c10::Device& device);

// Where and at what precision a command's models run.
struct ComputeTarget {
  c10::Device device = c10::Device(c10::kCPU);
  c10::ScalarType dtype = c10::kFloat;
  bool reduced() const { return dtype != c10::kFloat; }
  std::string str() const;  // "cpu", "cpu bf16", "cuda:0 fp16"
};
// select_device(device) and parse_dtype(dtype), the pair refused with
// std::invalid_argument when precision_unsupported says so (the message names the op and
// says to use --dtype fp32 or another device).
ComputeTarget select_target(const std::string& device, const std::string& dtype);

// `t` as fp32 when it is held in a reduced precision (bf16, fp16), else `t` itself: what
// an SVD, FFT or CKA reads (LibTorch has none of them at bf16 on the CPU, and their
// results at 8 mantissa bits would be noise in the small singular values).
at::Tensor full_precision(const at::Tensor& t);

}  // namespace attnlab::runtime
