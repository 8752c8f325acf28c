// `attnlab info`: the runtime this build runs with — LibTorch version, thread count,
// the devices it can run on, the device --device (or ATTNLAB_DEVICE) selects, and whether
// the GUI was built.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "core/runtime/device.h"

namespace attnlab::cli {

int cmd_info(Args args, const GlobalOptions& g) {
  args.positionals();
  std::printf("attnlab %s\n", ATTNLAB_VERSION);
  std::printf("runtime: %s\n", runtime::describe_runtime().c_str());
  std::printf("devices:\n");
  for (const auto& d : runtime::available_devices())
    std::printf("  %-8s %s\n", d.spec.c_str(), d.description.c_str());
  std::printf("device (--device %s): %s\n", g.device.c_str(),
              runtime::select_device(g.device).str().c_str());
#ifdef ATTNLAB_HAVE_GUI
  std::printf("gui: built\n");
#else
  std::printf("gui: not built (GLFW/ImGui were not found at configure time)\n");
#endif
  return kExitOk;
}

}  // namespace attnlab::cli
