#!/usr/bin/env bash
# The "try it" command: install what is missing, build, and open the GUI on the bundled
# demo workspace: the zoo's six models (one per mechanism, models/zoo/, docs/ZOO.md) and
# four Fashion-MNIST images, as plain `attnlab` does. Extra arguments go to `attnlab gui`
# and replace the demo, e.g. `bash scripts/gui.sh photo.jpg --model my_run.safetensors`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attnlab
attnlab="${ATTNLAB_BUILD_DIR:-$root/build}/app/attnlab"
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  shot="${ATTNLAB_BUILD_DIR:-$root/build}/gui.png"
  echo "gui.sh: no display found; running under xvfb-run and saving a screenshot to $shot"
  script="$(mktemp --suffix=.script)"
  trap 'rm -f "$script"' EXIT
  # Wait for the models to load and analyse the first image, then take the screenshot.
  printf 'wait-idle 300\nframes 10\nscreenshot "%s"\nquit\n' "$shot" > "$script"
  xvfb-run -a -s "-screen 0 1280x800x24" "$attnlab" gui --script "$script" "$@"
  exit
fi
exec "$attnlab" gui "$@"
