#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, attnlab_io only) and runs each for
# a given time. Crashing inputs are kept in fuzz-build/artifacts/; the summary of each
# run goes to fuzz-build/logs/<target>.log.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET=600] [TARGETS...]   (default: all four)
#   JOBS=2 runs two targets at a time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors pickle pth npy)
jobs="${JOBS:-1}"
shared="${ATTNLAB_SHARED:-$root/../shared}"
out="$root/fuzz-build"

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (apt-get install clang libclang-rt-dev)"; exit 1; }
CC=clang CXX=clang++ cmake -S "$root" -B "$out" -DATTNLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$out" -j2 >/dev/null

# Seed corpora: the parity fixtures, small hand-made archives and pickles, and every
# input that ever crashed a fuzzer.
mkdir -p "$out/artifacts/previous" "$out/logs" "$out/seeds"
# Crash inputs from earlier runs are kept aside (and belong in tests/fuzz/regressions/
# once fixed), so this run reports only what it finds itself.
for t in "${targets[@]}"; do
  find "$out/artifacts" -maxdepth 1 -name "$t-*" -exec mv {} "$out/artifacts/previous/" \;
done
"$out/tests/fuzz/fuzz_make_seeds" "$out/seeds"
for t in "${targets[@]}"; do mkdir -p "$out/corpus/$t"; done
cp -n "$shared"/fixtures/parity/castling_attn.safetensors "$shared"/fixtures/parity/hilo_padded.safetensors \
  "$out/corpus/safetensors/" 2>/dev/null || true
for t in pth pickle; do [ -d "$out/corpus/$t" ] && cp -n "$out"/seeds/{pth,pickle}_* "$out/corpus/$t/"; done
[ -d "$out/corpus/npy" ] && cp -n "$out"/seeds/npy_* "$out/corpus/npy/"
for t in safetensors pth; do [ -d "$out/corpus/$t" ] && cp -n "$root"/tests/fuzz/regressions/* "$out/corpus/$t/"; done
if [ -d "$out/corpus/pickle" ]; then  # the data.pkl of a real checkpoint
  python3 - "$shared/fixtures/parity/deit_mini.pth" "$out/corpus/pickle/deit_mini_data.pkl" <<'PY' || true
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
open(sys.argv[2], 'wb').write(z.read([n for n in z.namelist() if n.endswith('data.pkl')][0]))
PY
fi

run_one() {
  local t="$1"
  local bin="$out/tests/fuzz/fuzz_$t"
  "$bin" "$out/corpus/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 >"$out/logs/$t.log" 2>&1
  local rc=$?
  echo "fuzz_$t: exit $rc; $(grep -E '^(Done|stat::number_of_executed_units)' "$out/logs/$t.log" | tr '\n' ' ')"
  return $rc
}

status=0
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || status=1; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
if find "$out/artifacts" -maxdepth 1 -type f | grep -q .; then
  echo "crash inputs:"; find "$out/artifacts" -maxdepth 1 -type f; status=1
fi
exit $status
