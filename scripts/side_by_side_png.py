#!/usr/bin/env python3
"""Puts PNGs side by side on a white canvas (tops aligned, a gap between them), for the
README's "exported figure next to the screen" picture. Standard library only: reads with
tests/gui/png_checks.py, writes an 8-bit RGB PNG with zlib.
Usage: side_by_side_png.py OUT.png A.png B.png [...]"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gui"))
from png_checks import read_png  # noqa: E402

GAP = 16


def rgb_rows(path):
    w, h, c, px = read_png(path)
    rows = []
    for y in range(h):
        row = bytearray()
        for x in range(w):
            p = px[(y * w + x) * c:(y * w + x + 1) * c]
            if c >= 3:
                r, g, b = p[0], p[1], p[2]
            else:
                r = g = b = p[0]
            a = p[3] if c == 4 else (p[1] if c == 2 else 255)
            # over white, as a page shows it
            row += bytes(((v * a + 255 * (255 - a)) + 127) // 255 for v in (r, g, b))
        rows.append(bytes(row))
    return w, h, rows


def write_png(path, w, h, rows):
    raw = b"".join(b"\x00" + r for r in rows)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(png)
    os.replace(tmp, path)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    images = [rgb_rows(p) for p in sys.argv[2:]]
    width = sum(w for w, _, _ in images) + GAP * (len(images) - 1)
    height = max(h for _, h, _ in images)
    rows = []
    for y in range(height):
        row = bytearray()
        for i, (w, h, r) in enumerate(images):
            row += r[y] if y < h else b"\xff" * (3 * w)
            if i + 1 < len(images):
                row += b"\xff" * (3 * GAP)
        rows.append(bytes(row))
    write_png(sys.argv[1], width, height, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
