#!/usr/bin/env python3
"""Writes viz/colormap_tables.inc: matplotlib's colormaps as 256-entry uint8 RGB tables.

Run with a Python that has matplotlib and numpy (on Debian: apt-get install
python3-matplotlib; the committed tables come from matplotlib 3.6.3, numpy 1.24.2):

    /usr/bin/python3 scripts/make_colormap_tables.py            # writes the file
    /usr/bin/python3 scripts/make_colormap_tables.py --check    # exit 1 if it is stale

Entry i of a table is matplotlib's `cmap(i, bytes=True)[:3]` (integer lookup), i.e. row i
of `(cmap._lut * 255).astype(np.uint8)`: the float table scaled and truncated, exactly as
matplotlib produces bytes. viz/colormap.cpp then picks the entry the way
`Colormap.__call__` does for floats, so its output equals `cmap(x, bytes=True)`.
"""

import argparse
import os
import sys

import matplotlib
import numpy as np

# (C++ table name, matplotlib name), in the order of attnlab::viz::Colormap.
MAPS = [
    ("kViridis", "viridis"),
    ("kMagma", "magma"),
    ("kInferno", "inferno"),
    ("kPlasma", "plasma"),
    ("kCividis", "cividis"),
    ("kTurbo", "turbo"),
    ("kJet", "jet"),
    ("kGray", "gray"),
    ("kRdBu", "RdBu"),
    ("kCoolwarm", "coolwarm"),
]

N = 256
PER_LINE = 8

HEADER = """\
// GENERATED FILE, do not edit: written by scripts/make_colormap_tables.py from
// matplotlib {mpl} (numpy {np}), the Debian python3-matplotlib package:
//     /usr/bin/python3 scripts/make_colormap_tables.py
// Included by viz/colormap.cpp only (inside its anonymous namespace).
//
// Each table holds a map's 256 entries as 0xRRGGBB. Entry i is matplotlib's
// cmap(i, bytes=True), i.e. the float lookup table times 255, truncated to uint8. (So an
// entry can be one below matplotlib.colors.to_hex() of the same colour, which rounds.)
//
// Where the maps come from:
//   viridis, magma, inferno, plasma: Nathaniel J. Smith and Stefan van der Walt (viridis
//     with Eric Firing), designed for matplotlib 2.0; CC0 (public domain dedication).
//   cividis: Jamie R. Nuñez, Christopher R. Anderton and Ryan S. Renslow, "Optimizing
//     colormaps with consideration for color vision deficiency to enable accurate
//     interpretation of scientific data", PLOS ONE 13(7): e0199239, 2018; CC0.
//   turbo: Anton Mikhailov, Google LLC, 2019; Apache-2.0.
//   jet, gray: as matplotlib defines them (piecewise-linear segments; jet after MATLAB's
//     map of that name); matplotlib licence (PSF-based).
//   RdBu: ColorBrewer (Cynthia Brewer, https://colorbrewer2.org/), the 11-class RdBu
//     scheme interpolated by matplotlib; Apache-style ColorBrewer licence.
//   coolwarm: Kenneth Moreland, "Diverging Color Maps for Scientific Visualization"
//     (2009), matplotlib's 33-point CoolWarmFloat33 definition interpolated to 256.
"""


def table(name):
    cmap = matplotlib.colormaps[name]
    if cmap.N != N:
        sys.exit(f"{name}: matplotlib has {cmap.N} entries, expected {N}")
    rgba = np.asarray(cmap(np.arange(N), bytes=True))
    if rgba.dtype != np.uint8 or rgba.shape != (N, 4) or not (rgba[:, 3] == 255).all():
        sys.exit(f"{name}: unexpected byte table {rgba.dtype} {rgba.shape}")
    # The float lookup this table serves: entry i covers x in [i/256, (i+1)/256).
    mids = cmap((np.arange(N) + 0.5) / N, bytes=True)
    if not np.array_equal(mids, rgba):
        sys.exit(f"{name}: float lookup does not pick entry int(x * {N})")
    return rgba[:, :3]


def render():
    out = [HEADER.format(mpl=matplotlib.__version__, np=np.__version__)]
    out.append("// clang-format off\n")
    for cname, mname in MAPS:
        rgb = table(mname).astype(np.uint32)
        packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
        out.append(f"\n// {mname}\n")
        out.append(f"constexpr uint32_t {cname}[{N}] = {{\n")
        for start in range(0, N, PER_LINE):
            row = ", ".join(f"0x{int(v):06x}" for v in packed[start:start + PER_LINE])
            out.append(f"    /* {start:3d} */ {row},\n")
        out.append("};\n")
    out.append("// clang-format on\n")
    return "".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "viz", "colormap_tables.inc")
    text = render()
    if args.check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit(f"{path} is stale: rerun {sys.argv[0]}")
        print(f"{path} is up to date")
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
