#!/usr/bin/env bash
# What-if editing in the GUI (issue 48), driven by scripts/edit.script under Xvfb: painting
# (a press and a drag), Undo stroke by stroke, and the edited − original view. Checks:
#  - the edit list after each step (the script's expect-edits);
#  - the painted view differs from the view before, and Undo back to no edits gives the
#    figure before pixel for pixel (the unedited analysis is kept and shown again, so it is
#    the same figure from the same maps: no tolerance);
#  - undoing the paint and paste strokes gives the painted figure again, pixel for pixel
#    (the same edits analysed again by the same code, one thread);
#  - the statistics of the edited image differ from the original's, and an edits file lies
#    beside the exported statistics and figure (only when the image is edited);
#  - the difference view is drawn (its export's caption names edited − original);
#  - the workspace saved after painting opens (a second run) with the edits in place and
#    shows the painted view again, pixel for pixel;
#  - the copied command carries --edit and, run with the CLI, writes the figure Export
#    wrote, pixel for pixel (as gui_view_command.sh: same code, same thread count).
# Usage: tests/gui/gui_edit.sh <path/to/attnlab> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_edit: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_THREADS=1  # the GUI and the CLI with the same thread count
export ATTNLAB_SETTINGS="$work/settings.json"
fail() { echo "gui_edit: FAIL: $*" >&2; exit 1; }
same() { python3 "$root/tests/gui/png_compare.py" "$1" "$2" >/dev/null; }

run_script() {  # name (scripts/NAME.script)
  sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" "$root/tests/gui/scripts/$1.script" >"$work/$1.script"
  timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" \
    "$attnlab" gui --empty --script "$work/$1.script" >"$work/$1.log" 2>&1 ||
    { cat "$work/$1.log" >&2; fail "the $1 script exited with an error"; }
}
run_script edit

for f in before painted painted_again difference undone; do
  [[ -s "$work/$f.png" ]] || fail "no screenshot $f.png"
done
same "$work/before.png" "$work/painted.png" && fail "painting changed nothing in the view"
same "$work/painted.png" "$work/painted_again.png" ||
  fail "after undoing two strokes the view is not the painted one: $(python3 "$root/tests/gui/png_compare.py" "$work/painted.png" "$work/painted_again.png")"
same "$work/before.png" "$work/undone.png" ||
  fail "undo back to no edits is not the view before: $(python3 "$root/tests/gui/png_compare.py" "$work/before.png" "$work/undone.png")"
python3 "$root/tests/gui/png_checks.py" "$work" difference.png >/dev/null || fail "the difference view is empty"
grep -q "edited − original on a diverging scale" "$work/edit.log" ||
  fail "the difference export's caption does not name edited − original"

# Statistics: the edited image's differ, and its edits lie beside them.
[[ -f "$work/stats_before/edits.txt" ]] && fail "an unedited image's statistics have an edits file"
[[ -f "$work/stats_painted/edits.txt" ]] || fail "no edits.txt beside the edited image's statistics"
diff -rq "$work/stats_before" "$work/stats_painted" -x edits.txt >/dev/null &&
  fail "the edited image's statistics are the original's"
edits="occlude:3,3,2,128,128,128;occlude:3,5,2,128,128,128"
[[ "$(tail -n 1 "$work/stats_painted/edits.txt")" == "$edits" ]] || fail "stats edits.txt: $(cat "$work/stats_painted/edits.txt")"
[[ "$(tail -n 1 "$work/painted_export.edits.txt")" == "$edits" ]] ||
  fail "no edits file beside the exported figure"

# The workspace saved after painting opens with the edits in place: the same view.
[[ -s "$work/edited.attnlab" ]] || fail "no saved workspace"
grep -q '"edits": "occlude:3,3,2,128,128,128;occlude:3,5,2,128,128,128"' "$work/edited.attnlab" ||
  fail "the saved workspace lacks the edits: $(cat "$work/edited.attnlab")"
run_script edit_reopen
same "$work/painted.png" "$work/reopened.png" ||
  fail "the reopened workspace's view is not the painted one: $(python3 "$root/tests/gui/png_compare.py" "$work/painted.png" "$work/reopened.png")"

# Replay: the copied command, run with the CLI, writes the exported figure.
line="$(cat "$work/painted.cmd")"
[[ "$line" == *"--edit $edits"* || "$line" == *"--edit '$edits'"* ]] || fail "the copied command has no --edit: $line"
line="${line%attnlab-report}$work/replay"
eval "\"\$attnlab\" ${line#attnlab }" >"$work/replay.log" 2>&1 ||
  { cat "$work/replay.log" >&2; fail "the copied command failed: $line"; }
pngs=("$work/replay"/figures/*.png)
[[ ${#pngs[@]} == 1 && -f "${pngs[0]}" ]] || fail "the copied command wrote ${#pngs[@]} PNGs"
python3 "$root/tests/gui/png_compare.py" "$work/painted_export.png" "${pngs[0]}" ||
  fail "the copied command's figure is not the GUI's export of the edited image"
echo "gui_edit: painting, undo, the difference view and the replayed command check out"
