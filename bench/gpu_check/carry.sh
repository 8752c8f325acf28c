#!/usr/bin/env bash
# Prepares, on the development machine, what the GPU machine lacks for the GPU check
# (bench/gpu_check/device_check.sh): a folder gpu-carry/ (git-ignored) with a copy of
# nlohmann-json's headers and of GoogleTest's sources (Debian's /usr/include/nlohmann,
# /usr/src/googletest) and the parity fixtures the CUDA tests read (../shared/fixtures/parity),
# about 32 MB. Then prints the one call to make. The device tool sends the working tree too,
# 64 MiB in all: with the model zoo (44 MB) that no longer fits, so ONLY_HEADERS=1 carries
# nlohmann's headers alone (1 MB) for `bench/gpu_check/run_all.sh` (the three programs, no
# CUDA tests), as the H200 run of 2026-11-30 did.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
carry="$root/gpu-carry"
shared="${SHARED:-$root/../shared}"
if [ "${ONLY_HEADERS:-0}" = 1 ]; then
  rm -rf "$carry" && mkdir -p "$carry/nlohmann" && cp -r /usr/include/nlohmann "$carry/nlohmann/"
  echo "carry: $(du -sh "$carry" | cut -f1) in $carry (headers only)"
  echo "carry: on the GPU machine: NLOHMANN=gpu-carry/nlohmann bash bench/gpu_check/run_all.sh"
  exit 0
fi
for need in /usr/include/nlohmann/json.hpp /usr/src/googletest/CMakeLists.txt "$shared/fixtures/parity"; do
  [ -e "$need" ] || { echo "carry: no $need (bash scripts/setup.sh installs the packages)" >&2; exit 1; }
done
rm -rf "$carry"
mkdir -p "$carry/nlohmann" "$carry/shared/fixtures"
cp -r /usr/include/nlohmann "$carry/nlohmann/"
cp -r /usr/src/googletest "$carry/googletest"
cp -r "$shared/fixtures/parity" "$carry/shared/fixtures/"
echo "carry: $(du -sh "$carry" | cut -f1) in $carry"
echo "carry: on the GPU machine (device tool: run with carry [\"gpu-carry\"]):"
echo "  bash bench/gpu_check/device_check.sh"
