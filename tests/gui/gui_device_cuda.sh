#!/usr/bin/env bash
# The GUI's device picker on a GPU (label cuda; skips without a CUDA device): the zoo's
# softmax model opens on the CPU, the script moves it to cuda:0, and its analysis of an
# image (traces, Grad-CAM's backward, the faithfulness scores) runs there and is drawn;
# model-info says where it runs. Usage: tests/gui/gui_device_cuda.sh <attnlab> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_device_cuda: SKIP: no xvfb-run" >&2; exit 77; }
"$attnlab" info | grep -q '^  cuda:0' || { echo "gui_device_cuda: SKIP: no CUDA device" >&2; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"
cat >"$work/device.script" <<SCRIPT
open-model $root/models/zoo/softmax.safetensors
open-image $root/assets/fashion-mnist/09-ankle-boot-00000.png
wait-idle 600
device cuda:0
wait-idle 600
frames 3
expect-no-error
model-info $work/cuda.json
tab faithfulness
wait-idle 600
frames 4
screenshot $work/shot_cuda.png
quit
SCRIPT
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --device cpu --empty \
  --script "$work/device.script" >"$work/log" 2>&1 || { cat "$work/log" >&2; echo "gui_device_cuda: FAIL: the script" >&2; exit 1; }
python3 - "$work/cuda.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
if j["device"] != "cuda:0" or j["analysis"] != "ready" or not j["top5"]:
    sys.exit(f"gui_device_cuda: FAIL: device {j['device']!r}, analysis {j['analysis']!r} {j['analysis_error']!r}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" shot_cuda.png
echo "gui_device_cuda: PASS"
