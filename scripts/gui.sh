#!/usr/bin/env bash
# The "try it" command: install what is missing, build, and open the GUI on a bundled
# Fashion-MNIST demo image and the zoo's HiLo model (models/zoo/, docs/ZOO.md).
# Extra arguments go to `attnlab gui`, e.g. --checkpoint my_run.pth.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attnlab
args=(--image "$root/assets/fashion-mnist/09-ankle-boot-00000.png"
      --checkpoint "$root/models/zoo/hilo.safetensors")
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "gui.sh: no display found; running under xvfb-run and saving a screenshot to build/gui.png"
  exec xvfb-run -a -s "-screen 0 1280x800x24" "${ATTNLAB_BUILD_DIR:-$root/build}/app/attnlab" gui "${args[@]}" \
    --frames 60 --screenshot "${ATTNLAB_BUILD_DIR:-$root/build}/gui.png" "$@"
fi
exec "${ATTNLAB_BUILD_DIR:-$root/build}/app/attnlab" gui "${args[@]}" "$@"
