#!/usr/bin/env bash
# Writes the cross-world test's reference, tests/data/cross_world/, from the Debian world's
# build (Debian 12's LibTorch 1.13.1, folder build/): for each case of
# tests/cross_world/cases.txt, `attnlab analyze`'s output at float32 (fp32/) and the same
# analyses at float64 (fp64/, attnlab_analyze_fp64).
# The test (ctest -R cross_world, in either world) runs the same commands with its own build
# and compares. Run this again after changing what an analysis computes or writes; the test
# names a reference that no longer matches the analyses' files.
#
#   bash scripts/make_cross_world_reference.sh [BUILD_DIR]   (default: build)
#
# Only the tables' JSON (exact doubles), the .npy arrays and a slimmed sidecar are kept:
# the CSV and LaTeX files repeat the JSON, and the sidecar's paths and timings are this
# machine's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shared=${ATTNLAB_SHARED_DIR:-$root/../shared}
out=$root/tests/data/cross_world
image=$root/assets/fashion-mnist/09-ankle-boot-00000.png

flock /tmp/attnlab-build.lock cmake --build "$build" --target attnlab attnlab_analyze_fp64 -j2
trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS='|' read -r name model analyses options _notes; do
  name=$(trim "$name")
  [[ -z $name || $name == \#* ]] && continue
  model=$(trim "$model")
  analyses=$(trim "$analyses")
  case $model in
    shared:*) model=$shared/${model#shared:} ;;
    source:*) model=$root/${model#source:} ;;
    *) echo "make_cross_world_reference: $name: no shared: or source: prefix" >&2; exit 1 ;;
  esac
  echo "== $name"
  mkdir -p "$tmp/$name"
  # shellcheck disable=SC2086  # the options are words
  "$build/app/attnlab" analyze --model "$model" --images "$image" --analyses "$analyses" \
    $options --out "$tmp/$name/fp32"
  # shellcheck disable=SC2086
  "$build/tests/attnlab_analyze_fp64" --model "$model" --images "$image" --analyses "$analyses" \
    $options --out "$tmp/$name/fp64"
done < "$root/tests/cross_world/cases.txt"

# Keep what the test reads; the sidecars without this machine's paths and timings.
find "$tmp" \( -name '*.csv' -o -name '*.tex' \) -delete
python3 - "$tmp" <<'EOF'
import json, pathlib, sys
keep = ("libtorch_version", "attnlab_revision", "dtype", "threads", "settings", "layers",
        "warnings", "skipped", "files")
for path in pathlib.Path(sys.argv[1]).glob("*/*/*__settings.json"):
    side = json.loads(path.read_text())
    if not side["libtorch_version"].startswith("1.13."):
        sys.exit(f"make_cross_world_reference: {path} was written with LibTorch "
                 f"{side['libtorch_version']}, not the Debian world's 1.13")
    slim = {k: side[k] for k in keep if k in side}
    slim["files"] = [{"file": f["file"], "kind": f["kind"]} for f in slim["files"]
                     if f["file"].endswith((".json", ".npy"))]
    path.write_text(json.dumps(slim, indent=1, ensure_ascii=False) + "\n")
EOF
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -r "$tmp" "$out"
chmod -R u+rwX,go+rX "$out"
du -sh "$out"
