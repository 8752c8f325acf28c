// Run-time device choice. CPU always works; CUDA is offered when the LibTorch found at
// configure time was built with it (e.g. the one inside a Python torch install, via
// CMAKE_PREFIX_PATH) and a GPU is present at run time.
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace attnlab::runtime {

bool cuda_available();
int cuda_device_count();

// "auto" (CUDA if available, else CPU), "cpu", "cuda" or "cuda:N". Throws
// std::invalid_argument with a message that says why (unknown name, no CUDA in this
// build / on this machine, index out of range).
c10::Device select_device(const std::string& spec);

// One line for status bars and --version: LibTorch version, threads, CUDA devices.
std::string describe_runtime();

// Every device this build can run on here, as --device names it: "cpu", then "cuda:0",
// "cuda:1", ... (what `attnlab info` lists and the GUI's device picker offers).
struct DeviceEntry {
  std::string spec;         // "cuda:0"
  std::string description;  // "CPU, 2 threads", "CUDA device 0"
};
std::vector<DeviceEntry> available_devices();

// The device asked for by the environment: ATTNLAB_DEVICE when set and not empty, else
// "auto" (the --device option wins over both).
std::string default_device_spec();

}  // namespace attnlab::runtime
