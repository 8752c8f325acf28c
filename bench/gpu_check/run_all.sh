#!/usr/bin/env bash
# The GPU check in one call, for a session lent a GPU machine (a CUDA torch, 16 cores, none
# of attnlab's other C++ libraries): builds the three programs (build.sh) and runs them
# under one time budget, each log into $OUT (the device tool's output folder; /tmp/gc_out
# elsewhere), then prints the build and run times, the failures and each program's summary.
#   bash bench/gpu_check/run_all.sh            # from the repository root
# Environment: NLOHMANN=DIR a folder with nlohmann/json.hpp (a copy of Debian's
# /usr/include/nlohmann carried along: the GPU machine has none); SESSION_MODELS=NAME@SIZE,...
# (default: every family, as attnlab_gpucheck_session's own list); SESSION_S (default 330)
# and the other programs' limits (120 s each) bound the run, so that a failure or a stall in
# one still leaves the others' logs. Issue 51's budget is 8 minutes for build and run.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gc_out}
mkdir -p "$out"
start=$(date +%s)
if ! JOBS=${JOBS:-$(nproc)} bash bench/gpu_check/build.sh >"$out/build.log" 2>&1; then
  echo "run_all: the build failed ($out/build.log):"
  tail -40 "$out/build.log"
  exit 1
fi
built=$(date +%s)
echo "run_all: built in $((built - start)) s"
bin=${BUILD:-/tmp/gc}/bench/gpu_check
status=0
run() {  # NAME LIMIT_S ARGS...: one program into $out/NAME.log
  local name=$1 limit=$2 t0 rc
  shift 2
  t0=$(date +%s)
  timeout "$limit" "$bin/$name" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "run_all: $name exit $rc in $(($(date +%s) - t0)) s$([ "$rc" = 124 ] && echo ' (time limit)')"
  [ "$rc" = 0 ] || status=1
}
run attnlab_gpucheck 120
run attnlab_gpucheck_presets 120
session_args=(--repeats 1)
[ -n "${SESSION_MODELS:-}" ] && session_args+=(--models "$SESSION_MODELS")
run attnlab_gpucheck_session "${SESSION_S:-330}" "${session_args[@]}"
echo "run_all: build and run $(($(date +%s) - start)) s"
grep -hE "FAIL|ERROR|failing|fused|== |gpucheck_session:|outputs judged" "$out"/attnlab_gpucheck*.log | tail -60
exit $status
