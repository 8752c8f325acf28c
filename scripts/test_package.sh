#!/usr/bin/env bash
# Installs the .deb into a fresh folder (dpkg -x: the package's files at their installed
# paths, nothing of the source tree) and checks that it works from there:
#   1. the package: its control fields, the computed Depends, and that it holds the binary,
#      data, desktop entry, icon, MIME types, man page and bash completion;
#   2. every dependency (each "a | b" group, with its version) is installed on this
#      machine, and the binary's every shared library resolves (ldd);
#   3. the desktop entry validates, the MIME types build a database, the man page renders,
#      the completion completes;
#   4. from the installed paths, with no ATTNLAB_* variables and run from an empty folder:
#      `attnlab --version`, `attnlab info` (data found "installed"), `attnlab classify` of a
#      bundled image with a zoo model, and the GUI opened as the file manager opens it
#      (`attnlab MODEL IMAGE`) under Xvfb, its screenshot checked;
#   5. the Python module from the unpacked dist-packages (Debian's python3): `import
#      attnlab`, a zoo model's classify and analyze, one figure.
#   usage: bash scripts/test_package.sh [path/to/attnlab_<version>_amd64.deb]
#   (default: build-package/attnlab_*_amd64.deb, from scripts/package.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deb=${1:-$(ls "$root"/build-package/attnlab_*_amd64.deb 2>/dev/null | head -1)}
[[ -f "$deb" ]] || { echo "test_package: no .deb (run scripts/package.sh first)" >&2; exit 2; }
deb=$(realpath "$deb")
# The checks' own tools, installed when missing (a new machine starts bare).
tools=(desktop-file-utils shared-mime-info man-db xvfb xauth)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  echo "test_package: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_package: FAIL: $*" >&2; exit 1; }
ok() { echo "test_package: ok: $*"; }

echo "== package: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
[[ "$(dpkg-deb -f "$deb" Package)" == attnlab && "$(dpkg-deb -f "$deb" Architecture)" == amd64 ]] ||
  fail "Package/Architecture fields"
for lib in libtorch1.13 libopencv-core406 libglfw3 libcairo2 libc6 fonts-dejavu-core; do
  grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
ok "Depends computed by dpkg-shlibdeps ($(tr ',' '\n' <<<"$depends" | wc -l) entries)"
[[ "$(dpkg-deb -f "$deb" Recommends)" == *libopenblas0-openmp* ]] || fail "no OpenBLAS recommendation"

contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/attnlab ./usr/share/attnlab/zoo/zoo.json ./usr/share/attnlab/zoo/softmax.safetensors \
  ./usr/share/attnlab/assets/imagenet1k_classes.txt ./usr/share/attnlab/assets/demo.png \
  ./usr/share/applications/attnlab.desktop ./usr/share/mime/packages/attnlab.xml \
  ./usr/share/icons/hicolor/scalable/apps/attnlab.svg ./usr/share/icons/hicolor/48x48/apps/attnlab.png \
  ./usr/share/icons/hicolor/256x256/apps/attnlab.png ./usr/share/man/man1/attnlab.1.gz \
  ./usr/share/bash-completion/completions/attnlab ./usr/share/doc/attnlab/README.md \
  ./usr/lib/python3/dist-packages/attnlab/__init__.py; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done
ok "dpkg-deb -c lists the binary, data, desktop file, icons, MIME file, man page, completion"

echo "== unpacked into $work/root"
dpkg -x "$deb" "$work/root"
bin="$work/root/usr/bin/attnlab"
share="$work/root/usr/share"

# Each group of alternatives needs one installed member at a satisfying version.
IFS=',' read -ra groups <<<"$depends"
for group in "${groups[@]}"; do
  found=""
  IFS='|' read -ra alts <<<"$group"
  for alt in "${alts[@]}"; do
    read -r name op version <<<"$(sed -E 's/[()]/ /g' <<<"$alt")"
    name=${name%%:*}
    have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
    [[ "$have" == "install ok installed "* ]] || continue
    if [[ -z "${op:-}" ]] || dpkg --compare-versions "${have##* }" "$op" "$version"; then
      found=$name
      break
    fi
  done
  [[ -n "$found" ]] || fail "dependency not installed: $group"
done
ok "all ${#groups[@]} dependency groups are installed"
if ldd "$bin" | grep -q "not found"; then
  ldd "$bin" | grep "not found"
  fail "unresolved shared libraries"
fi
ok "ldd resolves every library of the installed binary"

desktop-file-validate "$share/applications/attnlab.desktop" || fail "desktop-file-validate"
grep -q "^MimeType=application/x-safetensors;application/x-pytorch-checkpoint;" \
  "$share/applications/attnlab.desktop" || fail "the desktop entry does not open checkpoints"
ok "desktop entry validates and lists the checkpoint types"
cp -r "$share/mime" "$work/mime"
update-mime-database "$work/mime" >"$work/mime.log" 2>&1 ||
  { cat "$work/mime.log"; fail "update-mime-database rejects attnlab.xml"; }
grep -q "application/x-safetensors" "$work/mime/globs2" && grep -q "\*\.pth" "$work/mime/globs2" ||
  fail "the MIME globs are not in the database"
ok "MIME types build a database: $(grep -c attnlab\\\|x-safetensors\\\|x-pytorch "$work/mime/globs2") globs"
man_text=$(MANWIDTH=100 man -l "$share/man/man1/attnlab.1.gz" 2>/dev/null) || fail "man cannot render"
for s in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES analyze completion; do
  grep -q "$s" <<<"$man_text" || fail "man page lacks $s"
