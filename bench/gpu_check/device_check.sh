#!/usr/bin/env bash
# The GPU check in one call on a GPU machine (16 cores, a CUDA torch, none of attnlab's other
# C++ libraries), with gpu-carry/ beside it (bench/gpu_check/carry.sh): builds the three GPU
# check programs and the CUDA tests against that torch (build.sh, GPU-check-only mode), runs
# the programs (run_all.sh: every mechanism, every preset, the session library on CUDA
# against the CPU for one model per family, at fp32 and bf16), then `ctest -L cuda`. Logs go
# to $OUT. Issue 65's budget for all of it: 8 minutes; the last line says what it took.
#   CUDA_TESTS_S  the CUDA tests' limit in seconds (default 150)
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d gpu-carry ] || { echo "device_check: no gpu-carry/ (run bench/gpu_check/carry.sh first and carry it)" >&2; exit 1; }
out=${OUT:-/tmp/gc_out}
mkdir -p "$out"
start=$(date +%s)
NLOHMANN=gpu-carry/nlohmann GTEST_SRC=gpu-carry/googletest SHARED=gpu-carry/shared \
  bash bench/gpu_check/run_all.sh
status=$?
t0=$(date +%s)
timeout "${CUDA_TESTS_S:-150}" ctest --test-dir "${BUILD:-/tmp/gc}" -L cuda -j 4 --output-on-failure \
  >"$out/ctest_cuda.log" 2>&1
rc=$?
echo "device_check: ctest -L cuda exit $rc in $(($(date +%s) - t0)) s$([ "$rc" = 124 ] && echo ' (time limit)')"
tail -15 "$out/ctest_cuda.log"
[ "$rc" = 0 ] || status=1
echo "device_check: all $(($(date +%s) - start)) s (issue 65: 480 s), exit $status"
exit $status
