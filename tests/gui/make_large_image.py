#!/usr/bin/env python3
"""Writes a synthetic SIZE x SIZE RGB PNG (default 1024) for the GUI's large-image test
and frame-time benchmark: smooth colour gradients with a few discs and stripes, so that
attention maps over it have structure. Standard library only (zlib, struct)."""
import math
import struct
import sys
import zlib


def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))


def main():
    path = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    discs = [(0.30, 0.35, 0.12, (230, 60, 40)), (0.70, 0.60, 0.18, (40, 90, 220)),
             (0.45, 0.80, 0.08, (250, 220, 60))]
    raw = bytearray()
    for y in range(size):
        v = y / size
        row = bytearray(size * 3)
        for x in range(size):
            u = x / size
            r, g, b = 60 + 120 * u, 80 + 100 * v, 120 + 60 * math.sin(6.0 * u + 3.0 * v)
            if int(u * 32) % 8 == 0:  # thin vertical stripes
                r, g, b = r * 0.6, g * 0.6, b * 0.6
            for cx, cy, rad, col in discs:
                if (u - cx) ** 2 + (v - cy) ** 2 < rad * rad:
                    r, g, b = col
            row[3 * x:3 * x + 3] = bytes((int(r) & 255, int(g) & 255, int(b) & 255))
        raw += b'\x00' + row
    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', size, size, 8, 2, 0, 0, 0))
    png += chunk(b'IDAT', zlib.compress(bytes(raw), 6)) + chunk(b'IEND', b'')
    with open(path, 'wb') as f:
        f.write(png)


if __name__ == '__main__':
    main()
