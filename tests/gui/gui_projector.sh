#!/usr/bin/env bash
# Issue 70's Projector tab under Xvfb (scripts/projector.script): `attnlab embed` writes the
# 30 committed Fashion-MNIST samples (assets/fashion-mnist) as a class-folder tree; the GUI
# opens the folder, projects it by PCA and then t-SNE, colours it by a head's entropy (the
# folder is embedded with --heads: the extremes list's first row is head_extremes.csv's),
# hovers a point (its thumbnail decoded), clicks one (its image opens in the workspace and
# is the current image), selects a box (a group of some but not all points, with its
# accuracy), and each step's screenshot has content and differs from the one before. Then a
# second model's folder of the same images (rala) opens as the comparison: projected alike,
# drawn beside the first with the same group highlighted; a folder of other images is
# refused. With a model open, the group's mean attention map and the rest's are computed
# (15 and 15 images). Set KEEP=1 to keep the folder, SHOT=FILE to copy the selection's
# screenshot.
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
"$attnlab" embed --model "$root/models/zoo/softmax.safetensors" --images "$work/tree" --heads \
  --out "$work/emb" >"$work/embed.log" 2>&1 || { cat "$work/embed.log" >&2; fail "attnlab embed"; }
"$attnlab" embed --model "$root/models/zoo/rala.safetensors" --images "$work/tree" \
  --out "$work/emb2" >"$work/embed2.log" 2>&1 || { cat "$work/embed2.log" >&2; fail "attnlab embed (rala)"; }
# Other images: one class folder only.
mkdir -p "$work/other-tree"
cp -r "$(find "$work/tree" -mindepth 1 -maxdepth 1 -type d | sort | head -1)" "$work/other-tree/"
"$attnlab" embed --model "$root/models/zoo/softmax.safetensors" --images "$work/other-tree" \
  --out "$work/other" >"$work/embed3.log" 2>&1 || { cat "$work/embed3.log" >&2; fail "attnlab embed (other)"; }

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
heads = info("heads")
h = heads["head_stats"]
if heads["colour"] != "head-entropy" or not h["available"] or h["error"] \
        or h["layer"] != 1 or h["head"] != 0 or h["path"] != "blocks.1.attn":
    sys.exit(f"head entropy colouring: {heads['colour']} {h}")
if h["finite"] != 30 or len(h["range"]) != 2 or not 0 <= h["range"][0] <= h["range"][1] <= 1:
    sys.exit(f"head entropy range: {h}")
csv_rows = [r for r in csv.DictReader(open(w + "/emb/head_extremes.csv"))
            if r["layer"] == "1" and r["head"] == "0"]
sharp = sorted((r for r in csv_rows if r["kind"] == "sharpest"), key=lambda r: int(r["rank"]))
broad = [r for r in csv_rows if r["kind"] == "broadest"]
if not sharp or len(h["sharpest"]) != len(sharp) or len(h["broadest"]) != len(broad):
    sys.exit(f"the extremes list: {len(h['sharpest'])} / {len(h['broadest'])} rows, "
             f"head_extremes.csv {len(sharp)} / {len(broad)}")
first = h["sharpest"][0]
if first["row"] != int(sharp[0]["row"]) or abs(first["head_entropy"] - float(sharp[0]["entropy"])) > 1e-4 \
        or first["image"] != rows[first["row"]]["image"] or abs(first["head_entropy"] - h["range"][0]) > 1e-6:
    sys.exit(f"the first sharpest row: {first}, head_extremes.csv: {dict(sharp[0])}")
hover = info("hover")
if hover["hovered"] != 3 or hover["hovered_image"] != rows[3]["image"] or not hover["hovered_thumbnail"]:
    sys.exit(f"hover: {hover}")
click = info("click")
if click["clicked"] != 5 or click["opened_path"] != rows[5]["image"]:
    sys.exit(f"click: {click}")
if rows[5]["image"] not in click["workspace_images"] or click["current_image"] != rows[5]["image"]:
    sys.exit(f"the clicked image is not open and shown: {click['workspace_images']} {click['current_image']}")
sel = info("select")
if sel["colour"] != "correct":
    sys.exit(f"projector-color correct: {sel['colour']}")
if not 0 < sel["selected"] < 30:
    sys.exit(f"the box selected {sel['selected']} of 30 points")
if sel["selected_judged"] != sel["selected"] or not 0 <= sel["selected_correct"] <= sel["selected"]:
    sys.exit(f"the group's accuracy: {sel}")
if sel["selected_drawn"] != sel["selected"] or sel["compare"]["open"]:
    sys.exit(f"the main plot highlights {sel['selected_drawn']} of {sel['selected']} selected")
refused = info("refused")
if refused["compare"]["open"] or "not the same images" not in refused["compare"]["error"]:
    sys.exit(f"a folder of other images was not refused: {refused['compare']}")
cmp = info("compare")
c = cmp["compare"]
if not c["open"] or c["points"] != 30 or not c["projected"] or c["error"]:
    sys.exit(f"the comparison: {c}")
if c["method"] != "t-SNE" or "perplexity 5" not in c["note"]:
    sys.exit(f"the comparison is not projected as the first plot: {c}")
if cmp["selected"] != sel["selected"] or c["selected_drawn"] != cmp["selected"] \
        or cmp["selected_drawn"] != cmp["selected"]:
    sys.exit(f"the group is not highlighted alike: {cmp['selected']} selected, "
             f"{cmp['selected_drawn']} drawn in A, {c['selected_drawn']} in B")
if c["selected_judged"] != cmp["selected"]:
    sys.exit(f"the second model's group accuracy: {c}")
gm = info("groupmaps")["group_maps"]
if not gm["shown"] or gm["error"] or gm["failed"]:
    sys.exit(f"group maps: {gm}")
if gm["group_images"] != sel["selected"] or gm["rest_images"] != 30 - sel["selected"] \
        or gm["group_total"] != sel["selected"] or gm["cap"] != 64:
    sys.exit(f"group maps' counts: {gm}")
if gm["rows"] <= 0 or gm["cols"] <= 0 or not gm["query"] or not gm["layer"] or gm["group_mean"] <= 0:
    sys.exit(f"group maps' maps: {gm}")
closed = info("closed")
if closed["compare"]["open"] or closed["compare"]["selected_drawn"] != -1:
    sys.exit(f"the comparison did not close: {closed['compare']}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" pca.png heads.png hover.png select.png compare.png groupmaps.png ||
  fail "screenshot checks"
[[ -n "${SHOT:-}" ]] && cp "$work/select.png" "$SHOT"
echo "gui_projector: PASS"
