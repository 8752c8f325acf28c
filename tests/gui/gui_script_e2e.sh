#!/usr/bin/env bash
# GUI end to end under Xvfb, driven by a script (attnlab gui --script): starts on the demo
# (the zoo and the demo images), clicks a token, switches model, layer, head, the heads
# grid, every analysis tab and the compare view, exports a PNG, an SVG and statistics,
# and takes a screenshot after each step. Checks: exit 0 (the process lived to the end),
# the exports exist and parse, every screenshot has content (pixel variance) and the
# screenshots differ where the view changed. Then a second script opens a corrupt image,
# a truncated checkpoint and a checkpoint of no known architecture: each must show an
# error, and the app must stay usable (a later screenshot of a working view); File > Open
# through a stand-in desktop file chooser opens the file it picks.
# Then the resolution sweep: the model at three input sizes, statistics against the size,
# and Cancel inside a long image analysis (it stays cancelled; Analyse again finishes it).
# Finally reports the frame time measured while the worker ran jobs.
# Usage: tests/gui/gui_script_e2e.sh <path/to/attnlab> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_script_e2e: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings
fail() { echo "gui_script_e2e: FAIL: $*" >&2; exit 1; }

run_script() {  # script file, log file [--empty: start without the demo]
  local rc=0
  timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui ${3:-} --script "$1" >"$2" 2>&1 || rc=$?
  return "$rc"
}

sed "s|@OUT@|$work|g" "$root/tests/gui/scripts/tour.script" >"$work/tour.script"
run_script "$work/tour.script" "$work/tour.log" || { cat "$work/tour.log" >&2; fail "the tour script exited with an error"; }

for f in compare.png compare.svg compare.pdf head.pdf heads_grid.svg explain.svg; do [[ -s "$work/$f" ]] || fail "export $f missing"; done
if command -v xmllint >/dev/null 2>&1; then
  for f in compare.svg heads_grid.svg explain.svg; do xmllint --noout "$work/$f" || fail "$f does not parse"; done
fi
# What you see is what you export: each Maps view (the single map, the heads grid, the
# compare view with the difference panel, then on the shared scale) is one figure; the
# region of the window that shows it and the export of the same figure at the resolution
# the view drew it must be the same picture, pixel for pixel (one renderer, one DPI; the
# texture is drawn 1:1).
for v in single heads difference shared; do
  same=$(python3 "$root/tests/gui/png_compare.py" "$work/screen_$v.png" "$work/export_$v.png") ||
    fail "the compare view ($v) on screen is not its export: $same"
  echo "gui_script_e2e: compare view ($v) on screen vs its export: $same"
done
# The Grad-CAM export of the compare view is the Fig. 4 grid of every model's explanation.
zoo_models=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["models"]))' "$root/models/zoo/zoo.json")
grep -q "Grad-CAM of $zoo_models models (rows)" "$work/tour.log" || fail "the Grad-CAM compare export is not the Fig. 4 grid of the $zoo_models zoo models"
if command -v pdfinfo >/dev/null 2>&1; then
  for f in head.pdf compare.pdf; do pdfinfo "$work/$f" >/dev/null || fail "$f does not parse"; done
fi
ls "$work/stats/"*.csv >/dev/null 2>&1 || fail "no statistics exported"
# The run left its settings: recent files and the view options (the tour ends on cividis).
grep -q '"colormap": "cividis"' "$work/settings.json" || fail "settings.json does not remember the colormap"
grep -q 'fashion-mnist/09-ankle-boot-00000.png' "$work/settings.json" || fail "settings.json has no recent images"

shots=$(cd "$work" && ls shot_*.png)
[[ $(echo "$shots" | wc -l) -ge 10 ]] || fail "too few screenshots: $shots"
# shellcheck disable=SC2086
python3 "$root/tests/gui/png_checks.py" "$work" $shots || fail "screenshot checks"

