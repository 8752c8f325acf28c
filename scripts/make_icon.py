#!/usr/bin/env python3
"""Draws attnlab's icon as SVG: a 5x5 grid of image patches coloured by one query patch's
attention (viridis, the figures' default colormap), the query outlined in white.
The package renders its PNG sizes from this file (packaging/CMakeLists.txt, rsvg-convert).

usage: make_icon.py OUT.svg
"""
import math
import sys

# viridis at 0, 0.25, 0.5, 0.75, 1 (matplotlib's table), interpolated linearly.
VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]


def viridis(t):
    t = min(max(t, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    f = t - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    return "#%02x%02x%02x" % tuple(round(a[k] + f * (b[k] - a[k])) for k in range(3))


def attention(y, x, query=(1, 1), second=(3, 3)):
    """A local bump at the query and a weaker one far away: what efficient attention shows."""
    d1 = (y - query[0]) ** 2 + (x - query[1]) ** 2
    d2 = (y - second[0]) ** 2 + (x - second[1]) ** 2
    return math.exp(-d1 / 1.6) + 0.55 * math.exp(-d2 / 1.2)


def icon_svg(size=256, grid=5):
    pad, gap, radius = 20, 6, 40
    cell = (size - 2 * pad - (grid - 1) * gap) / grid
    values = [[attention(y, x) for x in range(grid)] for y in range(grid)]
    top = max(max(r) for r in values)
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
        % (size, size, size, size),
        "<title>attnlab</title>",
        '<rect width="%d" height="%d" rx="%d" fill="#1d2230"/>' % (size, size, radius),
    ]
    for y in range(grid):
        for x in range(grid):
            out.append(
                '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="%s"/>'
                % (pad + x * (cell + gap), pad + y * (cell + gap), cell, cell,
                   viridis(values[y][x] / top)))
    qx, qy = pad + 1 * (cell + gap), pad + 1 * (cell + gap)
    out.append(
        '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="7" fill="none" '
        'stroke="#ffffff" stroke-width="7"/>' % (qx - 2, qy - 2, cell + 4, cell + 4))
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "w") as f:
        f.write(icon_svg())
