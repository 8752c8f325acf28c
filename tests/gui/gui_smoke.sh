#!/usr/bin/env bash
# GUI smoke test: runs `attnlab gui` in a virtual X display for a few frames and checks
# the screenshot it saves: exit code 0, a 1280x800 PNG, and real content (not one flat
# colour). Then runs it on a corrupt image and a corrupt checkpoint (and on a truncated
# PNG), which must still exit 0: errors are shown in the panels, never a crash.
# Usage: tests/gui/gui_smoke.sh <path/to/attnlab> <repo root>
# Needs xvfb-run (Debian: xvfb) and python3; exits 77 (ctest SKIP_RETURN_CODE) without
# xvfb-run, so a machine with no X server skips instead of failing.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <attnlab binary> <repo root>" >&2
  exit 2
fi
attnlab="$(realpath "$1")"
root="$(realpath "$2")"

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "gui_smoke: SKIP: xvfb-run not found (apt-get install xvfb)" >&2
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ATTNLAB_SETTINGS="$work/settings.json"  # never the user's own settings

fail() {
  echo "gui_smoke: FAIL: $*" >&2
  exit 1
}

# Runs the GUI for 30 frames under Xvfb; extra arguments are passed to `attnlab gui`.
run_gui() {
  local shot="$1"
  shift
  local rc=0
  timeout $((3600 * ${ATTNLAB_SCRIPT_WAIT_SCALE:-1})) xvfb-run -a -s "-screen 0 1280x800x24" \
    "$attnlab" gui "$@" --frames 30 --screenshot "$shot" || rc=$?
  return "$rc"
}

# Prints "<width> <height> <distinct colours> <missing>" of an 8-bit PNG, where <missing>
# lists those of the RRGGBB colours given after the path that no pixel has ("-" if none).
# Standard-library Python only (zlib + the five PNG row filters).
png_stats() {
  python3 - "$@" <<'PY'
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, hdr = 8, b"", None
while pos < len(data):
    (n,) = struct.unpack(">I", data[pos:pos + 4])
    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
width, height, depth, ctype, _, _, interlace = hdr
channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
if depth != 8 or channels is None or interlace != 0:
    sys.exit("unsupported PNG layout: depth %d, colour type %d, interlace %d" % (depth, ctype, interlace))
raw = zlib.decompress(idat)
stride, bpp = width * channels, channels
wanted = {bytes.fromhex(h) for h in sys.argv[2:]}
prev, colours, seen, i = bytearray(stride), set(), set(), 0
for _ in range(height):
    f, row = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        b = prev[x]
        if f == 1:
            row[x] = (row[x] + a) & 255
        elif f == 2:
            row[x] = (row[x] + b) & 255
        elif f == 3:
            row[x] = (row[x] + ((a + b) >> 1)) & 255
        elif f == 4:
            c = prev[x - bpp] if x >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    pixels = {bytes(row[x:x + 3]) for x in range(0, stride, channels)} if channels >= 3 else set()
    seen |= pixels & wanted
    if len(colours) < 4096:
        colours |= pixels or {bytes(row[x:x + channels]) for x in range(0, stride, channels)}
    prev = row
missing = sorted(c.hex() for c in wanted - seen)
print(width, height, len(colours), ",".join(missing) or "-")
PY
}

# check_screenshot <png> <min distinct colours> [RRGGBB that must appear ...]
check_screenshot() {
  local shot="$1" min_colours="$2"
  shift 2
  [[ -s "$shot" ]] || fail "no screenshot at $shot"
  local leftover
  leftover="$(compgen -G "$shot.tmp*" || true)"
  [[ -z "$leftover" ]] || fail "temporary file(s) left behind: $leftover"
  local stats
  stats="$(png_stats "$shot" "$@")" || fail "cannot read $shot as a PNG"
  read -r w h colours missing <<<"$stats"
  [[ "$w" == 1280 && "$h" == 800 ]] || fail "$shot is ${w}x${h}, expected 1280x800"
  ((colours >= min_colours)) || fail "$shot has only $colours distinct colour(s): blank window?"
  [[ "$missing" == "-" ]] || fail "$shot lacks the colour(s) $missing: is the image not shown?"
  echo "gui_smoke: $shot: ${w}x${h}, $colours+ distinct colours"
}

# 1. The demo image and, when the shared fixtures are there, a real checkpoint.
args=(--image "$root/assets/demo.png")
ckpt="$root/../shared/fixtures/parity/deit_mini.pth"
if [[ -f "$ckpt" ]]; then
  args+=(--checkpoint "$ckpt")
else
  echo "gui_smoke: note: $ckpt not found; running without a checkpoint"
fi
run_gui "$work/shot.png" "${args[@]}" || fail "attnlab gui exited with $? on the demo image"
# The demo's flat red ball and yellow sun: the image is enlarged by whole factors with
# nearest-neighbour sampling, so its exact colours must be on screen once it has loaded.
check_screenshot "$work/shot.png" 64 d6322f ffd84a

# 2. Garbage where an image and a checkpoint should be: error text, exit 0.
head -c 4096 /dev/urandom >"$work/corrupt.png"
head -c 4096 /dev/urandom >"$work/corrupt.pth"
run_gui "$work/shot_corrupt.png" --image "$work/corrupt.png" --checkpoint "$work/corrupt.pth" ||
  fail "attnlab gui exited with $? on a corrupt image/checkpoint (it must show the error and go on)"
check_screenshot "$work/shot_corrupt.png" 4

# 3. A PNG cut short: the decoder fails halfway rather than at the signature.
head -c 1500 "$root/assets/demo.png" >"$work/truncated.png"
run_gui "$work/shot_truncated.png" --image "$work/truncated.png" ||
  fail "attnlab gui exited with $? on a truncated PNG"
check_screenshot "$work/shot_truncated.png" 4

echo "gui_smoke: PASS"
