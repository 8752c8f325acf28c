#!/usr/bin/env bash
# Builds attnlab with clang and a sanitizer into its own folder and runs the tests there.
#   bash scripts/sanitize.sh asan [CTEST_REGEX]   ASan + UBSan (+ LSan): every test
#   bash scripts/sanitize.sh tsan [CTEST_REGEX]   TSan: the tests of our own threads (the
#                                                 workers, GUI utilities, GUI scripts)
# Build folders: build-asan/, build-tsan/. The whole ctest log goes to
# build-<mode>/sanitize.log, each sanitizer report to build-<mode>/reports/; the summary
# line counts them. Not part of CI (a full asan run takes far longer than CI's budget);
# results are recorded in docs/RELIABILITY.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
filter="${2:-}"
# slow: how many times longer than a normal build the GUI and reliability scripts may take
# (their limits, ATTNLAB_SCRIPT_WAIT_SCALE, and ctest's, ATTNLAB_TEST_TIMEOUT_SCALE). The
# first full asan run, without them, stopped the GUI tour at one of its 180 s waits.
case "$mode" in
  asan) sanitize=address slow=5 ;;
  tsan) sanitize=thread slow=10 ;;
  *) echo "usage: bash scripts/sanitize.sh asan|tsan [CTEST_REGEX]" >&2; exit 2 ;;
esac
command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ is needed (apt-get install clang)" >&2; exit 1; }
bash "$root/scripts/setup.sh"
build="$root/build-$mode"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTNLAB_SANITIZE="$sanitize" -DATTNLAB_BENCH=OFF -DATTNLAB_TEST_TIMEOUT_SCALE="$slow" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"

reports="$build/reports"
rm -rf "$reports"
mkdir -p "$reports"
supp="$root/tests/sanitize"
# log_path: one report file per process, so parallel tests do not interleave.
# detect_container_overflow=0: std::vector annotations need every library instrumented;
# LibTorch's are not, and an uninstrumented push_back then looks like an overflow.
export ASAN_OPTIONS="log_path=$reports/asan:detect_container_overflow=0:detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
export ATTNLAB_SCRIPT_WAIT_SCALE="$slow"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
# ignore_noninstrumented_modules: LibTorch and its OpenMP runtime are not built with TSan;
# their own synchronisation is invisible to it, so their accesses would only give false
# reports (TSan says so at start-up when this is missing).
export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$supp/tsan.supp:second_deadlock_stack=1:halt_on_error=0:ignore_noninstrumented_modules=1"

if [ -z "$filter" ] && [ "$mode" = tsan ]; then
  # Our threads: the GUI's workers and their queues, the session's cancellation, the small
  # task pool, and the GUI scripts that drive all of them under Xvfb.
  filter='Worker|Render|Queue|Cancel|SmallTasks|Threads|Settings|FileKind|NativeDialog|GuiScript|gui_'
fi
cd "$build"
start=$(date +%s)
rc=0
ctest -j "${JOBS:-$(nproc)}" --timeout 3600 -LE "perf|cuda" ${filter:+-R "$filter"} \
  >"$build/sanitize.log" 2>&1 || rc=$?
tail -n 40 "$build/sanitize.log"
count=$(find "$reports" -type f | wc -l)
echo "sanitize.sh $mode: ctest exit $rc, $count sanitizer report file(s) in $reports," \
  "$(( $(date +%s) - start )) s"
for f in $(find "$reports" -type f | head -20); do
  echo "== $f"
  grep -m3 -E "ERROR|WARNING|runtime error|SUMMARY" "$f" || head -5 "$f"
done
[ "$rc" -eq 0 ] && [ "$count" -eq 0 ]
