#!/usr/bin/env bash
# The test command: install what is missing, build everything, run every test (unit,
# parity against ../shared/fixtures, CLI, and the GUI under Xvfb).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
start=$(date +%s)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
build="${ATTNLAB_BUILD_DIR:-$root/build}"
cd "$build"
# -LE perf: timed benchmarks (gui_frame_time) are not tests; run them with ctest -L perf.
ctest --output-on-failure -j "$(nproc)" --timeout 600 -LE perf
echo "test.sh: finished in $(( $(date +%s) - start )) s"
