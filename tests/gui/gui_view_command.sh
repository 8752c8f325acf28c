#!/usr/bin/env bash
# Reproducible views: File > Copy settings as command gives an `attnlab report` line that
# writes the very figure File > Export wrote. Under Xvfb a script (scripts/view_command*.script)
# sets views that are not the default (a layer, a clicked query, head fusion max/min, a
# head, rollouts, Grad-CAM of a class, gradient rollout of every model, the cls token's
# maps, another model depth, colormaps, alpha, upsampling, [0, max] normalisation), exports
# each as PNG and copies its command (script command copy-command). Each command is then
# run with the built CLI (only the program path and --out replaced); its --figures must
# leave exactly one PNG, which must equal the GUI's export pixel for pixel: both are drawn
# by the same figure function with the same style and renderer at the same 200 dpi from
# maps computed by the same code, so no tolerance is allowed (png_compare.py). Both run
# with one LibTorch thread (ATTNLAB_THREADS=1): LibTorch's parallel reductions round
# differently with another thread count (a gradient rollout at 2 threads against 1
# differs in 6 pixels by one level), and the GUI takes cores - 1 threads, the CLI all.
# A control run of the first command without its view options must give another figure.
# Usage: tests/gui/gui_view_command.sh <path/to/attnlab> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_view_command: SKIP: no xvfb-run" >&2; exit 77; }
work="$(mktemp -d)"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
export ATTNLAB_THREADS=1  # the GUI and the CLI with the same thread count (see above)
fail() { echo "gui_view_command: FAIL: $*" >&2; exit 1; }

run_script() {  # script file, log file, extra sed substitution
  sed -e "s|@OUT@|$work|g" -e "s|@ROOT@|$root|g" -e "${3:-s|@DEIT@|@DEIT@|}" "$1" >"$work/run.script"
  # A fresh settings file each run: the view options a run leaves are not the next one's.
  ATTNLAB_SETTINGS="$work/settings_$(basename "$1").json" timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty --script "$work/run.script" \
    >"$2" 2>&1 || { cat "$2" >&2; fail "$(basename "$1") exited with an error"; }
}

# Runs command file $1 (the copied line) with the built CLI into $work/$2; prints the one PNG.
run_copied() {
  local line
  line="$(cat "$1")"
  [[ "$line" == "attnlab report "* ]] || fail "$1 is not an attnlab report command: $line"
  [[ "$line" == *" --out attnlab-report" ]] || fail "$1 does not end in --out attnlab-report: $line"
  line="${line%attnlab-report}$work/$2"
  eval "\"\$attnlab\" ${line#attnlab }" >"$work/$2.log" 2>&1 ||
    { cat "$work/$2.log" >&2; fail "the copied command failed: $(cat "$1")"; }
  local pngs=("$work/$2"/figures/*.png)
  [[ ${#pngs[@]} == 1 && -f "${pngs[0]}" ]] || fail "$1 wrote ${#pngs[@]} PNGs: ${pngs[*]}"
  echo "${pngs[0]}"
}

check_view() {  # case name, options its command must carry...
  local name="$1" png
  shift
  [[ -s "$work/$name.png" ]] || fail "no export $name.png"
  [[ -s "$work/$name.cmd" ]] || fail "no copied command $name.cmd"
  for option in "$@"; do
    grep -q -- "$option" "$work/$name.cmd" || fail "$name.cmd lacks '$option': $(cat "$work/$name.cmd")"
  done
  png="$(run_copied "$work/$name.cmd" "r_$name")"
  echo "gui_view_command: $name: $(cat "$work/$name.cmd")"
  python3 "$root/tests/gui/png_compare.py" "$work/$name.png" "$png" ||
    fail "$name: the report's $(basename "$png") is not the GUI's export"
}

run_script "$root/tests/gui/scripts/view_command.script" "$work/zoo.log"
check_view v1 "--figures head_maps" "--layer 1 " "--query 3,9" "--colormap magma" \
  "--alpha 0.35 " "--upsample nearest" "--norm divmax" "--dpi 200"
check_view v1b "--figures map" "--layer 1/4" "--head 1" "--colormap magma"
check_view v2 "--figures compare" "--map query" "--layer 2/4" "--head-fusion max"
check_view v2b "--figures compare" "--compare-scale shared" "--compare-difference 2,0"
check_view v3 "--layer 0/4" "--head 1" "--colormap cividis" "--upsample bilinear"
check_view v4 "--analyses maps,rollout" "--map rollout" "--query 3,9"
check_view v4b "--fusion max" "--residual 0.3" "--discard 0.2" "--no-renormalize"
check_view v5 "--figures map" "--map rollout"
check_view v6 "--analyses gradcam" "--figures explanations" "--class 2" "--norm minmax"
check_view v7 "--analyses gradrollout" "hilo.safetensors" "rala.safetensors" "softmax.safetensors"

# Control: without its layer, query and normalisation the first command draws another
# figure, so the comparisons above can fail.
sed -e 's/ --layer 1 / /' -e 's/ --query 3,9//' -e 's/ --norm divmax//' "$work/v1.cmd" >"$work/c1.cmd"
control="$(run_copied "$work/c1.cmd" r_control)"
if python3 "$root/tests/gui/png_compare.py" "$work/v1.png" "$control" >/dev/null; then
  fail "the report draws the same figure without the view options: the check is void"
fi

deit="${ATTNLAB_SHARED:-$root/../shared}/fixtures/parity/deit_mini.safetensors"
if [[ -f "$deit" ]]; then
  run_script "$root/tests/gui/scripts/view_command_cls.script" "$work/deit.log" "s|@DEIT@|$deit|g"
  check_view v8 "--query-token 0" "--layer 0 " "--figures head_maps"
  check_view v9 "--layer 2/4" "--head-fusion min" "deit_mini.safetensors"
  check_view v10 "--map rollout"
else
  echo "gui_view_command: note: $deit not found; the cls-token and depth cases were not run"
fi
echo "gui_view_command: PASS"
