#!/usr/bin/env bash
# Issue 69's prompt box in the GUI, under Xvfb (scripts/clip_prompts.script): a whole CLIP
# given two text prompts shows where each is in the image, its score and its Grad-CAM in
# the Prompts tab, and the second prompt's gradient rollout in the Maps tab; the exported
# statistics hold both prompts' scores; the model's state
# (model-info) says it has the prompts as its two classes, and again without them once
# they are taken off. Set KEEP=1 to keep the folder.
# Usage: tests/gui/gui_clip_prompts.sh <path/to/attnlab> <repo root> <shared dir>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
shared="$(realpath "$3")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_clip_prompts: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings
fail() { echo "gui_clip_prompts: FAIL: $*" >&2; exit 1; }

sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" -e "s|@SHARED@|$shared|g" \
  "$root/tests/gui/scripts/clip_prompts.script" >"$work/run.script"
timeout $((1800 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$attnlab" gui --empty --script "$work/run.script" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log" >&2; fail "the script exited with an error"; }

python3 - "$work" <<'PY' || fail "the model's state"
import json, sys
w = json.load(open(sys.argv[1] + "/with_prompts.json"))
if w["status"] != "ready" or w["options"]["prompts"] != ["a photo of a cat", "a dog"] or w["option_error"]:
    sys.exit(f"with prompts: {w['status']} {w['options']} {w['option_error']}")
if "prompt head from 2 text prompts" not in w["recognition"]:
    sys.exit(f"with prompts, recognition: {w['recognition']!r}")
o = json.load(open(sys.argv[1] + "/without_prompts.json"))
if o["status"] != "ready" or o["options"]["prompts"] or "prompt head" in o["recognition"]:
    sys.exit(f"without prompts: {o['status']} {o['options']} {o['recognition']!r}")
PY
# The Prompts tab's numbers: one row per prompt, their probabilities summing to 1.
python3 - "$work" <<'PY' || fail "the prompts' scores"
import csv, glob, sys
files = glob.glob(sys.argv[1] + "/stats/*prompt_scores*.csv")
if not files:
    sys.exit("no prompt_scores table among the exported statistics")
rows = list(csv.DictReader(open(files[0])))
if len(rows) != 2 or abs(sum(float(r["probability_mean"]) for r in rows) - 1) > 1e-4:
    sys.exit(f"prompt_scores: {rows}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" prompts.png prompt_gradrollout.png ||
  fail "screenshot checks"
[[ -n "${SHOT:-}" ]] && cp "$work/prompts.png" "$SHOT"
echo "gui_clip_prompts: PASS"
