#!/usr/bin/env bash
# attnlab against the notebook workflow it replaces (bench/peer/bench_peer.py), on this
# machine: installs the peer's packages (Debian's PyTorch, torchvision, matplotlib, PIL),
# uses the build in build/ (scripts/build.sh makes it), prints the table for
# docs/BENCHMARKS.md. Not part of CI (minutes of runtime). Options go to bench_peer.py,
# e.g. --repeats 5 or --skip-32.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for p in python3-torch python3-torchvision python3-matplotlib python3-pil; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "bench_peer: installing ${need[*]}" >&2
  apt-get install -y --no-install-recommends "${need[@]}" >&2
fi
attnlab=${ATTNLAB:-build/app/attnlab}
[ -x "$attnlab" ] || { echo "bench_peer: no $attnlab (run scripts/build.sh)" >&2; exit 1; }
peer=${PEER:-../shared/peers/notebook_workflow.py}
[ -f "$peer" ] || { echo "bench_peer: no peer script at $peer (set PEER=...)" >&2; exit 1; }
exec /usr/bin/python3 bench/peer/bench_peer.py --attnlab "$attnlab" --peer "$peer" "$@"
