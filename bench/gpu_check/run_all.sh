#!/usr/bin/env bash
# The GPU check in one call, for a session lent a GPU machine (a CUDA torch, 16 cores, none
# of attnlab's other C++ libraries): builds the three programs (build.sh) and runs them
# under one time budget, each log into $OUT (the device tool's output folder; /tmp/gc_out
# elsewhere), then prints the build and run times, the failures and each program's summary.
#   bash bench/gpu_check/run_all.sh            # from the repository root
# Environment: NLOHMANN=DIR a folder with nlohmann/json.hpp (a copy of Debian's
# /usr/include/nlohmann carried along: the GPU machine has none); SESSION_MODELS=NAME@SIZE,...
# (default: every family, as attnlab_gpucheck_session's own list); CHECK_S, SESSION_S and
# PRESETS_S (defaults 120, 330 and 120 s) bound each program, and SESSION_MODEL_S (120 s) each
# model of the session check, so that a failure or a stall in one still leaves the others'
# logs. The order is the check, the session, the presets: the
# presets were measured before (docs/BENCHMARKS.md) and come last. Issue 51's budget is 8
# minutes for the build and the session check, which the last line adds up.
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
run attnlab_gpucheck "${CHECK_S:-120}"
# The session check one model per process, each under its own limit and all under
# SESSION_S, into one log: a model that stalls (RAVLT's and CLIP's rank did on the H200)
# then costs its own limit, not the models after it, and leaves its threads' stacks in
# $OUT/session_stacks.log.
models=${SESSION_MODELS:-$("$bin/attnlab_gpucheck_session" --default-models)}
s0=$(date +%s)
: >"$out/attnlab_gpucheck_session.log"
IFS=, read -ra model_list <<<"$models"
for model in "${model_list[@]}"; do
  left=$((${SESSION_S:-330} - ($(date +%s) - s0)))
  if [ "$left" -le 5 ]; then
    echo "run_all: session check: no time left for $model (SESSION_S)" | tee -a "$out/attnlab_gpucheck_session.log"
    status=1
    continue
  fi
  limit=$((left < ${SESSION_MODEL_S:-120} ? left : ${SESSION_MODEL_S:-120}))
  t0=$(date +%s)
  "$bin/attnlab_gpucheck_session" --repeats 1 --models "$model" \
    >>"$out/attnlab_gpucheck_session.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ $(($(date +%s) - t0)) -lt "$limit" ]; do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    # At its limit: every thread's stack (the GPU machine has cuda-gdb, not gdb) into
    # session_stacks.log, then stop it; exit 124 as timeout's.
    dbg=$(command -v gdb || command -v cuda-gdb)
    if [ -n "$dbg" ]; then
      echo "== $model at its limit, $(date -u +%T)" >>"$out/session_stacks.log"
      timeout 60 "$dbg" -p "$pid" -batch -ex "thread apply all bt 30" >>"$out/session_stacks.log" 2>&1
    fi
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=124
  else
    wait "$pid"
    rc=$?
  fi
  echo "run_all: session $model exit $rc in $(($(date +%s) - t0)) s$([ "$rc" = 124 ] && echo " (its limit, ${limit} s), stopped in: $(grep '^-- ' "$out/attnlab_gpucheck_session.log" | tail -1)")"
  [ "$rc" = 0 ] || status=1
done
session_s=$(($(date +%s) - s0))
run attnlab_gpucheck_presets "${PRESETS_S:-120}"
echo "run_all: build $((built - start)) s + session check $session_s s = $((built - start + session_s)) s (issue 51: 480 s); all $(($(date +%s) - start)) s"
grep -hE "FAIL|ERROR|failing|fused|== |gpucheck_session:|outputs judged" "$out"/attnlab_gpucheck*.log | tail -60
exit $status
