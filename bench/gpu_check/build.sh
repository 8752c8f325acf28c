#!/usr/bin/env bash
# Builds bench/gpu_check (see main.cpp) against the LibTorch of a Python torch install, without
# CMake, OpenCV or the GUI: the attention mechanisms, the runtime, the bench; into /tmp/gc.
# Usage on a machine with a GPU and a CUDA torch: bash bench/gpu_check/build.sh && /tmp/gc/gpucheck
# && /tmp/gc/gpucheck_presets. NLOHMANN=DIR names a folder holding nlohmann/json.hpp where the
# machine has none (the H200 run carried a copy of Debian's); STD=c++20 for a torch that needs it.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=python3
inc=$($py -c 'from torch.utils.cpp_extension import include_paths; print(" ".join("-I"+p for p in include_paths()))')
lib=$($py -c 'from torch.utils.cpp_extension import library_paths; print(library_paths()[0])')
abi=$($py -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
$py -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
cuda_inc=$($py -c 'import os, nvidia.cuda_runtime as m; print(os.path.join(list(m.__path__)[0], "include"))' 2>/dev/null || echo /usr/local/cuda/include)
std=${STD:-c++17}
flags="-std=$std -O2 -DNDEBUG -fPIC -D_GLIBCXX_USE_CXX11_ABI=$abi -DATTNLAB_VERSION=\"gpucheck\" -I. $inc -I$cuda_inc -I/usr/local/cuda/include -w"
mkdir -p /tmp/gc
srcs="$(ls core/attention/*.cpp) core/runtime/threads.cpp core/runtime/device.cpp core/runtime/precision.cpp core/runtime/memory_probe.cpp core/runtime/mac_counter.cpp core/runtime/device_peaks.cpp core/nn/initial_values.cpp core/analysis/table.cpp models/backbone.cpp app/session/attention_bench.cpp bench/gpu_check/main.cpp"
echo "$srcs" | tr ' ' '\n' | xargs -P 16 -I{} sh -c 'o=/tmp/gc/$(echo {} | tr / _).o; g++ '"$flags"' -c {} -o $o 2>/tmp/gc/$(echo {} | tr / _).err || { echo "COMPILE FAIL {}"; head -c 1500 /tmp/gc/$(echo {} | tr / _).err; }'
g++ $flags -fopenmp -c core/runtime/small_tasks.cpp -o /tmp/gc/small_tasks.o 2>&1 | head -c 1500
g++ $flags -DATTNLAB_WITH_CUDA=1 -c core/runtime/cuda_memory.cpp -o /tmp/gc/cuda_memory.o 2>&1 | head -c 3000
g++ -o /tmp/gc/gpucheck /tmp/gc/*.o -L$lib -Wl,-rpath,$lib -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -fopenmp -lpthread 2>&1 | head -c 3000
ls -la /tmp/gc/gpucheck
# The presets program: every backbone, from an archive of the models library and what it
# needs (core/io and core/nn; not image_io.cpp, the one file that needs OpenCV).
mkdir -p /tmp/gc/models
msrcs="$(ls models/*.cpp core/nn/*.cpp core/io/*.cpp core/image/*.cpp | grep -v -e image_io.cpp -e models/backbone.cpp -e initial_values.cpp)"
echo "$msrcs" | tr ' ' '\n' | xargs -P 16 -I{} sh -c 'o=/tmp/gc/models/$(echo {} | tr / _).o; g++ '"$flags"' -I${NLOHMANN:-.} -c {} -o $o 2>$o.err || { echo "COMPILE FAIL {}"; head -c 1500 $o.err; }'
ar rcs /tmp/gc/libmodels.a /tmp/gc/models/*.o
g++ $flags -I${NLOHMANN:-.} -c bench/gpu_check/presets.cpp -o /tmp/gc/presets.o 2>&1 | head -c 3000
g++ -o /tmp/gc/gpucheck_presets /tmp/gc/presets.o /tmp/gc/libmodels.a $(ls /tmp/gc/*.o | grep -v -e gpu_check_main -e /presets.o) -L$lib -Wl,-rpath,$lib -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -fopenmp -lpthread -l:libz.so.1 2>&1 | grep -v "^/usr/bin/ld: warning" | head -c 4000
ls -la /tmp/gc/gpucheck_presets
