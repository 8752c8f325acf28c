#!/usr/bin/env bash
# Issue 70's timings (docs/BENCHMARKS.md, "Whole datasets at a glance"): the 10 000
# Fashion-MNIST test images through `attnlab embed` beside `attnlab eval` on the same images
# (the same forwards: the ratio is what embedding adds), then `attnlab project` (t-SNE, UMAP)
# beside scikit-learn's TSNE and umap-learn on the same embeddings (bench/dataset/
# references.py, which also scores both with sklearn's trustworthiness), and `attnlab
# retrieve` on a 2 000-image token index. Wall time and peak RSS from /usr/bin/time.
#   bash bench/dataset/glance.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
work="${2:-$(mktemp -d)}"
bin="$build/app/attnlab"
model="$root/models/zoo/softmax.safetensors"
timed() { /usr/bin/time -f "$1: %e s wall, peak RSS %M KB" "${@:2}"; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
timed "eval 10000" "$bin" --threads 2 eval --model "$model" --dataset fashion-mnist:test --batch 32 2>&1 | tail -2
rm -rf "$work/emb"
timed "embed 10000" "$bin" --threads 2 embed --model "$model" --dataset fashion-mnist:test \
  --out "$work/emb" 2>&1 | tail -2
for m in pca tsne umap; do
  timed "project $m" "$bin" --threads 2 project "$work/emb" --method "$m" 2>&1 | tail -2
done
OMP_NUM_THREADS=2 /usr/bin/python3 "$root/bench/dataset/references.py" "$work/emb"
rm -rf "$work/tok"
timed "embed 2000 tokens" "$bin" --threads 2 embed --model "$model" --dataset fashion-mnist:test \
  --limit 2000 --pool tokens --out "$work/tok" 2>&1 | tail -1
for i in 1 2 3; do
  timed "retrieve" "$bin" --threads 2 retrieve "$work/tok" --image 5 --patch 7,7 --k 16 \
    --exclude-self 2>&1 | tail -1
done
