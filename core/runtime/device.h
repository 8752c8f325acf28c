// Run-time device choice. CPU always works; CUDA is offered when the LibTorch found at
// configure time was built with it (e.g. the one inside a Python torch install, via
// CMAKE_PREFIX_PATH) and a GPU is present at run time.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace attnlab::runtime {

bool cuda_available();
int cuda_device_count();

// "auto" (CUDA if available, else CPU), "cpu", "cuda" or "cuda:N". Throws
// std::invalid_argument with a message that says why (unknown name, no CUDA in this
// build / on this machine, index out of range).
c10::Device select_device(const std::string& spec);

// One line for status bars and --version: LibTorch version, threads, CUDA devices.
std::string describe_runtime();

}  // namespace attnlab::runtime
