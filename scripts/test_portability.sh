#!/usr/bin/env bash
# The portability sweep: the whole test suite (what scripts/test.sh runs) under several
# CPU generations and thread counts, so that no test depends on the BLAS kernel, the
# SIMD paths or the number of threads of the machine it was written on. Not part of CI:
# it runs the suite once per cell (8 cells x about 2-3 minutes on the 2-core machine,
# after the build; docs in the README's Development section).
#
#   bash scripts/test_portability.sh                  # the default matrix
#   KERNELS="Haswell" THREADS="1" bash scripts/test_portability.sh
#
# A kernel stands for a CPU generation, emulated on this machine with the switches each
# library reads at start-up:
#   OPENBLAS_CORETYPE    Debian's OpenBLAS has kernels for every x86-64 CPU and picks one
#                        at start-up; this overrides the choice (its name is printed from
#                        OpenBLAS itself, so an unknown one cannot pass silently)
#   ATEN_CPU_CAPABILITY  LibTorch's own vectorised kernels: default (SSE), avx2, avx512
#   PIXMAN_DISABLE       cairo's pixel paths (the golden images): SIMD paths turned off
# Prescott = a generic x86-64 (no AVX), Sandybridge = AVX, Haswell = AVX2 (also what an
# AMD EPYC Zen 2/3 runs, which is where a bit-exact test first failed), SkylakeX =
# AVX-512. A generation whose instructions this CPU lacks is reported as skipped.
# Threads: "default" leaves LibTorch's own choice (all cores); a number sets
# ATTNLAB_THREADS (the test binaries and the attnlab executable apply it) and
# OMP_NUM_THREADS (OpenBLAS's OpenMP pool). Prints the matrix (kernel, threads) ->
# pass/fail and exits non-zero if any cell failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ATTNLAB_BUILD_DIR:-$root/build}"
kernels=(${KERNELS:-Prescott Sandybridge Haswell SkylakeX})
threads=(${THREADS:-default 1})
logs="$build/portability"

bash "$root/scripts/setup.sh" || exit 1
bash "$root/scripts/build.sh" || exit 1
mkdir -p "$logs"

# The CPU flag a kernel needs, to skip kernels this CPU cannot run.
needs() {
  case "$1" in
    Sandybridge) echo avx ;;
    Haswell | Zen) echo avx2 ;;
    SkylakeX | Cooperlake | SapphireRapids) echo avx512f ;;
    *) echo "" ;;
  esac
}

declare -A result
failed=0
start=$(date +%s)
for k in "${kernels[@]}"; do
  flag="$(needs "$k")"
  for t in "${threads[@]}"; do
    cell="$k/$t"
    if [ -n "$flag" ] && ! grep -qw "$flag" /proc/cpuinfo; then
      result[$cell]="skipped (no $flag)"
      continue
    fi
    log="$logs/${k}_threads-${t}.log"
    env_args=(OPENBLAS_CORETYPE="$k")
    case "$k" in
      Prescott) env_args+=(ATEN_CPU_CAPABILITY=default PIXMAN_DISABLE="mmx sse2 ssse3 avx2") ;;
      Sandybridge) env_args+=(ATEN_CPU_CAPABILITY=default PIXMAN_DISABLE="avx2") ;;
      Haswell) env_args+=(ATEN_CPU_CAPABILITY=avx2) ;;
      SkylakeX) env_args+=(ATEN_CPU_CAPABILITY=avx512) ;;
    esac
    [ "$t" != default ] && env_args+=(ATTNLAB_THREADS="$t" OMP_NUM_THREADS="$t")
    # OpenBLAS prints the kernel it runs with OPENBLAS_VERBOSE=2: record it, so a kernel
    # name OpenBLAS does not know (it would fall back silently) shows in the table.
    core="$(env "${env_args[@]}" OPENBLAS_VERBOSE=2 "$build/app/attnlab" --version 2>&1 |
      sed -n 's/^Core: //p' | head -1)"
    t0=$(date +%s)
    echo "portability: $cell (${env_args[*]}; OpenBLAS says core ${core:-?}) ..."
    (cd "$build" && env "${env_args[@]}" ctest -j "$(nproc)" --timeout 600 -LE perf \
      --output-on-failure >"$log" 2>&1)
    rc=$?
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
done

echo
echo "portability matrix (OPENBLAS_CORETYPE, threads) -> result"
for k in "${kernels[@]}"; do
  for t in "${threads[@]}"; do
    printf '  %-12s %-8s %s\n' "$k" "$t" "${result[$k/$t]}"
  done
done
echo "portability: finished in $(($(date +%s) - start)) s"
[ $failed -eq 0 ] && echo "portability: every cell passed" || echo "portability: some cells FAILED"
exit $failed
