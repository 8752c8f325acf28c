#!/usr/bin/env bash
# The portability sweep: the whole test suite (what scripts/test.sh runs) once per cell of
# CPU paths, so that no test depends on the BLAS kernel, LibTorch's SIMD paths, oneDNN's
# instruction set or the number of threads of the machine it was written on. Not part of
# CI: each cell is a full ctest run (about 12 min on the 2-core machine, after the build).
#
#   bash scripts/test_portability.sh                       # the default cells below
#   CELLS="Haswell:default:AVX2:1" bash scripts/test_portability.sh
#   CTEST_ARGS="-LE gui -R Bf16" bash scripts/test_portability.sh   # a subset in each cell
#
# A cell is KERNEL:ATEN:ONEDNN:THREADS[:LOAD], each emulated on this machine with the switch the
# library reads at start-up:
#   KERNEL   OPENBLAS_CORETYPE: Debian's OpenBLAS has kernels for every x86-64 CPU and picks
#            one at start-up; this overrides the choice (the name OpenBLAS reports is
#            printed, so an unknown one cannot pass silently). Prescott = generic x86-64
#            (no AVX),
#            Sandybridge = AVX, Haswell = AVX2 (also what AMD Zen 1-3 run), SkylakeX = AVX-512.
#   ATEN     ATEN_CPU_CAPABILITY, LibTorch's own vectorised kernels: default (no SIMD
#            beyond SSE), avx2, avx512.
#   ONEDNN   ONEDNN_MAX_CPU_ISA, the most oneDNN (LibTorch's convolutions and, on AVX-512
#            CPUs, its bf16 products) may use: SSE41, AVX, AVX2, AVX512_CORE, or "all" to
#            leave it unset.
#   THREADS  ATTNLAB_THREADS (the test binaries and the attnlab executable apply it) and
#            OMP_NUM_THREADS (OpenBLAS's OpenMP pool): 1 or 2.
#   LOAD     optional: how many cores a spin loop keeps busy while the cell runs (default 0),
#            the slowed machine of a shared server. No test may depend on wall-clock time, so
#            a loaded cell must pass like the others, only later.
# A cell whose instructions this CPU lacks is reported as skipped. The default cells give
# every value of every switch at least once, with both thread counts for each CPU
# generation, and the mixed cells a newer CPU runs when only some libraries are held back
# (LibTorch's reference kernels over AVX2 BLAS and oneDNN; AVX-512 BLAS with AVX2 oneDNN).
# Prints the matrix -> pass/fail and exits non-zero if any cell failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ATTNLAB_BUILD_DIR:-$root/build}"
default_cells="Prescott:default:SSE41:1 Prescott:default:SSE41:2
Sandybridge:default:AVX:1 Sandybridge:default:AVX:2
Haswell:avx2:AVX2:1 Haswell:avx2:all:2 Haswell:default:AVX2:2 Haswell:default:all:2:1
SkylakeX:avx512:all:1 SkylakeX:avx512:AVX512_CORE:2 SkylakeX:avx2:AVX2:2"
cells=(${CELLS:-$default_cells})
logs="$build/portability"

bash "$root/scripts/setup.sh" || exit 1
bash "$root/scripts/build.sh" || exit 1
mkdir -p "$logs"

# The CPU flag a switch's value needs, to skip cells this CPU cannot run.
needs() {
  case "$1" in
    Sandybridge | AVX) echo avx ;;
    Haswell | Zen | avx2 | AVX2) echo avx2 ;;
    SkylakeX | Cooperlake | SapphireRapids | avx512 | AVX512_CORE) echo avx512f ;;
    *) echo "" ;;
  esac
}

declare -A result
spinners=()
# A spin loop must not outlive the sweep, whatever ends it.
trap 'for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done' EXIT
failed=0
start=$(date +%s)
for cell in "${cells[@]}"; do
  IFS=: read -r kernel aten onednn threads load <<<"$cell"
  load="${load:-0}"
  missing=""
  for v in "$kernel" "$aten" "$onednn"; do
    flag="$(needs "$v")"
    if [ -n "$flag" ] && ! grep -qw "$flag" /proc/cpuinfo; then missing="$flag"; fi
  done
  if [ -n "$missing" ]; then
    result[$cell]="skipped (no $missing)"
    continue
  fi
  env_args=(OPENBLAS_CORETYPE="$kernel" ATEN_CPU_CAPABILITY="$aten"
    ATTNLAB_THREADS="$threads" OMP_NUM_THREADS="$threads")
  [ "$onednn" != all ] && env_args+=(ONEDNN_MAX_CPU_ISA="$onednn" DNNL_MAX_CPU_ISA="$onednn")
  # cairo's pixel library, pixman, is left to pick its own paths: PIXMAN_DISABLE would
  # emulate an older CPU's, but pixman then prints "pixman: Disabled sse2 implementation"
  # on stdout in every process, which changes every command's output (the help and
  # --version tests compare it exactly) where no real CPU prints anything; pixman's own
  # tests run its SIMD and generic paths against the same checksums.
  log="$logs/$(echo "$cell" | tr : _).log"
  # OpenBLAS prints the kernel it runs with OPENBLAS_VERBOSE=2: record it, so a kernel
  # name OpenBLAS does not know (it would fall back silently) shows in the table.
  core="$(env "${env_args[@]}" OPENBLAS_VERBOSE=2 "$build/app/attnlab" --version 2>&1 |
    sed -n 's/^Core: //p' | head -1)"
  t0=$(date +%s)
  echo "portability: $cell (${env_args[*]}; OpenBLAS says core ${core:-?}; $load core(s) kept busy) ..."
  spinners=()
  for ((i = 0; i < load; i++)); do
    (while :; do :; done) &
    spinners+=($!)
  done
  # shellcheck disable=SC2086
  (cd "$build" && env "${env_args[@]}" ctest -j "$(nproc)" --timeout 1800 -LE perf \
    --output-on-failure ${CTEST_ARGS:-} >"$log" 2>&1)
  rc=$?
  for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done
  summary="$(grep -E 'tests passed|tests failed' "$log" | tail -1)"
  secs=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    result[$cell]="pass   core ${core:-?}, ${secs} s: ${summary}"
  else
    result[$cell]="FAIL   core ${core:-?}, ${secs} s: ${summary} (log: $log)"
    failed=1
  fi
  echo "  ${result[$cell]}"
done

echo
echo "portability matrix (OpenBLAS kernel : ATen capability : oneDNN ISA : threads [: busy cores]) -> result"
for cell in "${cells[@]}"; do
  printf '  %-32s %s\n' "$cell" "${result[$cell]}"
done
echo "portability: finished in $(($(date +%s) - start)) s"
[ $failed -eq 0 ] && echo "portability: every cell passed" || echo "portability: some cells FAILED"
exit $failed
