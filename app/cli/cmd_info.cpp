// `attnlab info`: the runtime this build runs with — LibTorch version, thread count,
// where its data comes from, the devices it can run on, the device --device (or ATTNLAB_DEVICE)
// selects, which precisions (--dtype) run there, whether softmax attention is fused, and
// whether the GUI was built.
#include <cstdio>
#include <string>
#include <utility>

#include "app/cli/cli_common.h"
#include "app/cli/version.h"
#include "core/attention/fused_attention.h"
#include "core/runtime/allocator_tuning.h"
#include "core/runtime/bf16_products.h"
#include "core/runtime/cuda_memory.h"
#include "core/runtime/data_paths.h"
#include "core/runtime/device.h"
#include "core/runtime/memory_budget.h"
#include "core/runtime/precision.h"
#include "core/runtime/small_tasks.h"

namespace attnlab::cli {

int cmd_info(Args args, const GlobalOptions& g) {
  args.positionals();
  std::printf("%s\n", version_line().c_str());
  std::printf("executable: %s\n", runtime::executable_path().c_str());
  // Where the demo images, class names and zoo come from (runtime/data_paths.h).
  for (const auto& [name, dir] :
       {std::pair{"assets", runtime::assets_data_dir()}, std::pair{"zoo", runtime::zoo_data_dir()}})
    std::printf("%-7s %s%s(%s)\n", (std::string(name) + ":").c_str(), dir.path.c_str(),
                dir.path.empty() ? "" : " ", dir.origin.c_str());
  std::printf("runtime: %s\n", runtime::describe_runtime().c_str());
  std::printf("allocator: %s\n", runtime::tune_allocator().c_str());
  const runtime::MemoryBudget budget = runtime::memory_budget();
  std::printf("memory budget of a forward pass (--max-memory): %s\n",
              budget.limited() ? (runtime::format_bytes(static_cast<double>(budget.bytes)) + " (" +
                                  budget.origin + ")")
                                     .c_str()
              : budget.origin.empty() ? "no limit"
                                      : budget.origin.c_str());
  // Whether this build can run on CUDA at all, apart from whether a device is present now.
  const int cuda_devices = runtime::cuda_device_count();
  std::printf("CUDA: %s, %s\n", runtime::cuda_build_description().c_str(),
              cuda_devices > 0 ? (std::to_string(cuda_devices) + " device(s)").c_str()
                               : "no device");
  std::printf("devices:\n");
  for (const auto& d : runtime::available_devices())
    std::printf("  %-8s %s\n", d.spec.c_str(), d.description.c_str());
  const c10::Device device = runtime::select_device(g.device);
  std::printf("device (--device %s): %s\n", g.device.c_str(), device.str().c_str());
  // What --dtype can run there: each precision's probe (runtime::precision_unsupported).
  std::printf("precisions on %s (--dtype, now %s):\n", device.str().c_str(), g.dtype.c_str());
  for (const c10::ScalarType t : {c10::kFloat, c10::kBFloat16, c10::kHalf}) {
    const std::string why = runtime::precision_unsupported(t, device);
    std::printf("  %-5s %s\n", runtime::dtype_name(t).c_str(),
                why.empty() ? "runs" : ("refused: " + why).c_str());
  }
  // Whether softmax attention runs through the fused kernel when no matrix is needed.
  std::string fused = attention::fused_attention_description();
  if (attention::fused_attention_built() && !attention::fused_attention_enabled())
    fused += " (ATTNLAB_FUSED_ATTENTION=0)";
  std::printf("fused softmax attention: %s, %s\n",
              attention::fused_attention_enabled() ? "on" : "off", fused.c_str());
  // How the analyses' many small SVDs and transforms share the cores (runtime/small_tasks.h).
  std::printf("small analysis tasks: %s\n",
              runtime::small_tasks_side_by_side()
                  ? "side by side, one per LibTorch OpenMP thread"
                  : "in turn (LibTorch's LAPACK is MKL's, or its threads are not this build's "
                    "OpenMP runtime's)");
  // How bf16 matrix products add their terms on this CPU (core/runtime/bf16_products.h).
  std::printf("bf16 matrix products on the CPU: %s\n",
              runtime::bf16_products_description().c_str());
#ifdef ATTNLAB_HAVE_GUI
  std::printf("gui: built\n");
#else
  std::printf("gui: not built (GLFW/ImGui were not found at configure time)\n");
#endif
  return kExitOk;
}

}  // namespace attnlab::cli