done
ok "man page renders ($(wc -l <<<"$man_text") lines)"
completion=$(bash --norc -c "source '$share/bash-completion/completions/attnlab';
  COMP_WORDS=(attnlab report --colormap ma); COMP_CWORD=3; _attnlab; echo \"\${COMPREPLY[*]}\"")
[[ "$completion" == magma ]] || fail "completion of 'report --colormap ma' gave '$completion'"
ok "bash completion completes (report --colormap ma -> magma)"

echo "== running from the installed paths"
mkdir "$work/cwd"
cd "$work/cwd"
run() { env -u ATTNLAB_ZOO -u ATTNLAB_ASSETS HOME="$work/home" ATTNLAB_SETTINGS="$work/settings.json" "$@"; }
run "$bin" --version | tee "$work/version.txt"
grep -Eq "^attnlab [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{12}(-dirty)?\)$" "$work/version.txt" ||
  fail "--version does not name the version and git revision"
run "$bin" info | tee "$work/info.txt"
grep -q "^zoo:    $share/attnlab/zoo (installed)$" "$work/info.txt" || fail "the zoo is not the installed one"
grep -q "^assets: $share/attnlab/assets (installed)$" "$work/info.txt" || fail "assets not installed ones"
run "$bin" classify --checkpoint "$share/attnlab/zoo/softmax.safetensors" \
  "$share/attnlab/assets/fashion-mnist/09-ankle-boot-00000.png" | tee "$work/classify.txt"
# Five ranked classes, named from the zoo model's own class names (its config).
(($(grep -Ec "^ +[0-9.]+% +[0-9] +[A-Z]" "$work/classify.txt") == 5)) || fail "classify did not print a named top-5"
ok "classify from the installed zoo and assets (top-1: $(grep -Em1 "^ +[0-9.]+%" "$work/classify.txt" | xargs))"

if command -v xvfb-run >/dev/null; then
  printf '%s\n' "wait-idle 180" "frames 3" "expect-no-error" "click-token 3 3" "wait-idle 120" \
    "frames 3" "expect-no-error" "screenshot $work/installed.png" "quit" >"$work/open_with.script"
  # As "Open with attnlab" runs it (Exec=attnlab %F): files only, the model first.
  run timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" "$bin" \
    "$share/attnlab/zoo/softmax.safetensors" "$share/attnlab/assets/fashion-mnist/09-ankle-boot-00000.png" \
    --script "$work/open_with.script" || fail "the installed GUI exited with $?"
  python3 "$root/tests/gui/png_checks.py" "$work" installed.png || fail "the GUI screenshot is blank"
  # With no files: the demo, i.e. every model of the installed zoo and the installed demo
  # images, analysed without an error; then the plain screenshot mode.
  printf '%s\n' "wait-idle 600" "frames 3" "expect-no-error" "screenshot $work/demo.png" "quit" \
    >"$work/demo.script"
  run timeout 900 xvfb-run -a -s "-screen 0 1280x800x24" "$bin" --script "$work/demo.script" ||
    fail "the installed GUI's demo exited with $?"
  run timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" "$bin" gui --empty --after-frames 20 \
    --screenshot "$work/empty.png" || fail "the installed GUI's screenshot mode exited with $?"
  python3 "$root/tests/gui/png_checks.py" "$work" installed.png demo.png empty.png ||
    fail "a GUI screenshot is blank or repeats the one before"
  mkdir -p "$root/build-package"
  cp "$work/installed.png" "$root/build-package/installed_gui.png"
  cp "$work/demo.png" "$root/build-package/installed_demo.png"
  ok "GUI from the installed paths: files opened as 'Open with' does, the installed demo, screenshot mode (build-package/installed_*.png)"
else
  fail "xvfb-run is missing (apt-get install xvfb)"
fi
echo "== the Python module from the package"
grep -q "python3-numpy" <<<"$depends" || fail "Depends lacks python3-numpy (the module reads numpy)"
pyext=$(ls "$work"/root/usr/lib/python3/dist-packages/attnlab/_attnlab*.so 2>/dev/null | head -1)
[[ -n "$pyext" ]] || fail "the package lacks the module's extension"
if ldd "$pyext" | grep -q "not found"; then
  ldd "$pyext" | grep "not found"
  fail "unresolved shared libraries of the Python module"
fi
run env PYTHONPATH="$work/root/usr/lib/python3/dist-packages" /usr/bin/python3 - \
  "$share/attnlab/zoo/softmax.safetensors" "$share/attnlab/assets/fashion-mnist/09-ankle-boot-00000.png" \
  "$work/py_figure.png" <<'PY' || fail "import attnlab from the package"
import sys
import attnlab
model_path, image, figure = sys.argv[1:4]
assert "/usr/lib/python3/dist-packages/attnlab/" in attnlab.__file__, attnlab.__file__
model = attnlab.load(model_path)
top = model.classify(image, top=1)[0]["top"][0]
res = model.analyze(image, analyses="maps,rank", progress=False)
res.figure("rank").save(figure)
print(f"test_package: import attnlab from {attnlab.__file__}: top-1 {top[1]} {top[2]:.3f}, "
      f"{len(res.tables)} tables")
PY
[[ "$(head -c 8 "$work/py_figure.png" | od -An -tx1 | tr -d ' ')" == 89504e470d0a1a0a ]] ||
  fail "the module's figure is not a PNG"
ok "import attnlab from the unpacked package: classify, analyze, a figure"
echo "test_package: PASS ($deb)"
