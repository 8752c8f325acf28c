#!/usr/bin/env bash
# Configures and builds attnlab in ./build (or $ATTNLAB_BUILD_DIR). Extra arguments go
# to the build tool, e.g. `bash scripts/build.sh attnlab` for the executable alone.
# Configure against another LibTorch (e.g. a CUDA one from a Python torch install) with
#   CMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') bash scripts/build.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ATTNLAB_BUILD_DIR:-$root/build}"
jobs="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout in ccache's hashes, so a fresh clone elsewhere (CI) reuses
# what an earlier build compiled (debug info then names the first checkout's folder).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
# The precompiled header (cmake/BuildSpeed.cmake) is cacheable only with these: ccache then
# hashes the .gch itself; a fresh clone's files are all new, which mtime/ctime would refuse.
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
# Ninja for a new build folder (it schedules the two cores better than make and keeps
# .ninja_log, the per-unit compile times that scripts/build_times.py lists); an existing
# folder keeps the generator it was configured with.
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs" ${1:+--target "$@"}
