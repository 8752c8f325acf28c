#!/usr/bin/env bash
# Issue 68's views in the GUI, under Xvfb (scripts/mechanism_views.script): every 2023–25
# zoo model opened, a query clicked and its special view shown (agents, routed regions,
# sampling points; the kernel rows in the Maps tab), each query-following view at two
# queries, and the ToMe fixture merged from the script (`merge`) with its groups shown.
# Screenshots are checked for content and change (png_checks.py); the merged model's state
# (model-info) for its option. Set KEEP=1 to keep the folder.
# Usage: tests/gui/gui_mechanism_views.sh <path/to/attnlab> <repo root> <shared dir>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
shared="$(realpath "$3")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_mechanism_views: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings
fail() { echo "gui_mechanism_views: FAIL: $*" >&2; exit 1; }

sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" -e "s|@SHARED@|$shared|g" \
  "$root/tests/gui/scripts/mechanism_views.script" >"$work/run.script"
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1600x1000x24" "$attnlab" gui --empty --script "$work/run.script" \
  >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; fail "the script exited with an error"; }

python3 - "$work" <<'PY' || fail "the merged model"
import json, sys
t = json.load(open(sys.argv[1] + "/tome.json"))
if t["status"] != "ready" or t["options"]["merge"] != 6 or t["option_error"]:
    sys.exit(f"tome: {t['status']} {t['options']} {t['option_error']}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" agent_q1.png agent_q2.png agent_pvt.png \
  biformer_q1.png biformer_q2.png dat_q1.png dat_q2.png mlla.png inline.png pola.png \
  tome_merges.png || fail "screenshot checks"
echo "gui_mechanism_views: PASS"
