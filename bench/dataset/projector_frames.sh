#!/usr/bin/env bash
# The Projector tab's frame time with many points (issue 70 goal 3: "thousands of points at
# interactive frame rates"): the 10 000 Fashion-MNIST test images embedded, projected (PCA)
# and drawn coloured by label, then by confidence, with a point hovered; beside it the same
# script on a folder of 30 images (the baseline: the tab's cost without the points). The GUI
# prints at exit the frame times of the frames drawn while no job ran (gui.cpp: draw to
# buffer swap; llvmpipe software GL under Xvfb here). Timed, so a benchmark, not a test.
#   bash bench/dataset/projector_frames.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
work="${2:-$(mktemp -d)}"
bin="$build/app/attnlab"
model="$root/models/zoo/softmax.safetensors"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -d "$work/big" ]] || "$bin" --threads 2 embed --model "$model" --dataset fashion-mnist:test \
  --batch 64 --out "$work/big" 2>&1 | tail -1
[[ -d "$work/small" ]] || "$bin" --threads 2 embed --model "$model" \
  --images "$root/assets/fashion-mnist" --out "$work/small" 2>&1 | tail -1
for folder in small big; do
  cat >"$work/$folder.script" <<SCRIPT
tab projector
projector $work/$folder
wait-idle 600
frames 150
projector-color confidence
projector-hover 7
frames 150
SCRIPT
  echo "== $folder: $(python3 -c "import json; print(json.load(open('$work/$folder/embed.json'))['images'])") points"
  ATTNLAB_SETTINGS="$work/settings.ini" xvfb-run -a -s "-screen 0 1280x800x24" \
    "$bin" gui --empty --script "$work/$folder.script" 2>&1 | grep 'frame time' || true
done
