#!/usr/bin/env bash
# Prepares, on the development machine, what the GPU machine lacks for the GPU check
# (bench/gpu_check/device_check.sh): a folder gpu-carry/ (git-ignored) with a copy of
# nlohmann-json's headers and of GoogleTest's sources (Debian's /usr/include/nlohmann,
# /usr/src/googletest) and the parity fixtures the CUDA tests read (../shared/fixtures/parity),
# about 32 MB, under the device tool's 64 MiB carry limit. Then prints the one call to make.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
carry="$root/gpu-carry"
shared="${SHARED:-$root/../shared}"
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
