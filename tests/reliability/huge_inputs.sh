#!/usr/bin/env bash
# Inputs built to exhaust memory are refused before anything large is allocated, with a
# message that names the file and the limit, in the CLI and in the GUI (which keeps
# running):
#   bomb.png   a valid 30000 x 30000 PNG of one colour: 2.6 MB on disk, 2.7 GB decoded
#   tall.png   a 1 x 400000 PNG: 400000 pixels pass the decoder, but the models' resize of
#              its shorter side to 28 would make it 28 x 11200000 (313 M pixels)
#   --img-size 634 on the zoo softmax ViT: 10^5 tokens, a forward of about 150 GB
# The resident memory of each refusing run is measured (GNU time) and must stay far below
# what decoding would take.
# Usage: tests/reliability/huge_inputs.sh <attnlab binary> <repo root>
set -euo pipefail
attnlab="$(realpath "$1")"
root="$(realpath "$2")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"
fail() { echo "huge_inputs: FAIL: $*" >&2; exit 1; }

# A real PNG, streamed: rows of filter byte 0 and zeros, deflated chunk by chunk.
python3 - "$work" <<'PY'
import struct, sys, zlib
def png(path, w, h):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        z, row, data = zlib.compressobj(9), b"\0" * (1 + 3 * w), b""
        for _ in range(h):
            data += z.compress(row)
            if len(data) > 1 << 20:
                f.write(chunk(b"IDAT", data)); data = b""
        f.write(chunk(b"IDAT", data + z.flush()) + chunk(b"IEND", b""))
png(sys.argv[1] + "/bomb.png", 30000, 30000)
png(sys.argv[1] + "/tall.png", 1, 400000)
PY
echo "huge_inputs: bomb.png is $(du -k "$work/bomb.png" | cut -f1) KB on disk"
model="$root/models/zoo/softmax.safetensors"

# refuse <label> <message regex> <command...>: exit 1, one error matching the regex (it
# names the file or the estimate, and the limit), peak resident memory under 1 GB.
refuse() {
  local label="$1" message="$2"
  shift 2
  local out rc=0
  out="$( { /usr/bin/time -f "maxrss_kb %M" timeout $((300 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) "$@"; } 2>&1)" || rc=$?
  [[ $rc -eq 1 ]] || fail "$label: exit code $rc, expected 1\n$out"
  grep -Eq "attnlab: error: .*$message" <<<"$out" ||
    fail "$label: no message naming what is refused and the limit:\n$out"
  local rss
  rss="$(grep -Eo "maxrss_kb [0-9]+" <<<"$out" | cut -d' ' -f2)"
  ((rss < 1024 * 1024)) || fail "$label: resident memory reached $((rss / 1024)) MB"
  echo "huge_inputs: ok: $label: $(grep -m1 "attnlab: error:" <<<"$out" | cut -c1-160)... (peak RSS $((rss / 1024)) MB)"
}
pixels="(bomb|tall)\.png.*over the limit of [0-9]+ pixels"
[[ -x /usr/bin/time ]] || { echo "huge_inputs: SKIP: /usr/bin/time is missing (apt-get install time)" >&2; exit 77; }
refuse "classify bomb.png" "$pixels" "$attnlab" classify --checkpoint "$model" "$work/bomb.png"
refuse "classify tall.png" "$pixels" "$attnlab" classify --checkpoint "$model" "$work/tall.png"
refuse "analyze bomb.png" "$pixels" "$attnlab" analyze --model "$model" --images "$work/bomb.png" --out "$work/out"
[[ ! -e "$work/out" ]] || [[ -z "$(find "$work/out" -type f -not -name '*settings.json')" ]] ||
  fail "analyze wrote results for a refused image"

