#!/usr/bin/env bash
# Regenerates assets/demo.png, the bundled demo image: a 320x256 RGB scene built to give
# attention maps and frequency (Hi-Fi / Lo-Fi) spectra something to show:
#   - a smooth vertical gradient sky (pure low frequency),
#   - a fence of 4-px-period vertical stripes and a 4-px checkerboard (high frequency,
#     with and without orientation),
#   - flat, distinctly coloured objects: sun (yellow disc), sign (blue rectangle),
#     tower (purple rectangle with a 9-px grid of lit windows: mid frequency), ball
#     (red disc), on a flat green ground.
# At 320x256 a ViT with 16-px patches sees a 20x16 grid; the shapes are several patches
# wide and the textures sit well inside patches, so both show up clearly in maps.
# Needs ImageMagick 6 or 7 (`apt-get install -y imagemagick`). The output is
# deterministic: no timestamps or other metadata are written.
# Usage: scripts/make_demo_image.sh [output.png]   (default: <repo>/assets/demo.png)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$repo_root/assets/demo.png}"

if command -v magick >/dev/null 2>&1; then
  im=(magick)
elif convert -version 2>/dev/null | grep -q ImageMagick; then
  im=(convert)
else
  echo "make_demo_image.sh: ImageMagick is needed (apt-get install -y imagemagick)" >&2
  exit 1
fi

tmp="$out.tmp.png"
# Sky (0..135) over ground (136..255); then textures pasted at fixed places; then shapes.
# -fx makes the textures as 0/1 masks and +level-colors paints them two colours.
"${im[@]}" \
  -size 320x136 gradient:'#14306b-#e9c49a' \
  -size 320x120 xc:'#6d8f4e' -append \
  \( -size 112x84 xc: -fx 'floor(i/2)%2' +level-colors '#303030,#f0f0f0' \) \
  -geometry +12+152 -composite \
  \( -size 64x64 xc: -fx '(floor(i/4)+floor(j/4))%2' +level-colors '#1a1a1a,#f2d230' \) \
  -geometry +140+160 -composite \
  -fill '#ffd84a' -draw 'circle 258,44 258,68' \
  -fill '#2f6fd6' -draw 'rectangle 24,36 84,84' \
  -fill '#7a3fa0' -draw 'rectangle 120,72 164,135' \
  \( -size 36x54 xc: -fx '(i%9<5)*(j%9<5)' +level-colors '#7a3fa0,#f5e6a0' \) \
  -geometry +126+78 -composite \
  -fill '#d6322f' -draw 'circle 262,190 262,224' \
  -strip -define png:exclude-chunks=date,time,tIME -depth 8 -type TrueColor \
  "PNG24:$tmp"
mv -f "$tmp" "$out"
echo "wrote $out"
