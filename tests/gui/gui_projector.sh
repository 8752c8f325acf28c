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
# (15 and 15 images). Patch retrieval (issue 70 goal 4): refused in the pooled folder; in a
# folder of `attnlab embed --pool tokens`, a point's patch finds the matches `attnlab
# retrieve` writes, with their crops; the best one opens with its patch as the query; a copy
# of the image (no row of the folder) has its patch's vector computed by the model, and is
# refused with another model current.
# Set KEEP=1 to keep the folder, SHOT=FILE to copy the selection's screenshot,
# RETRIEVE_SHOT=FILE the patch retrieval's.
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

# Every patch's vector (patch retrieval), and a copy of row 5's image under another name.
"$attnlab" embed --model "$root/models/zoo/softmax.safetensors" --images "$work/tree" --pool tokens \
  --out "$work/tok" >"$work/embed4.log" 2>&1 || { cat "$work/embed4.log" >&2; fail "attnlab embed --pool tokens"; }
mkdir -p "$work/copy"
cp "$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[5]["image"])' \
  "$work/tok/images.csv")" "$work/copy/query.png"
# What the CLI finds for the queries the script asks: row 5's patch (6, 4), its image left
# out (16 best), and with it (8 best: the copy's query, which no row is).
"$attnlab" retrieve "$work/tok" --image 5 --patch 6,4 --k 16 --exclude-self \
  --out "$work/cli_retrieve.csv" >"$work/retrieve.log" 2>&1 || { cat "$work/retrieve.log" >&2; fail "attnlab retrieve"; }
"$attnlab" retrieve "$work/tok" --image 5 --patch 6,4 --k 8 \
  --out "$work/cli_retrieve_self.csv" >>"$work/retrieve.log" 2>&1 || { cat "$work/retrieve.log" >&2; fail "attnlab retrieve"; }

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
# Coloured by the same head's effective output rank: the range over the folder is that of
# head_output_rank.npy's column (the same float32 values, read from the same file; the JSON
# prints each float exactly enough to round-trip, so 1e-6 relative only covers printing).
rk = info("rank")
rh = rk["head_stats"]
# The .npy read here without numpy (the python3 on PATH may lack it): a little-endian
# float32 C-ordered (N, L, H) array after its header dict.
import ast, struct
raw = open(w + "/emb/head_output_rank.npy", "rb").read()
hlen = struct.unpack("<H", raw[8:10])[0]
hdr = ast.literal_eval(raw[10:10 + hlen].decode("latin1"))
n_, l_, h_ = hdr["shape"]
if hdr["descr"] != "<f4" or hdr["fortran_order"]:
    sys.exit(f"head_output_rank.npy: {hdr}")
vals = struct.unpack(f"<{n_ * l_ * h_}f", raw[10 + hlen:])
col = [vals[(i * l_ + 1) * h_ + 0] for i in range(n_)]
if rk["colour"] != "head-rank" or not rh["rank_available"] or rh["rank_finite"] != 30 \
        or abs(rh["rank_range"][0] - min(col)) > 1e-6 * min(col) \
        or abs(rh["rank_range"][1] - max(col)) > 1e-6 * max(col):
    sys.exit(f"head rank colouring: {rk['colour']} {rh.get('rank_range')} vs [{min(col)}, {max(col)}]")
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

# Patch retrieval. A folder of pooled vectors: refused, saying what it needs.
r = info("retrieve_refused")["retrieval"]
if r["available"] or r["matches"] or "--pool tokens" not in r["error"] or r["state"] != "error":
    sys.exit(f"patch retrieval in a pooled folder was not refused clearly: {r}")
# The tokens folder, row 5's patch (6, 4): the GUI runs the CLI's code on the same file
# (retrieval::TokenIndex and top_k_similar, whose scores do not depend on the thread count),
# with the query vector read from the same row, so the matches are the CLI's: the same rows
# and patches in the same order, the same scores (the CSV prints 9 digits: within 1e-6).
tok_rows = list(csv.DictReader(open(w + "/tok/images.csv")))
def cli(name):
    return list(csv.DictReader(open(f"{w}/{name}")))
ret = info("retrieve")
# A tokens folder's points are its images, each the mean of its 196 token vectors.
if ret["points"] != 30 or ret["dims"] != 128 or ret["tokens"] != 196:
    sys.exit(f"the tokens folder's points: {ret['points']} x {ret['dims']}, {ret['tokens']} tokens")
