#!/usr/bin/env bash
# The "try it" command: install what is missing, build, and open the GUI on the bundled
# demo image (and the deit_mini parity checkpoint when ../shared is beside the repo).
# Extra arguments go to `attnlab gui`, e.g. --checkpoint my_run.pth.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attnlab
args=(--image "$root/assets/demo.png")
demo_ckpt="${ATTNLAB_SHARED:-$root/../shared}/fixtures/parity/deit_mini.pth"
[ -f "$demo_ckpt" ] && args+=(--checkpoint "$demo_ckpt")
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "gui.sh: no display found; running under xvfb-run and saving a screenshot to build/gui.png"
  exec xvfb-run -a -s "-screen 0 1280x800x24" "${ATTNLAB_BUILD_DIR:-$root/build}/app/attnlab" gui "${args[@]}" \
    --frames 60 --screenshot "${ATTNLAB_BUILD_DIR:-$root/build}/gui.png" "$@"
fi
exec "${ATTNLAB_BUILD_DIR:-$root/build}/app/attnlab" gui "${args[@]}" "$@"