# Bad files: each gives an error and the app stays usable.
printf 'not an image' >"$work/corrupt.png"
head -c 100 "$root/models/zoo/softmax.safetensors" >"$work/truncated.safetensors"
python3 - "$work/foreign.safetensors" <<'PY'
import json, struct, sys  # a valid safetensors file whose tensors belong to no known model
header = json.dumps({"encoder.w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(header)) + header + struct.pack("<f", 1.0))
PY
sed -e "s|@OUT@|$work|g" -e "s|@ZOO@|$root/models/zoo|g" -e "s|@ROOT@|$root|g" \
  "$root/tests/gui/scripts/bad_files.script" >"$work/bad.script"
# A stand-in for the desktop's file chooser (zenity) that picks one image.
cp "$root/assets/fashion-mnist/07-sneaker-00009.png" "$work/picked.png"
mkdir -p "$work/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "$work/picked.png" >"$work/bin/zenity"
chmod +x "$work/bin/zenity"
PATH="$work/bin:$PATH" run_script "$work/bad.script" "$work/bad.log" --empty || { cat "$work/bad.log" >&2; fail "the bad-files script exited with an error"; }
[[ -s "$work/after_errors.png" ]] || fail "no screenshot after the errors"

# The Cost tab: the complexity sweep of the models open and a bench of their mechanisms,
# each exported as the report draws it.
sed -e "s|@OUT@|$work|g" -e "s|@ZOO@|$root/models/zoo|g" "$root/tests/gui/scripts/cost.script" >"$work/cost.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty --script "$work/cost.script" \
  >"$work/cost.log" 2>&1 || { cat "$work/cost.log" >&2; fail "the cost script exited with an error"; }
for f in cost_macs.svg cost_latency.svg cost_memory.pdf; do [[ -s "$work/$f" ]] || fail "export $f missing"; done
grep -q "Multiply-accumulates of the whole forward" "$work/cost.log" || fail "the MACs export is not the complexity figure"
grep -q "Measured latency of one attention layer" "$work/cost.log" || fail "the latency export is not the bench figure"
grep -q -- "--figures attention_bench --bench" "$work/cost.cmd" || fail "copy-command of the Cost tab: $(cat "$work/cost.cmd")"
python3 "$root/tests/gui/png_checks.py" "$work" shot_cost_macs.png shot_cost_latency.png || fail "Cost tab screenshots"

# The resolution sweep: the model at three input sizes on one image, the statistics
# against the size under the Entropy and Map rank tabs.
sed -e "s|@OUT@|$work|g" -e "s|@ZOO@|$root/models/zoo|g" -e "s|@ROOT@|$root|g" \
  "$root/tests/gui/scripts/size_sweep.script" >"$work/sweep.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty --script "$work/sweep.script" \
  >"$work/sweep.log" 2>&1 || { cat "$work/sweep.log" >&2; fail "the size sweep script exited with an error"; }
python3 - "$work/sweep.json" <<'PY' || fail "size sweep state"
import json, sys
s = json.load(open(sys.argv[1]))["size_sweep"]
def check(ok, what):
    if not ok: sys.exit(f"gui_script_e2e: size sweep: {what}: {s}")
check(s["sizes"] == [28, 42, 56] and s["analysed"] == [28, 42, 56], "every size analysed")
check(s["shown"] and not s["running"] and s["error"] == "", "shown, finished, no error")
check(s["rows"].get("entropy_layers_sizes") == 3 * 4, "one row per size and layer (4 layers)")
PY
python3 "$root/tests/gui/png_checks.py" "$work" shot_sweep_entropy.png shot_sweep_map_rank.png || fail "size sweep screenshots"

# Cancel inside a long analysis: the image's analysis (with its faithfulness scores) is
# stopped while it runs, stays cancelled, and Analyse again finishes it.
sed -e "s|@OUT@|$work|g" -e "s|@ZOO@|$root/models/zoo|g" -e "s|@ROOT@|$root|g" \
  "$root/tests/gui/scripts/cancel.script" >"$work/cancel.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty --script "$work/cancel.script" \
  >"$work/cancel.log" 2>&1 || { cat "$work/cancel.log" >&2; fail "the cancel script exited with an error"; }
python3 - "$work/cancelled.json" "$work/reanalysed.json" <<'PY' || fail "cancel state"
import json, sys
c, r = (json.load(open(p)) for p in sys.argv[1:3])
if c["analysis"] != "failed" or "cancelled" not in c["analysis_error"]:
    sys.exit(f"gui_script_e2e: after Cancel the analysis is {c['analysis']!r} ({c['analysis_error']!r})")
if r["device"] != "cpu" or r["options"]["device"] != "cpu":
    sys.exit(f"gui_script_e2e: the model runs on {r['device']!r} (options {r['options']['device']!r}), not the CPU")
if r["analysis"] != "ready" or not r["top5"]:
    sys.exit(f"gui_script_e2e: after Analyse again the analysis is {r['analysis']!r} ({r['analysis_error']!r})")
PY

# The same file opened twice (tests/gui/scripts/same_file_twice.script).
sed -e "s|@OUT@|$work|g" -e "s|@ZOO@|$root/models/zoo|g" -e "s|@ROOT@|$root|g" \
  "$root/tests/gui/scripts/same_file_twice.script" >"$work/twice.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty --script "$work/twice.script" \
  >"$work/twice.log" 2>&1 || { cat "$work/twice.log" >&2; fail "the same-file-twice script exited with an error"; }
python3 - "$work/twice.json" <<'PY' || fail "same file twice"
import json, sys
j = json.load(open(sys.argv[1]))
w = j["workspace"]
if j["name"] != "softmax (2)" or j["status"] != "ready":
    sys.exit(f"gui_script_e2e: the second softmax is {j['name']!r} ({j['status']})")
if w["models"] != 2 or w["images"] != 1:
    sys.exit(f"gui_script_e2e: {w['models']} models and {w['images']} images open, expected 2 and 1")
print("gui_script_e2e: the same model twice is 'softmax' and 'softmax (2)'; the same image once")
PY
python3 "$root/tests/gui/png_checks.py" "$work" shot_cancelled.png shot_reanalysed.png || fail "cancel screenshots"

grep -h "frame time while the worker was busy" "$work/tour.log" "$work/bad.log" >&2 || true
echo "gui_script_e2e: PASS"
