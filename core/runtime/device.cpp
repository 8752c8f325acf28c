#include "core/runtime/device.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include <cstdlib>
#include <stdexcept>

#include "core/runtime/threads.h"

namespace attnlab::runtime {

bool cuda_available() {
  return torch::cuda::is_available();
}
int cuda_device_count() {
  return cuda_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

c10::Device select_device(const std::string& spec) {
  if (spec == "auto") return cuda_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (spec == "cpu") return c10::Device(c10::kCPU);
  if (spec == "cuda" || spec.rfind("cuda:", 0) == 0) {
    if (!cuda_available())
      throw std::invalid_argument(
          "device '" + spec +
          "' requested but CUDA is not available (this LibTorch has no CUDA, "
          "or no GPU is visible); use --device cpu (or unset ATTNLAB_DEVICE)");
    int index = 0;
    if (spec.size() > 5) {
      try {
        size_t used = 0;
        index = std::stoi(spec.substr(5), &used);
        if (used != spec.size() - 5) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw std::invalid_argument("bad device index in '" + spec + "' (expected cuda:N)");
      }
    }
    if (index < 0 || index >= cuda_device_count())
      throw std::invalid_argument("device '" + spec +
                                  "' out of range: " + std::to_string(cuda_device_count()) +
                                  " CUDA device(s) (--device, ATTNLAB_DEVICE)");
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw std::invalid_argument(
      "unknown device '" + spec +
      "' (expected auto, cpu, cuda or cuda:N; from --device or ATTNLAB_DEVICE)");
}

std::string describe_runtime() {
  std::string s = "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
                  std::to_string(TORCH_VERSION_MINOR) + ", " + std::to_string(current_threads()) +
                  " CPU thread(s), ";
  int n = cuda_device_count();
  s += n > 0 ? std::to_string(n) + " CUDA device(s)" : "no CUDA device";
  return s;
}

std::vector<DeviceEntry> available_devices() {
  std::vector<DeviceEntry> out{{"cpu", "CPU, " + std::to_string(current_threads()) + " thread(s)"}};
  for (int i = 0; i < cuda_device_count(); ++i)
    out.push_back({"cuda:" + std::to_string(i), "CUDA device " + std::to_string(i)});
  return out;
}

std::string default_device_spec() {
  const char* env = std::getenv("ATTNLAB_DEVICE");
  return env && *env ? std::string(env) : std::string("auto");
}

}  // namespace attnlab::runtime
