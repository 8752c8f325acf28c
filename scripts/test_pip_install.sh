#!/usr/bin/env bash
# `import attnlab` as a user of the PyTorch 2.x world gets it: `pip install .
# --no-build-isolation` (pyproject.toml, scikit-build-core) into the environment given, then,
# from outside the source tree, `import torch` and `import attnlab` in one process in both
# orders and the Python suite against the installed module; uninstalled at the end.
#   bash scripts/test_pip_install.sh PYTHON [BUILD_DIR]
# BUILD_DIR (default build-pytorch, as scripts/test_pytorch.sh leaves it): scikit-build-core
# builds there with the same CMake settings that script configured, so only the module is
# linked again; pyproject.toml's own folder (build-pip, Release) is what a user's plain
# `pip install .` compiles from scratch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$(realpath -s "$(command -v "${1:?usage: test_pip_install.sh PYTHON [BUILD_DIR]}")")"
build="${2:-$root/build-pytorch}"
[ -f "$build/CMakeCache.txt" ] || { echo "test_pip_install: no configured $build (run scripts/test_pytorch.sh)" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

# The settings the build folder already has, so that pip's configure changes nothing there.
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation "$root" \
  -C build-dir="$build" \
  -C cmake.build-type="$(cache CMAKE_BUILD_TYPE)" \
  -C cmake.define.ATTNLAB_TESTS="$(cache ATTNLAB_TESTS)" \
  -C cmake.define.ATTNLAB_BENCH="$(cache ATTNLAB_BENCH)" \
  -C cmake.define.ATTNLAB_GUI="$(cache ATTNLAB_GUI)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$py" -m pip uninstall -q -y attnlab >/dev/null 2>&1 || true' EXIT
cd "$tmp"  # the installed module, not the source tree's python/attnlab
for order in "import torch, attnlab" "import attnlab, torch"; do
  "$py" - "$order" "$root" <<'EOF'
import os, sys
exec(sys.argv[1])
root = sys.argv[2]
assert "site-packages" in attnlab.__file__ and attnlab.TORCH_VERSION, attnlab.__file__
model = attnlab.load(os.path.join(root, "models/zoo/softmax.safetensors"))
image = torch.zeros(28, 28, 3, dtype=torch.uint8)
image[6:22, 10:18] = 200
res = model.analyze(image, progress=False)  # every analysis that applies
tensors = res.tensors
assert tensors and all(isinstance(t, torch.Tensor) for t in tensors.values()), type(tensors)
print(f"test_pip_install: {sys.argv[1]}: attnlab {attnlab.__file__} beside torch {torch.__version__},"
      f" {len(tensors)} result tensor(s) back as torch.Tensor")
EOF
done
# The whole Python suite against the installed copy (its CLI comparisons use the build's CLI).
ATTNLAB_ROOT="$root" ATTNLAB_CLI="$build/app/attnlab" \
  "$py" -m pytest -q -p no:cacheprovider "$root/python/tests"
