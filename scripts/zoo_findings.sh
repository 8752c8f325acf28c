#!/usr/bin/env bash
# Runs the analyses behind docs/FINDINGS.md on the shipped zoo and the 30 Fashion-MNIST
# demo images (assets/fashion-mnist), writing every output folder under OUT
# (default runs/findings):
#   hilo/       spectra of HiLo's Hi-Fi and Lo-Fi branches            (finding a)
#   rank/       KV-buffer and output-feature rank: softmax, linear, RALA (finding b)
#   castling/   Castling's auxiliary-mask share along its training series (finding c)
#   anchor/     anchor assignments, usage and spatial coherence        (finding d)
#   entropy/    attention entropy of softmax, linear, Castling, FLatten, HiLo (finding e)
#   map_rank/   rank of the attention map itself, with the depthwise lifts  (finding f)
#   outliers/   high-norm outlier tokens and the attention they receive   (finding g)
#   cka/        linear CKA between layers, within and between models      (finding h)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${ATTNLAB_BIN:-$root/build/app/attnlab}"
out="${1:-$root/runs/findings}"
zoo="$root/models/zoo"
images="$root/assets/fashion-mnist"
threads=(--threads "${THREADS:-2}")
set -x
"$bin" "${threads[@]}" analyze --model "$zoo/hilo.safetensors" --images "$images" \
  --analyses spectra --out "$out/hilo"
for m in softmax linear rala; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses rank --out "$out/rank"
done
"$bin" "${threads[@]}" analyze-series --checkpoints "$zoo"/castling_series/step_*.safetensors \
  --images "$images" --analyses mask --out "$out/castling"
"$bin" "${threads[@]}" analyze --model "$zoo/anchor.safetensors" --images "$images" \
  --analyses anchors --out "$out/anchor"
for m in softmax linear castling flatten hilo; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses entropy --out "$out/entropy"
done
for m in softmax linear flatten rala castling anchor; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses map_rank --out "$out/map_rank"
done
for m in softmax linear castling hilo rala anchor; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses outliers --out "$out/outliers"
done
"$bin" "${threads[@]}" report --models "$zoo"/{softmax,linear,castling,rala}.safetensors \
  --images "$images" --analyses cka --complexity-scales none --formats png --out "$out/cka"
