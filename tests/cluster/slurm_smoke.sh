#!/usr/bin/env bash
# The local test cluster (tests/cluster/local_slurm.sh) works: it starts, an array of 4
# tasks runs with the array variables each task should see, a failing task makes
# slurm_run_array fail, and slurm_stop leaves no daemon and no folder behind.
# Exit 77 (a skip) only when the Slurm or munge programs are not installed.
# Usage: bash tests/cluster/slurm_smoke.sh [ATTNLAB_BINARY SOURCE_DIR] (both unused)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/local_slurm.sh"

if missing=$(slurm_binaries_missing); then
  echo "SKIP: not installed: $missing (scripts/setup.sh installs Slurm and munge)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/slurm_smoke.XXXXXX")
cleanup() {
  slurm_stop
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

fail() { echo "FAIL: $*" >&2; exit 1; }

t0=$SECONDS
slurm_start "$work/cluster"
cluster=$work/cluster
echo "cluster up in $((SECONDS - t0)) s: $(sinfo -h -o '%N %t %c CPUs')"

mkdir "$work/shared"
cat >"$work/task.sh" <<'EOF'
#!/bin/bash
echo "$SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN" \
  >"$SHARED/task_$SLURM_ARRAY_TASK_ID.txt"
if [ "$SLURM_ARRAY_TASK_ID" = "${FAIL_TASK:-none}" ]; then
  echo "task $SLURM_ARRAY_TASK_ID fails on purpose" >&2
  exit 3
fi
EOF

SHARED=$work/shared slurm_run_array 4 "$work/task.sh" || fail "the array of 4 tasks failed"
for i in 0 1 2 3; do
  f=$work/shared/task_$i.txt
  [ -f "$f" ] || fail "task $i wrote no $f"
  [ "$(cat "$f")" = "$i 4 0" ] || fail "task $i wrote '$(cat "$f")', not '$i 4 0'"
done
echo "4 tasks wrote their files: $(cat "$work"/shared/task_*.txt | tr '\n' ',')"

rm -f "$work"/shared/*
status=0
SHARED=$work/shared FAIL_TASK=2 slurm_run_array 4 "$work/task.sh" 2>"$work/failed.err" || status=$?
cat "$work/failed.err"
[ "$status" -eq 1 ] || fail "slurm_run_array returned $status with a failing task, not 1"
grep -q 'task 2: FAILED exit code 3:0' "$work/failed.err" || fail "task 2's failure not reported"
grep -q 'fails on purpose' "$work/failed.err" || fail "task 2's output not printed"
[ "$(ls "$work/shared" | wc -l)" -eq 4 ] || fail "the other tasks did not all run"
echo "a failing task fails the array"

slurm_stop
[ ! -e "$cluster" ] || fail "slurm_stop left $cluster"
[ -z "${SLURM_CONF:-}" ] || fail "slurm_stop left SLURM_CONF=$SLURM_CONF"
left=
for f in /proc/[0-9]*/cmdline; do
  tr '\0' '\n' <"$f" 2>/dev/null | grep -q -F "$cluster/" && left+=" ${f%/cmdline}"
done
[ -z "${left// /}" ] || fail "processes of the cluster still running: $left"
slurm_stop # a second call does nothing
echo "PASS in $((SECONDS - t0)) s"
