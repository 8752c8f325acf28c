#!/usr/bin/env bash
# Issue 70's Projector tab under Xvfb (scripts/projector.script): `attnlab embed` writes the
# 30 committed Fashion-MNIST samples (assets/fashion-mnist) as a class-folder tree; the GUI
# opens the folder, projects it by PCA and then t-SNE, hovers a point (its thumbnail
# decoded), clicks one (its image opens in the workspace and is the current image), selects
# a box (a group of some but not all points, with its accuracy), and each step's screenshot
# has content and differs from the one before. Set KEEP=1 to keep the folder, SHOT=FILE to
# copy the selection's screenshot.
# Usage: tests/gui/gui_projector.sh <path/to/attnlab> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_projector: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings
fail() { echo "gui_projector: FAIL: $*" >&2; exit 1; }

# The samples as DIR/<NN-class>/<png>, from their names' "NN-class" prefix: labelled images.
for f in "$root"/assets/fashion-mnist/*.png; do
  name="$(basename "$f")"
  class="$(echo "$name" | sed -E 's/^([0-9]+-[a-z-]+)-[0-9]+\.png$/\1/')"
  mkdir -p "$work/tree/$class"
  cp "$f" "$work/tree/$class/"
done
"$attnlab" embed --model "$root/models/zoo/softmax.safetensors" --images "$work/tree" \
  --out "$work/emb" >"$work/embed.log" 2>&1 || { cat "$work/embed.log" >&2; fail "attnlab embed"; }

sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" "$root/tests/gui/scripts/projector.script" \
  >"$work/run.script"
timeout $((1800 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" \
  "$attnlab" gui --empty --script "$work/run.script" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log" >&2; fail "the script exited with an error"; }

python3 - "$work" <<'PY' || fail "the projector's state"
import csv, json, sys
w = sys.argv[1]
rows = list(csv.DictReader(open(w + "/emb/images.csv")))
assert len(rows) == 30, len(rows)
def info(name):
    return json.load(open(f"{w}/{name}.json"))
pca = info("pca")
if pca["points"] != 30 or not pca["projected"] or pca["method"] != "PCA" or pca["error"]:
    sys.exit(f"PCA: {pca}")
if "of the variance" not in pca["note"]:
    sys.exit(f"PCA's note: {pca['note']!r}")
tsne = info("tsne")
if tsne["method"] != "t-SNE" or "perplexity 5" not in tsne["note"] or tsne["error"]:
    sys.exit(f"t-SNE: {tsne}")
hover = info("hover")
if hover["hovered"] != 3 or hover["hovered_image"] != rows[3]["image"] or not hover["hovered_thumbnail"]:
    sys.exit(f"hover: {hover}")
click = info("click")
if click["clicked"] != 5 or click["opened_path"] != rows[5]["image"]:
    sys.exit(f"click: {click}")
if rows[5]["image"] not in click["workspace_images"] or click["current_image"] != rows[5]["image"]:
    sys.exit(f"the clicked image is not open and shown: {click['workspace_images']} {click['current_image']}")
sel = info("select")
if not 0 < sel["selected"] < 30:
    sys.exit(f"the box selected {sel['selected']} of 30 points")
if sel["selected_judged"] != sel["selected"] or not 0 <= sel["selected_correct"] <= sel["selected"]:
    sys.exit(f"the group's accuracy: {sel}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" pca.png hover.png select.png ||
  fail "screenshot checks"
[[ -n "${SHOT:-}" ]] && cp "$work/select.png" "$SHOT"
echo "gui_projector: PASS"
