#!/usr/bin/env bash
# Builds the GPU check (bench/gpu_check: attnlab_gpucheck from main.cpp, attnlab_gpucheck_presets
# from presets.cpp, attnlab_gpucheck_session from session.cpp) against the LibTorch of a Python
# torch install, on a machine that has none of attnlab's other C++ libraries (OpenCV, cairo,
# GLFW, ImGui, GoogleTest, Google Benchmark). It is CMake's GPU-check-only mode
# (ATTNLAB_GPU_CHECK_ONLY=ON): the same source lists as every other build, less the files that
# need OpenCV or cairo (image decoding; the analyses' figures), with LibTorch given as paths
# computed here from python3 (cmake/TorchFromPaths.cmake) because find_package(Torch) on a pip
# torch often trips over the CUDA toolkit. Into /tmp/gc, with Ninja. Needs python3 with torch,
# cmake >= 3.22 and ninja (`pip install cmake ninja` is enough), g++, zlib's header, and for a
# CUDA torch the CUDA runtime's headers (the nvidia wheel's, or nvcc's toolkit).
# Usage on a machine with a GPU and a CUDA torch:
#   bash bench/gpu_check/build.sh && /tmp/gc/bench/gpu_check/attnlab_gpucheck \
#     && /tmp/gc/bench/gpu_check/attnlab_gpucheck_presets \
#     && /tmp/gc/bench/gpu_check/attnlab_gpucheck_session
# NLOHMANN=DIR names a folder holding nlohmann/json.hpp where the machine has no nlohmann-json
# (the H200 run carried a copy of Debian's); GTEST_SRC=DIR a GoogleTest source tree and
# SHARED=DIR the shared fixtures folder, to build the CUDA tests (tests/cuda) as well;
# STD=c++20 for a torch that needs it; BUILD=DIR
# another build folder; PYTHON=... another Python; JOBS=N; CMAKE_ARGS="..." more for cmake.
# Without a CUDA device each program says "no CUDA device" and exits 77; `ctest --test-dir
# /tmp/gc` checks exactly that (with CUDA hidden, so it is quick on a GPU machine too), and runs
# attnlab_gpucheck_session --self-test on one small model (the CPU against the CPU, ~20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
build=${BUILD:-/tmp/gc}
$py -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)'
# One line each: include folders (;-separated, for CMake), library folder, C++ ABI, CUDA ON/OFF.
mapfile -t torch_paths < <($py - <<'EOF'
import glob, os
import torch
from torch.utils import cpp_extension as ce
inc = list(ce.include_paths())
cuda = torch.version.cuda is not None
if cuda:
    # c10/cuda's headers include the CUDA runtime's: first the nvidia wheel's that came with
    # this torch (its CUDA version), then the toolkit's.
    found = []
    try:
        import nvidia
        for p in nvidia.__path__:
            found += sorted(glob.glob(os.path.join(p, "*", "include")))
    except ImportError:
        pass
    home = getattr(ce, "CUDA_HOME", None)
    found += [os.path.join(home, "include")] if home else []
    found += ["/usr/local/cuda/include"]
    api = [d for d in found if os.path.isfile(os.path.join(d, "cuda_runtime_api.h"))]
    inc += api[:1]
    # cuda_runtime.h includes crt/host_config.h, which CUDA 13's runtime wheel (nvidia/cu13)
    # lacks (the H200 run of 2026-11-27 stopped there): nvcc's folder that has it, too.
    host = [d for d in found if os.path.isfile(os.path.join(d, "crt", "host_config.h"))]
    inc += [d for d in host[:1] if d not in api[:1]]
print(";".join(dict.fromkeys(inc)))
print(ce.library_paths()[0])
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("ON" if cuda else "OFF")
EOF
)
[ "${#torch_paths[@]}" = 4 ] || { echo "gpu_check: could not read torch's paths from $py" >&2; exit 1; }
args=(-DATTNLAB_GPU_CHECK_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
      "-DATTNLAB_TORCH_INCLUDE_DIRS=${torch_paths[0]}" "-DATTNLAB_TORCH_LIBRARY_DIR=${torch_paths[1]}"
      "-DATTNLAB_TORCH_CXX11_ABI=${torch_paths[2]}" "-DATTNLAB_TORCH_CUDA=${torch_paths[3]}")
[ -n "${NLOHMANN:-}" ] && args+=("-DATTNLAB_NLOHMANN_INCLUDE_DIR=$(cd "$NLOHMANN" && pwd)")
[ -n "${STD:-}" ] && args+=("-DCMAKE_CXX_STANDARD=${STD#c++}")
# The CUDA tests (tests/cuda) too, from a GoogleTest source tree and the parity fixtures
# (bench/gpu_check/carry.sh brings both: the GPU machine has neither).
[ -n "${GTEST_SRC:-}" ] && args+=("-DATTNLAB_GTEST_SOURCE_DIR=$(cd "$GTEST_SRC" && pwd)")
[ -n "${SHARED:-}" ] && args+=("-DATTNLAB_SHARED_DIR=$(cd "$SHARED" && pwd)")
# A machine with zlib's runtime but not its development link (libz.so): name libz.so.1.
if ! ldconfig -p 2>/dev/null | awk '$1 == "libz.so" {f = 1} END {exit !f}'; then
  z=$(ldconfig -p 2>/dev/null | awk '$1 == "libz.so.1" {print $NF; exit}')
  [ -n "$z" ] && args+=("-DZLIB_LIBRARY=$z")
fi
generator=()
[ -f "$build/CMakeCache.txt" ] || generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" "${args[@]}" ${CMAKE_ARGS:-}
cmake --build "$build" -j "${JOBS:-$(nproc)}"
echo "gpu_check: built $build/bench/gpu_check/attnlab_gpucheck"
echo "gpu_check: built $build/bench/gpu_check/attnlab_gpucheck_presets"
echo "gpu_check: built $build/bench/gpu_check/attnlab_gpucheck_session"