r = ret["retrieval"]
if not r["available"] or r["error"] or r["state"] != "done" or r["query_source"] != "stored" \
        or r["query_row"] != 5 or r["patch"] != [6, 4] or r["k"] != 16 or not r["exclude_self"] \
        or r["grid"] != [14, 14] or r["query_image"] != tok_rows[5]["image"]:
    sys.exit(f"patch retrieval: {dict((k, v) for k, v in r.items() if k != 'matches')}")
want = cli("cli_retrieve.csv")
if len(r["matches"]) != len(want) or len(want) != 16:
    sys.exit(f"{len(r['matches'])} matches, the CLI {len(want)}")
for m, c in zip(r["matches"], want):
    if m["place"] != int(c["rank"]) or m["image_row"] != int(c["image_index"]) \
            or m["image"] != c["image"] or m["label"] != c["label_name"] \
            or m["patch_y"] != int(c["patch_y"]) or m["patch_x"] != int(c["patch_x"]) \
            or abs(m["score"] - float(c["score"])) > 1e-6:
        sys.exit(f"match {m} differs from the CLI's {dict(c)}")
    if m["image_row"] == 5:
        sys.exit(f"the query's own image was not left out: {m}")
if r["crops_ready"] != 16 or r["crop_errors"]:
    sys.exit(f"crops: {r['crops_ready']} made, {r['crop_errors']} failed ({r['crop_error']})")
# The best match clicked: its image is open and current, its patch the query (folder grid).
best = r["matches"][0]
mt = info("match")
if mt["clicked"] != best["image_row"] or mt["current_image"] != best["image"] \
        or mt["current_image"] not in mt["workspace_images"] \
        or mt["query_cell"] != [best["patch_y"], best["patch_x"], 14, 14]:
    sys.exit(f"the best match did not open with its patch: {mt['clicked']} {mt['current_image']} "
             f"{mt['query_cell']}, match {best}")
# A copy of row 5's image: not a row, so its patch's vector is computed by the softmax model
# at the folder's block (one image, not a batch of 30: the same values to float rounding),
# and nothing is left out: the patch itself is the best match, the rest as the CLI has them.
r = info("computed")["retrieval"]
want = cli("cli_retrieve_self.csv")
if r["error"] or r["query_source"] != "computed" or r["query_row"] != -1 or r["exclude_self"] \
        or len(r["matches"]) != 8 or r["crops_ready"] != 8:
    sys.exit(f"a computed query: {dict((k, v) for k, v in r.items() if k != 'matches')}")
first = r["matches"][0]
if (first["image_row"], first["patch_y"], first["patch_x"]) != (5, 6, 4) or first["score"] < 0.9999:
    sys.exit(f"the copy's patch is not its own best match: {first}")
cli_scores = {(int(c["image_index"]), int(c["patch_y"]), int(c["patch_x"])): float(c["score"]) for c in want}
for m in r["matches"]:
    key = (m["image_row"], m["patch_y"], m["patch_x"])
    if key in cli_scores and abs(cli_scores[key] - m["score"]) > 1e-4:
        sys.exit(f"computed match {m}: the CLI's score is {cli_scores[key]}")
common = sum((m["image_row"], m["patch_y"], m["patch_x"]) in cli_scores for m in r["matches"])
if common < 6:
    sys.exit(f"a computed query finds {common} of the CLI's 8 matches: {r['matches']}")
# The rala model current: not the folder's, so the copy's query is refused, saying why (the
# last matches stay shown under the message).
r = info("retrieve_other_model")["retrieval"]
if r["state"] != "error" or "not the one the folder was embedded with" not in r["error"]:
    sys.exit(f"a query through another model was not refused clearly: {r['error']!r}")
PY
python3 "$root/tests/gui/png_checks.py" "$work" pca.png heads.png hover.png select.png compare.png groupmaps.png \
  retrieve.png ||
  fail "screenshot checks"
[[ -n "${SHOT:-}" ]] && cp "$work/select.png" "$SHOT"
[[ -n "${RETRIEVE_SHOT:-}" ]] && cp "$work/retrieve.png" "$RETRIEVE_SHOT"
echo "gui_projector: PASS"
