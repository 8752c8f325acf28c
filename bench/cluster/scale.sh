#!/usr/bin/env bash
# Issue 50's "scale on paper", measured: the per-image cost of each analysis and of the
# faithfulness scoreboard on this machine (DeiT-tiny at 224, random weights: the cost of a
# trained one is the same), the cost of `attnlab merge` for 128 simulated shards of 50 048
# images (bench/cluster/simulate_shards.py), and what they imply for 50 000 images x 14
# models on 1, 16 and 128 two-core tasks. Run it on an idle machine (nothing else
# compiling): every number is wall time. Prints a Markdown table for docs/BENCHMARKS.md.
#   bash bench/cluster/scale.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
work=${2:-$(mktemp -d)}
attnlab=$build/app/attnlab
python=/usr/bin/python3
threads=2
mkdir -p "$work"
cd "$work"
photos=$root/assets/photos
images=("$photos/chelsea.png" "$photos/coffee.png" "$root/assets/demo.png")
printf '{"arch": "vit", "img_size": 224, "patch_size": 16, "embed_dim": 192, "depth": 12, "num_heads": 3, "num_classes": 1000}\n' >deit_tiny.json

seconds_of() {  # the sidecar's analyses and forward seconds per image
  "$python" - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
st = s["stage_seconds"]
n = max(1, st["images_analysed"])
print(f"{st['forward'] / n:.3f} {st['analyses'] / n:.3f}")
PY
}

echo "| analysis | forward s/image | analysis s/image |"
echo "|---|---|---|"
analyses=$("$attnlab" analyses 2>/dev/null | awk '/^[a-z_]+ — /{print $1}' | grep -v '^faithfulness$' || true)
[ -n "$analyses" ] || analyses="maps rollout gradcam gradrollout spectra rank anchors mask channel_maps locality entropy map_rank outliers segmentation similarity cka lens erf heads feature_pca"
for a in $analyses; do
  rm -rf "a_$a"
  if "$attnlab" --threads $threads analyze --model deit_tiny_patch16_224 --random-init \
      --images "${images[@]}" --analyses "$a" --out "a_$a" >"a_$a.log" 2>&1; then
    read -r fwd an < <(seconds_of "a_$a/deit_tiny_patch16_224_random__settings.json")
    echo "| $a | $fwd | $an |"
  else
    echo "| $a | failed: $(tail -1 "a_$a.log") | |"
  fi
done

t0=$(date +%s.%N)
"$attnlab" --threads $threads faithfulness --models deit_tiny.json --images "${images[@]}" \
  --shard 0/1 --out faith >faith.log 2>&1
t1=$(date +%s.%N)
echo
echo "faithfulness scoreboard (6 maps, --step 0.05, randomisation on), DeiT-tiny at 224:" \
  "$("$python" -c "print(f'{($t1 - $t0) / ${#images[@]}:.1f}')") s per image"

# Merges the shards in SIM into OUT under /usr/bin/time and says LABEL: wall, peak RSS, size.
measure_merge() {
  local label=$1 sim=$2 out=$3
  rm -rf "$out"
  /usr/bin/time -v "$attnlab" --threads $threads merge "$sim"/shard_* --out "$out" \
    >"$out.log" 2>"$out.time"
  echo "$label:" \
    "$(grep -E 'Elapsed' "$out.time" | awk '{print $NF}') wall," \
    "$(grep -E 'Maximum resident' "$out.time" | awk '{printf "%.0f MB", $NF/1024}') peak RSS," \
    "$(du -sh "$sim" | cut -f1) of shards"
}

rm -rf stats sim128
"$attnlab" --threads $threads analyze --model deit_tiny_patch16_224 --random-init \
  --images "${images[@]}" --analyses entropy,rank,locality,map_rank,outliers,spectra,cka,lens \
  --shard 0/1 --out stats >stats.log 2>&1
"$python" "$root/bench/cluster/simulate_shards.py" stats sim128 --shards 128 --images-per-shard 391
measure_merge "merge of 128 simulated analyze shards (50 048 images; statistics analyses)" sim128 merged128
rm -rf fsim
"$python" "$root/bench/cluster/simulate_shards.py" faith fsim --shards 128 --images-per-shard 40
measure_merge "merge of 128 simulated faithfulness shards (5 120 images x 1 model)" fsim fmerged
# The scoreboard at scale: `--per-image off` keeps running means only, so its shards and
# merge do not grow with the images; 14 pretended models (the zoo's count) of the real
# shard's rows.
rm -rf f1 f1sim
"$attnlab" --threads $threads faithfulness --models "$root/models/zoo/softmax.safetensors" \
  --images "$root/assets/fashion-mnist/00-t-shirt-top-00019.png" \
  --maps rollout,gradcam,gradrollout,random,centre --per-image off --shard 0/1 --out f1 >f1.log 2>&1
"$python" "$root/bench/cluster/simulate_shards.py" f1 f1sim --shards 128 --images-per-shard 391 \
  --models 14
measure_merge "merge of 128 simulated faithfulness --per-image off shards (50 048 images x 14 models)" f1sim f1m
