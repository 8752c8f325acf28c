#!/usr/bin/env bash
# Builds attnlab's Debian package: a Release build of the binary with the packaging
# files (man page and bash completion from the binary, icon; packaging/CMakeLists.txt), then
# CPack. The binary is built without the source-tree fallback (ATTNLAB_SOURCE_DATA=OFF):
# installed, it reads only /usr/share/attnlab.
#   usage: bash scripts/package.sh [BUILD_DIR]     (default: build-package)
#   result: BUILD_DIR/attnlab_<version>_amd64.deb; check it with scripts/test_package.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/build-package}")

bash "$root/scripts/setup.sh"
# What packaging needs beyond the build: rsvg-convert (icon PNGs),
# dpkg-dev + file (CPack's dpkg-shlibdeps computes the Depends).
extra=(librsvg2-bin dpkg-dev file)
missing=()
for p in "${extra[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  echo "package: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_PACKAGE=ON \
  -DATTNLAB_SOURCE_DATA=OFF -DATTNLAB_TESTS=OFF -DATTNLAB_BENCH=OFF -DATTNLAB_GUI=ON
cmake --build "$out" -j "$(nproc)"
rm -f "$out"/attnlab_*.deb
(cd "$out" && cpack -G DEB)
deb=$(ls "$out"/attnlab_*_amd64.deb)
echo
dpkg-deb -I "$deb"
echo "package: $deb ($(du -h "$deb" | cut -f1))"
