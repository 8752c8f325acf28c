#!/usr/bin/env bash
# Issue 50's acceptance on a real Slurm cluster (tests/cluster/local_slurm.sh): `sbatch
# --array=0-3` of `attnlab analyze` (every default analysis, feature PCA's fit included) and
# of `attnlab faithfulness` (two models, so the merge must go model by model through the
# shards) over the demo images, each task taking its shard from SLURM_ARRAY_TASK_ID/_COUNT/
# _MIN; then `attnlab merge`, whose folders must equal single-process runs of the same
# commands (tests/cluster/compare_outputs.py): per-image arrays and rows bit-identical
# (every .npy; faithfulness's per-image scores, curves and randomisation rows; the
# figures), the mean/std tables within the issue's 1e-12 relative (their JSON; their CSVs
# print 9 digits, --csv-digits 9) -- the merge combines the shards' running means, which
# rounds differently from one running mean. Also: a shard that did not finish is named by
# the merge, re-run alone and merged.
# Exit 77 (a skip) only when the Slurm or munge programs are not installed.
# Usage: bash tests/cluster/slurm_array_test.sh ATTNLAB_BINARY SOURCE_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/local_slurm.sh"
attnlab=$(realpath "$1")
source_dir=$(realpath "$2")

if missing=$(slurm_binaries_missing); then
  echo "SKIP: not installed: $missing (scripts/setup.sh installs Slurm and munge)"
  exit 77
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3

work=$(mktemp -d "${TMPDIR:-/tmp}/slurm_array_test.XXXXXX")
cleanup() {
  slurm_stop
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$SECONDS

zoo=$source_dir/models/zoo
images=$source_dir/assets/fashion-mnist
# Faithfulness scores hundreds of perturbed forwards per image: 8 images are enough to
# give every shard two, in two models.
mkdir "$work/few"
for f in $(ls "$images"/*.png | head -8); do ln -s "$f" "$work/few/"; done
analyze_args=(analyze --model "$zoo/softmax.safetensors" --images "$images")
faith_args=(faithfulness --models "$zoo/softmax.safetensors" "$zoo/hilo.safetensors"
            --images "$work/few" --maps rollout,gradcam,gradrollout,random,centre --step 0.25)

# The single-process runs.
"$attnlab" --threads 1 "${analyze_args[@]}" --out "$work/single/analyze" >"$work/single_analyze.log" 2>&1 ||
  { cat "$work/single_analyze.log"; fail "the single analyze run failed"; }
"$attnlab" --threads 1 "${faith_args[@]}" --out "$work/single/faithfulness" >"$work/single_faith.log" 2>&1 ||
  { cat "$work/single_faith.log"; fail "the single faithfulness run failed"; }
echo "single runs in $((SECONDS - t0)) s"

mkdir -p "$work/jobs"
slurm_start "$work/cluster"
echo "cluster up: $(sinfo -h -o '%N %t %c CPUs')"
# The array tasks: no --shard; attnlab takes it from the array's variables.
for run in analyze faithfulness; do
  if [ $run = analyze ]; then args=("${analyze_args[@]}"); else args=("${faith_args[@]}"); fi
  {
    echo '#!/bin/bash'
    printf 'exec %q --threads 1' "$attnlab"
    printf ' %q' "${args[@]}"
    printf ' --out %q\n' "$work/shards/$run/shard_"
  } >"$work/$run.sh"
  sed -i 's|shard_$|shard_$SLURM_ARRAY_TASK_ID|' "$work/$run.sh"
  slurm_run_array 4 "$work/$run.sh" -o "$work/jobs/${run}_%a.out" || fail "the $run array failed"
  for i in 0 1 2 3; do
    grep -q "$run: shard $i/4 from Slurm (SLURM_ARRAY_TASK_ID=$i of 4 tasks from 0)" \
      "$work/jobs/${run}_$i.out" || { cat "$work/jobs/${run}_$i.out"; fail "task $i did not say its shard"; }
    [ -f "$work/shards/$run/shard_$i/shard.json" ] || fail "task $i wrote no shard.json"
  done
  "$attnlab" --threads 1 merge "$work"/shards/$run/shard_* --out "$work/merged/$run" ||
    fail "merging the $run shards failed"
  if [ $run = analyze ]; then means=(--relative '*.csv' --relative '*.json')
  else means=(--relative 'faithfulness__faithfulness.*' --relative '*_summary.*'); fi
  "$python" "$here/compare_outputs.py" "$work/single/$run" "$work/merged/$run" \
    "${means[@]}" --csv-digits 9 || fail "the merged $run differs from the single run"
  echo "$run: 4 array tasks merged, equal to the single run ($((SECONDS - t0)) s)"
done
slurm_stop

# A shard that did not finish: the merge names it; re-run alone, it merges.
rm "$work/shards/analyze/shard_2/shard.json"
if "$attnlab" merge "$work"/shards/analyze/shard_* --out "$work/merged/again" 2>"$work/merge.err"; then
  fail "a merge without shard 2's manifest succeeded"
fi
grep -q "shard_2 has no shard.json: that shard did not finish" "$work/merge.err" ||
  { cat "$work/merge.err"; fail "the merge did not name the unfinished shard"; }
if "$attnlab" merge "$work"/shards/analyze/shard_{0,1,3} --out "$work/merged/again" 2>"$work/merge.err"; then
  fail "a merge of 3 of 4 shards succeeded"
fi
grep -q "missing shard 2/4 (items 15-21)" "$work/merge.err" ||
  { cat "$work/merge.err"; fail "the merge did not name the missing shard"; }
"$attnlab" --threads 1 "${analyze_args[@]}" --shard 2/4 --out "$work/shards/analyze/shard_2" \
  >"$work/rerun.log" 2>&1 || { cat "$work/rerun.log"; fail "re-running shard 2 failed"; }
"$attnlab" --threads 1 merge "$work"/shards/analyze/shard_* --out "$work/merged/again" >/dev/null
"$python" "$here/compare_outputs.py" "$work/single/analyze" "$work/merged/again" \
  --relative '*.csv' --relative '*.json' --csv-digits 9 ||
  fail "the merge with the re-run shard differs from the single run"
echo "PASS in $((SECONDS - t0)) s"
