#!/usr/bin/env bash
# Installs every Debian 12 package attnlab needs to build, test and run — only what is
# missing, so a second run does nothing. Then makes sure LibTorch's BLAS is OpenBLAS
# (OpenMP): with Debian's reference BLAS, CPU matmuls run 7–10x slower (measured).
set -euo pipefail

packages=(
  build-essential cmake ninja-build lld pkg-config ccache python3
  libtorch-dev libopenblas0-openmp libopencv-dev nlohmann-json3-dev zlib1g-dev
  libglfw3-dev libimgui-dev libgl-dev libcairo2-dev libdeflate-dev libpng-dev fonts-dejavu-core
  libxml2-utils poppler-utils
  pybind11-dev python3-dev python3-numpy python3-pytest
  libgtest-dev libgmock-dev libbenchmark-dev
  xvfb xauth libgl1-mesa-dri bash-completion time procps
  slurmctld slurmd slurm-client munge  # tests/cluster/local_slurm.sh: a throwaway Slurm
  dataset-fashion-mnist
  libeigen3-dev python3-sklearn umap-learn  # core/projection; the latter two: test-time references
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi

blas=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
if [ -e "$blas" ] && update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | grep -q "^Value: $blas$"; then
  :
elif [ -e "$blas" ]; then
  echo "setup: selecting OpenBLAS (OpenMP) as the system BLAS"
  as_root update-alternatives --set libblas.so.3-x86_64-linux-gnu "$blas"
fi
