#!/usr/bin/env bash
# A CUDA build of attnlab in build-cuda/, against a CUDA-enabled LibTorch you point to
# (Debian's libtorch is CPU-only). Then `ctest --test-dir build-cuda -L cuda` runs the
# CUDA tests: parity of the reference fixtures on CUDA against the CPU, every mechanism's
# forward and rows, the GUI's device picker.
#
# Usage:
#   bash scripts/build_cuda.sh --torch DIR     an unpacked LibTorch (the folder holding
#                                              share/cmake/Torch), or
#   bash scripts/build_cuda.sh --python PY     a Python whose `import torch` is a CUDA
#                                              build (torch.utils.cmake_prefix_path)
#   [--cuda-home DIR]   the CUDA toolkit (default: $CUDA_HOME, else the nvcc on PATH)
#   [--jobs N]          parallel compile jobs (default: all cores)
#
# Checks before configuring, each with a message that says what to change: the LibTorch
# exists and was built with CUDA, nvcc exists, and the toolkit's CUDA major.minor is the
# one LibTorch was built with (a mismatch builds but fails at run time or link time).
# Not run on the project's machines (none has a GPU): see README, "CUDA".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
torch_dir="" python="" cuda_home="${CUDA_HOME:-}" jobs="$(nproc)"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --torch) torch_dir="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --cuda-home) cuda_home="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build_cuda: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "build_cuda: $*" >&2; exit 1; }

# Where LibTorch is, and the CUDA version it was built with.
torch_cuda=""
if [[ -n "$python" ]]; then
  command -v "$python" >/dev/null || die "no Python '$python'"
  read -r prefix torch_cuda < <("$python" -c 'import torch, torch.utils
print(torch.utils.cmake_prefix_path, torch.version.cuda or "none")') ||
    die "'$python' cannot import torch"
  torch_dir="$prefix"
  [[ "$torch_cuda" != none ]] || die "the torch of '$python' is a CPU-only build (torch.version.cuda is None)"
elif [[ -n "$torch_dir" ]]; then
  [[ -d "$torch_dir" ]] || die "no folder '$torch_dir'"
  # An unpacked LibTorch says its CUDA in build-version ("2.1.0+cu121") and in its CMake files.
  if [[ -f "$torch_dir/build-version" ]]; then
    v=$(cat "$torch_dir/build-version")
    [[ "$v" == *+cu* ]] && torch_cuda=$(echo "${v##*+cu}" | sed -E 's/^([0-9]+)([0-9])$/\1.\2/')
  fi
  if [[ -z "$torch_cuda" ]]; then
    torch_cuda=$(grep -hoE 'CUDA_VERSION[^0-9]*[0-9]+\.[0-9]+' \
      "$torch_dir"/share/cmake/Caffe2/Caffe2Config.cmake 2>/dev/null | grep -oE '[0-9]+\.[0-9]+' | head -1 || true)
  fi
  [[ -n "$torch_cuda" ]] || die "'$torch_dir' does not look like a CUDA LibTorch (no +cuXXX in build-version, no CUDA_VERSION in its CMake files)"
  torch_dir="$torch_dir/share/cmake"
else
  die "say where a CUDA LibTorch is: --torch DIR or --python PY (see --help)"
fi
[[ -f "$torch_dir/Torch/TorchConfig.cmake" ]] || die "no Torch/TorchConfig.cmake under '$torch_dir'"

# The toolkit, and its version against LibTorch's.
nvcc="nvcc"
[[ -n "$cuda_home" ]] && nvcc="$cuda_home/bin/nvcc"
command -v "$nvcc" >/dev/null || die "no nvcc (install the CUDA toolkit $torch_cuda, or pass --cuda-home)"
toolkit=$("$nvcc" --version | grep -oE 'release [0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+')
[[ "$toolkit" == "$torch_cuda" ]] ||
  die "nvcc is CUDA $toolkit but LibTorch was built with CUDA $torch_cuda: install that toolkit (--cuda-home) or a LibTorch for $toolkit"
echo "build_cuda: LibTorch at $torch_dir (CUDA $torch_cuda), nvcc CUDA $toolkit"

bash "$root/scripts/setup.sh"  # the other packages (OpenCV, GLFW, cairo, GoogleTest, ...)
cmake -S "$root" -B "$root/build-cuda" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_dir" ${cuda_home:+-DCUDAToolkit_ROOT="$cuda_home"} >/dev/null
cmake --build "$root/build-cuda" -j "$jobs"
"$root/build-cuda/app/attnlab" info
echo "build_cuda: built; run the CUDA tests with: ctest --test-dir $root/build-cuda -L cuda"