# 10^5 tokens: the zoo's softmax ViT (2-pixel patches) at --img-size 634 is a 317 x 317
# grid, 100489 tokens; its scores alone would be 150 GB. The forward is refused before it
# starts (models/memory_estimate.h), naming the estimate, the budget and what to change.
small="$root/assets/fashion-mnist/09-ankle-boot-00000.png"
budget="634.634 would need about [0-9.]+ GB .*over the memory budget of .*--img-size.*--max-memory"
refuse "classify at 10^5 tokens" "$budget" "$attnlab" classify --checkpoint "$model" --img-size 634 "$small"
refuse "analyze at 10^5 tokens" "$budget" "$attnlab" analyze --model "$model" --img-size 634 --images "$small" --out "$work/tokens"
[[ ! -e "$work/tokens" ]] || [[ -z "$(find "$work/tokens" -type f -name '*.png')" ]] ||
  fail "analyze wrote figures for a refused forward"
# A budget that fits lets the same model run at a size it can take; a malformed one is a
# usage error.
"$attnlab" --max-memory 2G classify --checkpoint "$model" --img-size 56 "$small" >/dev/null ||
  fail "classify at 56 px under a 2 GB budget failed"
rc=0
"$attnlab" --max-memory 8X info >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--max-memory 8X: exit code $rc, expected 2 (usage)"
rc=0
out="$("$attnlab" --max-memory 1M classify --checkpoint "$model" "$small" 2>&1)" || rc=$?
[[ $rc -eq 1 ]] && grep -q "over the memory budget of 1.00 MB (--max-memory 1M)" <<<"$out" ||
  fail "a 1 MB budget did not refuse the 28-pixel forward:\n$out"
echo "huge_inputs: ok: --max-memory 2G runs, 1M refuses, 8X is a usage error"

if command -v xvfb-run >/dev/null && "$attnlab" info 2>/dev/null | grep -q "^gui: built"; then
  printf '%s\n' "open-model $model" "wait-idle 600" "open-image $work/bomb.png" "wait-idle 600" \
    "frames 2" "expect-error" "open-image $root/assets/fashion-mnist/09-ankle-boot-00000.png" \
    "wait-idle 600" "frames 2" "expect-no-error" "screenshot $work/after.png" "quit" >"$work/gui.script"
  rc=0
  out="$(timeout $((1200 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty \
    --script "$work/gui.script" 2>&1)" || rc=$?
  [[ $rc -eq 0 ]] || fail "GUI: exit code $rc\n$out"
  [[ -s "$work/after.png" ]] || fail "GUI: no screenshot after the refused image"
  echo "huge_inputs: ok: GUI refused bomb.png (error shown) and went on to analyse the next image"
  # The GUI at 10^5 tokens: loading the model at that size runs a first forward, which is
  # refused; the model stays as it was (28 px, analysed), the sidebar and the status bar
  # give the budget's message, and the interface goes on.
  printf '%s\n' "open-model $model" "open-image $small" "wait-idle 600" "img-size 0 634 634" \
    "wait-idle 600" "frames 3" "expect-error" "model-info $work/big.json" "click-token 3 3" \
    "wait-idle 600" "expect-answered" "quit" >"$work/budget.script"
  rc=0
  out="$(timeout $((1200 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty \
    --script "$work/budget.script" 2>&1)" || rc=$?
  [[ $rc -eq 0 ]] || fail "GUI at 10^5 tokens: exit code $rc\n$out"
  python3 - "$work/big.json" <<'PY' || fail "GUI at 10^5 tokens"
import json, sys
j = json.load(open(sys.argv[1]))
err = j.get("option_error", "")
if "over the memory budget" not in err or j["input_size"] != [28, 28] or j["analysis"] != "ready":
    sys.exit(f"huge_inputs: input {j['input_size']}, analysis {j['analysis']!r}, option error {err!r}")
print("huge_inputs: ok: GUI at 10^5 tokens: " + err[:100] + "...")
PY
  echo "huge_inputs: ok: GUI refused the 10^5-token size; the model stayed at 28 px and answers"
fi
echo "huge_inputs: PASS"
