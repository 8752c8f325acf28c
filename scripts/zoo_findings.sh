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
#   erf/        effective receptive field of the centre token             (finding i)
#   heads/      head importance by ablation on 1000 test images          (finding j)
#   sizes/      statistics at 28, 42 and 56 pixels (a resolution sweep)  (finding k)
#   series_cka/ CKA of each Castling checkpoint to the final one         (finding l)
#   linear_series/ entropy, map rank and CKA to the final checkpoint along linear
#               attention's training series                              (finding l)
#   segmentation/ DINO's attention masks scored against each picture's foreground (finding n)
#   probe/      linear probes and the logit lens per block, 1000 test images  (finding o)
#   mech2024/   the 2023–25 mechanisms: their special views (agents, routing, sampling),
#               entropy, attention-map rank and locality                  (finding p)
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
"$bin" "${threads[@]}" report --models "$zoo"/{softmax,linear,castling,hilo,rala,swin,flatten,anchor}.safetensors \
  --images "$images" --analyses erf --figures erf --complexity-scales none --formats png,svg \
  --out "$out/erf"
for m in softmax linear castling hilo rala flatten anchor swin xca sra; do
  "$bin" "${threads[@]}" head-importance --model "$zoo/$m.safetensors" \
    --dataset fashion-mnist:test --limit 1000 --batch 250 --out "$out/heads"
done
for m in softmax linear rala hilo; do
  "$bin" "${threads[@]}" analyze-sizes --model "$zoo/$m.safetensors" --img-sizes 28,42,56 \
    --images "$images" --out "$out/sizes"
done
"$bin" "${threads[@]}" analyze-series --checkpoints "$zoo"/castling_series/step_*.safetensors \
  --images "$images" --analyses cka --out "$out/series_cka"
"$bin" "${threads[@]}" analyze-series --checkpoints "$zoo"/linear_series/step_*.safetensors \
  --images "$images" --analyses entropy,map_rank,cka --out "$out/linear_series"
for m in softmax hilo linear rala anchor castling sra swin xca flatten hydra efficient efficientvit; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses segmentation --seg-truth foreground --out "$out/segmentation/$m"
done
for m in softmax linear hilo rala castling efficientvit xca; do
  "$bin" --threads 1 probe --model "$zoo/$m.safetensors" --dataset fashion-mnist:test \
    --limit 1000 --out "$out/probe/$m"
done
for m in agent agent_pvt mlla inline pola biformer dat; do
  "$bin" "${threads[@]}" analyze --model "$zoo/$m.safetensors" --images "$images" \
    --analyses agents,routing,sampling,entropy,map_rank,locality --out "$out/mech2024"
done
