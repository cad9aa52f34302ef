#!/usr/bin/env python3
"""Prints a PNG's size and how many pixels have each colour (top 40, as
#rrggbb count), reading the file with the standard library only (zlib and
PNG's five row filters; 8-bit RGB or RGBA). Used by the report screenshot
test to see that the chart's colours really reached the screen."""
import struct, sys, zlib
from collections import Counter

def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                raise SystemExit(f"{path}: unsupported PNG (depth {depth}, colour type {color})")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    counts = Counter()
    for y in range(height):
        f = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: row[i] = (row[i] + a) & 255
            elif f == 2: row[i] = (row[i] + b) & 255
            elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            counts["#%02x%02x%02x" % (row[x], row[x + 1], row[x + 2])] += 1
        prev = row
    return width, height, counts

width, height, counts = read(sys.argv[1])
print(f"size {width}x{height}")
for colour, n in counts.most_common(40):
    print(colour, n)
