// `attnlab inspect FILE`: what is inside a tensor file — format, the container's
// top-level keys (for .pth training checkpoints), metadata, what was skipped, and every
// tensor's name, dtype and shape; `--stats` adds min/max/mean/std and NaN/Inf counts.
// `--json` prints the same as JSON for scripts.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "core/io/io_error.h"
#include "core/io/tensor_file.h"
#include "core/io/tensor_stats.h"
#include "models/checkpoint_summary.h"

namespace attnlab::cli {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// 5717416 -> "5,717,416".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void print_text(const io::TensorFile& f, const models::CheckpointSummary& sum, bool stats) {
  std::printf("%s\n  format: %s\n", f.path.c_str(), io::file_format_name(f.format));
  if (!f.container.empty()) {
    std::printf("  container keys:\n");
    for (const auto& e : f.container)
      std::printf("    %-24s %-11s %s\n", e.key.c_str(), e.kind.c_str(), e.summary.c_str());
  }
  if (!f.metadata.empty()) {
    std::printf("  metadata:\n");
    for (const auto& [k, v] : f.metadata) std::printf("    %s = %s\n", k.c_str(), v.c_str());
  }
  for (const auto& n : f.notes) std::printf("  note: %s\n", n.c_str());
  if (f.format == io::FileFormat::Safetensors || f.format == io::FileFormat::TorchZip)
    std::printf("  architecture (from key names): %s; weights: %s; %s parameters\n",
                sum.architecture.c_str(),
                sum.weights_key.empty() ? "flat" : ("'" + sum.weights_key + "'").c_str(),
                grouped(sum.parameter_count).c_str());
  size_t width = 4;
  for (const auto& e : f.tensors) width = std::max(width, e.name.size());
  std::printf("  tensors (%zu):\n", f.tensors.size());
  for (const auto& n : sum.non_finite)
    std::printf("  WARNING: '%s' holds NaN or Inf values\n", n.c_str());
  if (stats)
    std::printf("    %-*s %-5s %-18s %12s %12s %12s %12s %s\n", int(width), "name", "dtype",
                "shape", "min", "max", "mean", "std", "non-finite");
  for (const auto& e : f.tensors) {
    std::printf("    %-*s %-5s %-18s", int(width), e.name.c_str(), io::dtype_name(e.tensor.dtype),
                shape_text(e.tensor.shape).c_str());
    if (stats) {
      io::TensorStats st = io::compute_stats(e.tensor);
      std::printf(" %12.5g %12.5g %12.5g %12.5g", st.min, st.max, st.mean, st.stddev);
      if (st.has_non_finite())
        std::printf(" %lld NaN, %lld Inf", (long long)st.nan, (long long)st.inf);
    }
    std::printf("\n");
  }
}

void print_json(const io::TensorFile& f, const models::CheckpointSummary& sum, bool stats) {
  nlohmann::ordered_json j;
  j["path"] = f.path;
  j["format"] = io::file_format_name(f.format);
  j["architecture"] = sum.architecture;
  j["weights_key"] = sum.weights_key;
  j["parameters"] = sum.parameter_count;
  j["container"] = nlohmann::ordered_json::array();
  for (const auto& e : f.container)
    j["container"].push_back(
        {{"key", e.key}, {"kind", e.kind}, {"summary", e.summary}, {"tensors", e.tensor_count}});
  j["metadata"] = f.metadata;
  j["notes"] = f.notes;
  j["tensors"] = nlohmann::ordered_json::array();
  j["non_finite"] = sum.non_finite;
  for (const auto& e : f.tensors) {
    nlohmann::ordered_json t = {
        {"name", e.name}, {"dtype", io::dtype_name(e.tensor.dtype)}, {"shape", e.tensor.shape}};
    if (stats) {
      io::TensorStats st = io::compute_stats(e.tensor);
      t["stats"] = {{"min", st.min},    {"max", st.max}, {"mean", st.mean},
                    {"std", st.stddev}, {"nan", st.nan}, {"inf", st.inf}};
    }
    j["tensors"].push_back(t);
  }
  std::cout << j.dump(2) << "\n";
}

}  // namespace

int cmd_inspect(Args args, const GlobalOptions&) {
  bool json = args.take_flag("--json");
  bool stats = args.take_flag("--stats");
  std::vector<std::string> files = args.positionals();
  if (files.empty()) throw UsageError("inspect needs a FILE (safetensors, .pth, .npy or IDX)");
  int rc = kExitOk;
  for (const auto& path : files) {
    try {
      io::TensorFile f = io::read_tensor_file(path);
      models::CheckpointSummary sum = models::summarize_checkpoint(f);
      json ? print_json(f, sum, stats) : print_text(f, sum, stats);
    } catch (const io::IoError& e) {
      std::fprintf(stderr, "attnlab: error: %s [%s]\n", e.what(), io::io_error_kind_name(e.kind()));
      rc = kExitFailure;
    }
  }
  return rc;
}

}  // namespace attnlab::cli
