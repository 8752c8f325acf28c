#!/usr/bin/env bash
# The GUI soak (issue 29): a seeded random script of valid actions (scripts/gui_soak.py)
# run under Xvfb while the resident memory of the process is sampled every 0.5 s.
# Passes when the script ends with exit 0 (no crash, no error other than the expected
# ones it checks), and the memory after warm-up is bounded: the peak over the last half
# of the run is at most 1.25 x the peak over the second quarter plus 64 MB (the first
# quarter is the warm-up: LibTorch, fonts, the first models and textures).
# Usage: tests/gui/gui_soak.sh <attnlab> <repo root> [SEED] [ACTIONS] [CSV]
#   CSV: keep the memory curve (seconds, RSS in MB) there.
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
seed="${3:-1}"
actions="${4:-300}"
csv_out="${5:-}"
command -v xvfb-run >/dev/null 2>&1 || { echo "gui_soak: SKIP: no xvfb-run" >&2; exit 77; }
"$attnlab" info 2>/dev/null | grep -q "^gui: built" || { echo "gui_soak: SKIP: no GUI" >&2; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"
fail() { echo "gui_soak: FAIL: $*" >&2; exit 1; }

mkdir -p "$work/out"
head -c 400 "$root/assets/fashion-mnist/09-ankle-boot-00000.png" >"$work/out/broken.png"
python3 "$root/scripts/gui_soak.py" --seed "$seed" --actions "$actions" --root "$root" \
  --out "$work/out" >"$work/soak.script"
python3 "$root/scripts/gui_soak.py" --seed "$seed" --actions "$actions" --root "$root" \
  --out "$work/out" | cmp -s - "$work/soak.script" || fail "seed $seed gave two different scripts"
echo "gui_soak: seed $seed, $actions actions, $(wc -l <"$work/soak.script") script lines"

start=$(date +%s.%N)
# ATTNLAB_SCRIPT_WAIT_SCALE (whole number, default 1) stretches the limit for slow builds
# (sanitizers), as it stretches the script's own waits.
timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty \
  --script "$work/soak.script" >"$work/log" 2>&1 &
runner=$!
: >"$work/rss.csv"
while kill -0 "$runner" 2>/dev/null; do
  pid="$(pgrep -f -n "attnlab gui --empty --script $work/soak.script" || true)"
  if [[ -n "$pid" && -r "/proc/$pid/status" ]]; then
    kb="$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [[ -n "$kb" ]] && awk -v s="$start" -v n="$(date +%s.%N)" -v m="$((kb / 1024))" \
      'BEGIN { printf "%.2f %d\n", n - s, m }' >>"$work/rss.csv"
  fi
  sleep 0.5
done
rc=0
wait "$runner" || rc=$?
[[ -z "$csv_out" ]] || cp "$work/rss.csv" "$csv_out"
[[ $rc -eq 0 ]] || { grep -v "^libpng error" "$work/log" | tail -n 30 >&2; fail "the soak script exited with $rc"; }
python3 - "$work/rss.csv" <<'PY' || fail "resident memory kept growing after warm-up"
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
if len(rows) < 8:
    sys.exit(f"gui_soak: only {len(rows)} memory samples")
end = rows[-1][0]
q = lambda a, b: max(r for t, r in rows if a * end <= t <= b * end)
warm, late = q(0.25, 0.5), q(0.5, 1.0)
curve = ", ".join(f"{int(100 * f)}% {q(max(0, f - 0.1), f):.0f}" for f in (0.1, 0.25, 0.5, 0.75, 1.0))
print(f"gui_soak: {end:.0f} s; peak RSS (MB) by time: {curve}; second quarter {warm:.0f}, "
      f"last half {late:.0f}, bound {1.25 * warm + 64:.0f}")
sys.exit(0 if late <= 1.25 * warm + 64 else 1)
PY
echo "gui_soak: PASS"
