#!/usr/bin/env bash
# The PyTorch 2.x world's test command (README, "Two LibTorch worlds"): a virtual environment
# .venv-pytorch/ with PyPI's torch (the version pinned in scripts/pytorch-requirements.txt,
# built for the CUDA of this machine's nvcc), everything built against the LibTorch inside it
# with CUDA compiled in (build-pytorch/: CLI, GUI, Python module, tests, benches, the GPU
# check), then the whole test suite on the CPU (the CUDA tests skip without a device), the
# Python module installed into the environment with `pip install . --no-build-isolation` and
# tested there beside torch. Prints how long each phase took. pip's download cache
# (~/.cache/pip) is kept, so a second run on the machine downloads nothing.
#   PYTHON=...   the interpreter the environment is made from (default: python3)
#   JOBS=N       parallel compile jobs (default: all cores)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-pytorch"
build="$root/build-pytorch"
start=$(date +%s)
die() { echo "test_pytorch: $*" >&2; exit 1; }

bash "$root/scripts/setup.sh"  # OpenCV, GLFW, cairo, GoogleTest, ... (as scripts/test.sh)
t_setup=$(date +%s)

# The environment and the pinned packages (pip does nothing when they are installed).
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv" || die "could not create $venv with ${PYTHON:-python3} -m venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/scripts/pytorch-requirements.txt"
read -r torch_version torch_cuda < <("$venv/bin/python" -c '
import torch
print(torch.__version__, torch.version.cuda or "none")') || die "the environment cannot import torch"
t_pip=$(date +%s)

# CUDA: the toolkit's nvcc must be the CUDA torch was built with (a mismatch configures,
# then fails to link or at run time). PyPI's torch for this machine's CUDA 13.0 exists
# (pytorch-requirements.txt says which), so the nvidia-cuda-nvcc wheel is not needed here.
[ "$torch_cuda" != none ] || die "torch $torch_version is a CPU-only build; pin a CUDA one in scripts/pytorch-requirements.txt"
nvcc="${CUDA_HOME:+$CUDA_HOME/bin/}nvcc"
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
[ -x "$(command -v "$nvcc")" ] || die "no nvcc: install the CUDA toolkit $torch_cuda (or set CUDA_HOME)"
toolkit=$("$nvcc" --version | grep -oE 'release [0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+')
[ "$toolkit" = "$torch_cuda" ] ||
  die "nvcc is CUDA $toolkit but torch $torch_version was built with CUDA $torch_cuda: pin a torch for CUDA $toolkit in scripts/pytorch-requirements.txt, or pip install nvidia-cuda-nvcc==$torch_cuda.* and set CUDA_HOME to it"
echo "test_pytorch: torch $torch_version (CUDA $torch_cuda), nvcc $(command -v "$nvcc") (CUDA $toolkit)"

# Configure and build everything. LibTorch is the environment's torch, found by the one
# mechanism pip install . uses too (python/TorchFromPython.cmake: its folder first in the
# prefix path, before /usr/lib's Debian LibTorch 1.13, which CMakeLists.txt refuses to mix).
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
ATTNLAB_BUILD_DIR="$build" \
CMAKE_ARGS="-DATTNLAB_TORCH_FROM_PYTHON=ON -DPython_EXECUTABLE=$venv/bin/python \
-Dpybind11_DIR=$("$venv/bin/python" -m pybind11 --cmakedir) \
-DCUDAToolkit_ROOT=$(dirname "$(dirname "$(command -v "$nvcc")")") ${CMAKE_ARGS:-}" \
  bash "$root/scripts/build.sh"
"$build/app/attnlab" info | sed 's/^/  /'
"$build/app/attnlab" info | grep -q "^CUDA: compiled in" || die "attnlab info does not say CUDA is compiled in"
t_build=$(date +%s)

# Every test, on the CPU through this LibTorch (ctest -LE perf as scripts/test.sh), less
# those labelled torch_free (no LibTorch in them: the Debian world runs them).
rc=0
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600 -LE 'perf|torch_free') || rc=$?
python3 "$root/scripts/skip_summary.py" "$build" || true  # what was skipped, and why
[[ $rc == 0 ]] || die "ctest failed (exit $rc)"
t_test=$(date +%s)

# `import attnlab` as a user installs it beside their torch.
bash "$root/scripts/test_pip_install.sh" "$venv/bin/python"
t_pipinstall=$(date +%s)

echo "test_pytorch: set-up $((t_setup - start)) s, pip $((t_pip - t_setup)) s," \
  "build $((t_build - t_pip)) s, tests $((t_test - t_build)) s," \
  "pip install . $((t_pipinstall - t_test)) s"
echo "test_pytorch: finished in $((t_pipinstall - start)) s"
