#!/usr/bin/env bash
# Issue 22 in the GUI, under Xvfb (scripts/model_options.script): a checkpoint with no
# config (deit_mini.pth) shows how it was recognised; a class-names file naming 3 of its
# 10 classes and an input size its patch size does not divide (100x100) are refused with
# the error shown and the model as it was; a JSON names file and the input size 160x192
# are applied: the model is analysed again at that size (its picture is 160x192) and its
# top-5 carry the file's names, which the copied report command also gives. The picture
# the model saw is shown; an unrecognisable checkpoint fails naming the nearest presets.
# The script's model-info command writes each state as JSON; screenshots are checked for
# content and change (png_checks.py). Set KEEP=1 to keep the folder.
# Usage: tests/gui/gui_model_options.sh <path/to/attnlab> <repo root> <shared dir>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
shared="$(realpath "$3")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_model_options: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings
fail() { echo "gui_model_options: FAIL: $*" >&2; exit 1; }

printf 'zero\none\ntwo\n' >"$work/three.txt"
python3 - "$work" <<'PY'
import json, struct, sys
out = sys.argv[1]
json.dump(["name %d" % i for i in range(10)], open(out + "/names.json", "w"))
# A valid safetensors file whose tensors belong to no known model.
header = json.dumps({"encoder.w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
open(out + "/foreign.safetensors", "wb").write(struct.pack("<Q", len(header)) + header + struct.pack("<f", 1.0))
PY
sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" -e "s|@SHARED@|$shared|g" \
  "$root/tests/gui/scripts/model_options.script" >"$work/run.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1600x1000x24" "$attnlab" gui --empty --script "$work/run.script" \
  >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; fail "the script exited with an error"; }

python3 - "$work" <<'PY' || fail "model states"
import json, sys
w = sys.argv[1]
def load(name): return json.load(open(f"{w}/{name}.json"))
def check(ok, what):
    if not ok: sys.exit(f"gui_model_options: {what}")
o = load("opened")
check(o["status"] == "ready", f"opened: {o['status']} {o['error']}")
check(o["recognition"].startswith("recognised as a vit like deit_tiny_patch16_224"), "recognition: " + o["recognition"])
check("not in the weights" in o["recognition"], "the recognition names what it assumed")
check(o["input_size"] == [224, 224] and o["picture"] == [224, 224], "opened at 224x224")
check(o["top5"][0]["name"].startswith("class "), "no names before a file: " + o["top5"][0]["name"])
b = load("bad_names")
check("names 3 classes, but the model has 10" in b["option_error"], "bad names error: " + b["option_error"])
check(b["options"]["class_names"] == "" and b["top5"] == o["top5"], "a refused names file changes nothing")
n = load("named")
check(n["option_error"] == "" and n["options"]["class_names"].endswith("names.json"), "names applied")
check(all(p["name"] == "name %d" % p["class"] for p in n["top5"]), f"top-5 names: {n['top5']}")
s = load("bad_size")
check("patch_size 16" in s["option_error"], "bad size error: " + s["option_error"])
check(s["input_size"] == [224, 224] and s["options"]["img_size"] == [] and s["top5"] == n["top5"], "a refused size changes nothing")
r = load("resized")
check(r["input_size"] == [160, 192] and r["picture"] == [160, 192], f"resized: {r['input_size']} {r.get('picture')}")
check("center crop 160x192" in r["preprocessing"], "preprocessing: " + r["preprocessing"])
check(all(p["name"] == "name %d" % p["class"] for p in r["top5"]), "names kept at the new size")
check(r["top5"] != n["top5"], "the analysis ran again at the new size")
f = load("foreign")
check(f["status"] == "failed" and "Nearest presets" in f["error"], "foreign: " + f["error"])
PY
grep -q -- "--class-names $work/names.json" "$work/top5.cmd" || fail "the copied command lacks the names file: $(cat "$work/top5.cmd")"
grep -q -- "--img-size 160,192" "$work/top5.cmd" || fail "the copied command lacks the input size: $(cat "$work/top5.cmd")"
python3 "$root/tests/gui/png_checks.py" "$work" shot_opened.png shot_bad_size.png shot_resized.png \
  shot_input.png shot_top5.png shot_foreign.png || fail "screenshot checks"
echo "gui_model_options: PASS"
