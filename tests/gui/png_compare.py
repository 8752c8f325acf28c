#!/usr/bin/env python3
"""Compares two PNGs pixel by pixel (tests/gui/gui_view_command.sh: the GUI's export and
the figure `attnlab report` wrote from the copied command). Both come from the same figure
function, style and renderer at the same resolution, so they must be the same image:
same size, every channel of every pixel equal. Prints the size and, when they differ, how
many pixels differ and by how much at most. Exit 0 when equal, 1 otherwise.
Usage: png_compare.py A.png B.png"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_checks import read_png  # noqa: E402  (the standard-library PNG reader)


def main():
    a, b = sys.argv[1], sys.argv[2]
    wa, ha, ca, pa = read_png(a)
    wb, hb, cb, pb = read_png(b)
    if (wa, ha) != (wb, hb):
        print(f"{a}: {wa}x{ha}, {b}: {wb}x{hb}: the sizes differ")
        return 1
    if ca != cb:  # compare RGB only when one has alpha
        pa = bytes(v for i, v in enumerate(pa) if i % ca < 3)
        pb = bytes(v for i, v in enumerate(pb) if i % cb < 3)
        ca = cb = 3
    if pa == pb:
        print(f"{wa}x{ha}: identical")
        return 0
    differing, worst = 0, 0
    for p in range(wa * ha):
        d = max(abs(x - y) for x, y in zip(pa[p * ca:(p + 1) * ca], pb[p * cb:(p + 1) * cb]))
        if d:
            differing += 1
            worst = max(worst, d)
    print(f"{wa}x{ha}: {differing} pixel(s) differ, by up to {worst} levels")
    return 1


if __name__ == '__main__':
    sys.exit(main())
