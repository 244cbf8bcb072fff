#!/usr/bin/python3
"""Writes tests/data/row_fused.txt, NumPy's results for the reduce-then-broadcast programs of
tests/test_row_fused.cpp (softmax, layernorm, centring, x / sum(x), x / norm(x) over the
trailing axes, or over the leading ones, as batch statistics), which kiln runs as one kernel per
program where the rows or columns fit on chip.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_row_fused_fixtures.py

The input of every case is x[i] = ((i * 7919) % 13 - 6) * 0.25 + (i % 7) * 0.01 in float64
(i the flat index), then cast to the case's dtype; the test builds the same array. One line
per case and sampled element:
    PROGRAM DTYPE NDIM D0 D1 .. NAXES FLAT_INDEX VALUE
NAXES > 0 reduces the last NAXES axes, NAXES < 0 the first -NAXES.
VALUE is NumPy's result at FLAT_INDEX (repr, exact for float64). Each case samples the first
and last element, every element of the first and last row when rows are short, and a spread
of others.
"""
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))

SHAPES = [((1, 7), 1), ((7, 1), 1), ((32, 32), 1), ((33, 33), 1), ((5, 1000), 1),
          ((3, 4097), 1), ((2, 8192), 1), ((1000, 33), 1), ((4, 5, 6), 1), ((4, 5, 6), 2),
          ((3, 50, 70), 2),
          # long rows (over the 48 KB a block of 256 stages): a block of 1024 per row
          ((512, 12300), 1), ((512, 3, 4101), 2),
          # leading axes (columns): a block per tile of 32 columns; 256 rows is the longest
          # float32 column kept on chip, float64 and 257 rows take two kernels
          ((1, 7), -1), ((7, 1), -1), ((32, 32), -1), ((33, 33), -1), ((256, 100), -1),
          ((257, 40), -1), ((100, 4097), -1), ((4, 5, 6), -1), ((4, 5, 6), -2),
          ((3, 50, 70), -2)]
DTYPES = ["float32", "float64"]


def make_input(shape, dtype):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    x = ((i * 7919) % 13 - 6).astype(np.float64) * 0.25 + (i % 7).astype(np.float64) * 0.01
    return x.reshape(shape).astype(dtype)


def programs(x, axes):
    one = x.dtype.type(1e-5)
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    d = x - np.mean(x, axis=axes, keepdims=True)
    return {
        "softmax": e / np.sum(e, axis=axes, keepdims=True),
        "layernorm": d / np.sqrt(np.mean(d * d, axis=axes, keepdims=True) + one),
        "centre": d,
        "share": x / np.sum(x * x, axis=axes, keepdims=True),
        "unit": x / np.sqrt(np.sum(x * x, axis=axes, keepdims=True)),
        "range": (x - np.min(x, axis=axes, keepdims=True)) /
                 (np.max(x, axis=axes, keepdims=True) - np.min(x, axis=axes, keepdims=True) + one),
    }


def samples(shape, naxes):
    n = int(np.prod(shape))
    row = int(np.prod(shape[len(shape) - naxes:])) if naxes > 0 else n
    picks = set(range(0, n, max(1, n // 23))) | {0, n - 1}
    if row <= 64:
        picks |= set(range(row)) | set(range(n - row, n))
    return sorted(picks)


def main():
    lines = []
    for shape, naxes in SHAPES:
        axes = tuple(range(len(shape) - naxes, len(shape))) if naxes > 0 else tuple(range(-naxes))
        for dtype in DTYPES:
            x = make_input(shape, dtype)
            for name, result in programs(x, axes).items():
                assert result.dtype == np.dtype(dtype), (name, result.dtype)
                flat = result.reshape(-1)
                head = f"{name} {dtype} {len(shape)} {' '.join(map(str, shape))} {naxes}"
                for k in samples(shape, naxes):
                    lines.append(f"{head} {k} {repr(float(flat[k]))}")
    with open(os.path.join(OUT, "row_fused.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
