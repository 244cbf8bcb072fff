#!/usr/bin/python3
"""Writes the NumPy fixture of tests/test_broadcast.cpp: the result shape (or the error) and
the values of broadcasting every pair and every triple from a few shapes (rank 0, rank
mismatch, extents of 1, extents of 0, incompatible extents).

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_broadcast_fixtures.py

broadcast_cases.txt, one line per case, shapes written as [D0,D1,..] ([] for rank 0):
    pair SA SB RESULT TO N V1 .. VN
        a * 10 + b, with a = arange(size(SA)) + 0.5 in shape SA and
        b = arange(size(SB)) + 1000 in shape SB (float64, every value exact);
        TO is 1 when np.broadcast_to(a, SB) works, else 0.
    where SC SX SY RESULT N V1 .. VN
        np.where(c, x, y), with c = (arange(size(SC)) % 3 != 1) in shape SC,
        x = arange(size(SX)) + 0.5 in shape SX and y = arange(size(SY)) + 1000 in shape SY.
RESULT is "error" (and N is 0) when NumPy raises, else the result shape; the N values follow
in row-major order, written with Python's repr (they read back exactly).
"""
import itertools
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
PAIR_SHAPES = [(), (1,), (3,), (1, 3), (2, 1), (2, 3), (4, 2, 3), (4, 1, 1), (1, 2, 1), (0,),
               (0, 3), (2, 0, 1), (1, 0), (3, 1, 2, 1), (5, 1, 1, 3), (1, 1, 1), (0, 1)]
TRIPLE_SHAPES = [(), (1,), (3,), (2, 1), (1, 3), (0, 1), (4, 1, 1), (2, 0)]


def shape_text(s):
    return "[" + ",".join(str(d) for d in s) + "]"


def ramp(shape, base):
    return (np.arange(int(np.prod(shape)), dtype=np.float64) + base).reshape(shape)


def values_text(r):
    return " ".join([str(r.size)] + [repr(float(v)) for v in r.ravel()])


def pair_line(sa, sb):
    a, b = ramp(sa, 0.5), ramp(sb, 1000)
    try:
        np.broadcast_to(a, sb)
        to = 1
    except ValueError:
        to = 0
    head = f"pair {shape_text(sa)} {shape_text(sb)}"
    try:
        r = a * 10 + b
    except ValueError:
        assert to == 0
        return f"{head} error {to} 0"
    return f"{head} {shape_text(r.shape)} {to} {values_text(r)}"


def where_line(sc, sx, sy):
    c = (np.arange(int(np.prod(sc))) % 3 != 1).reshape(sc)
    x, y = ramp(sx, 0.5), ramp(sy, 1000)
    head = f"where {shape_text(sc)} {shape_text(sx)} {shape_text(sy)}"
    try:
        r = np.where(c, x, y)
    except ValueError:
        return f"{head} error 0"
    return f"{head} {shape_text(r.shape)} {values_text(r)}"


def main():
    with open(os.path.join(OUT, "broadcast_cases.txt"), "w") as f:
        for sa, sb in itertools.product(PAIR_SHAPES, repeat=2):
            f.write(pair_line(sa, sb) + "\n")
        for sc, sx, sy in itertools.product(TRIPLE_SHAPES, repeat=3):
            f.write(where_line(sc, sx, sy) + "\n")


if __name__ == "__main__":
    main()
