#!/usr/bin/env python3
"""Screenshot checks for the GUI tests: every PNG named has content (pixel variance over
100) and differs from the one before it (the view changed). Reads the 8-bit RGB(A),
non-interlaced PNGs the GUI writes, with the standard library only.
Usage: png_checks.py DIR FILE.png...   (in the order the screenshots were taken)"""
import os
import struct
import sys
import zlib


def read_png(path):  # 8-bit RGB(A) PNG, non-interlaced: what the GUI writes
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
        if kind == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        elif kind == b'IDAT': idat += body
    ch = 4 if ctype == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0; b = prev[i]; c = prev[i - ch] if i >= ch else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line)); prev = line
    return w, h, ch, b''.join(rows)

def main():
    folder, names = sys.argv[1], sys.argv[2:]
    pixels = {}
    for name in names:
        _, _, ch, px = read_png(os.path.join(folder, name))
        sample = px[::ch * 7]
        mean = sum(sample) / len(sample)
        var = sum((v - mean) ** 2 for v in sample) / len(sample)
        assert var > 100, f'{name} looks blank (variance {var:.1f})'
        pixels[name] = px
    for a, b in zip(names, names[1:]):
        diff = sum(1 for i in range(0, len(pixels[a]), 97) if pixels[a][i] != pixels[b][i])
        assert diff > 50, f'{a} and {b} look the same: the view did not change'
    print(f'{len(names)} screenshots with content, each different from the one before')


if __name__ == '__main__':
    main()
