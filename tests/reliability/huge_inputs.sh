#!/usr/bin/env bash
# Inputs built to exhaust memory are refused before anything large is allocated, with a
# message that names the file and the limit, in the CLI and in the GUI (which keeps
# running):
#   bomb.png   a valid 30000 x 30000 PNG of one colour: 2.6 MB on disk, 2.7 GB decoded
#   tall.png   a 1 x 400000 PNG: 400000 pixels pass the decoder, but the models' resize of
#              its shorter side to 28 would make it 28 x 11200000 (313 M pixels)
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

# refuse <label> <command...>: exit 1, one error naming the file and the limit, RSS bounded.
refuse() {
  local label="$1"
  shift
  local out rc=0
  out="$( { /usr/bin/time -f "maxrss_kb %M" timeout 300 "$@"; } 2>&1)" || rc=$?
  [[ $rc -eq 1 ]] || fail "$label: exit code $rc, expected 1\n$out"
  grep -Eq "attnlab: error: .*(bomb|tall)\.png.*over the limit of [0-9]+ pixels" <<<"$out" ||
    fail "$label: no message naming the file and the limit:\n$out"
  local rss
  rss="$(grep -Eo "maxrss_kb [0-9]+" <<<"$out" | cut -d' ' -f2)"
  ((rss < 1024 * 1024)) || fail "$label: resident memory reached $((rss / 1024)) MB"
  echo "huge_inputs: ok: $label: $(grep -m1 "attnlab: error:" <<<"$out") (peak RSS $((rss / 1024)) MB)"
}
[[ -x /usr/bin/time ]] || { echo "huge_inputs: SKIP: /usr/bin/time is missing (apt-get install time)" >&2; exit 77; }
refuse "classify bomb.png" "$attnlab" classify --checkpoint "$model" "$work/bomb.png"
refuse "classify tall.png" "$attnlab" classify --checkpoint "$model" "$work/tall.png"
refuse "analyze bomb.png" "$attnlab" analyze --model "$model" --images "$work/bomb.png" --out "$work/out"
[[ ! -e "$work/out" ]] || [[ -z "$(find "$work/out" -type f -not -name '*settings.json')" ]] ||
  fail "analyze wrote results for a refused image"

if command -v xvfb-run >/dev/null && "$attnlab" info 2>/dev/null | grep -q "^gui: built"; then
  printf '%s\n' "open-model $model" "wait-idle 600" "open-image $work/bomb.png" "wait-idle 600" \
    "frames 2" "expect-error" "open-image $root/assets/fashion-mnist/09-ankle-boot-00000.png" \
    "wait-idle 600" "frames 2" "expect-no-error" "screenshot $work/after.png" "quit" >"$work/gui.script"
  rc=0
  out="$(timeout 1200 xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --empty \
    --script "$work/gui.script" 2>&1)" || rc=$?
  [[ $rc -eq 0 ]] || fail "GUI: exit code $rc\n$out"
  [[ -s "$work/after.png" ]] || fail "GUI: no screenshot after the refused image"
  echo "huge_inputs: ok: GUI refused bomb.png (error shown) and went on to analyse the next image"
fi
echo "huge_inputs: PASS"
