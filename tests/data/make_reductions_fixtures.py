#!/usr/bin/python3
"""Writes the NumPy fixtures of tests/test_reductions.cpp: the result dtype of every
reduction for every input dtype, and the result shape (or the error) of every reduction for
every axis subset of a few 3-d shapes.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_reductions_fixtures.py

The values themselves are checked against loops written in the test; these files pin down
NumPy's typing and shape rules, which the test would otherwise have to restate.

reductions_dtypes.txt, one line per (op, input dtype):
    OP IN_DTYPE OUT_DTYPE
reductions_shapes.txt, one line per (op, input shape, axes, keepdims):
    OP NDIM D0 D1 .. AXES KEEPDIMS RESULT
AXES is "none" (every axis / the flattened array for argmax) or a comma-separated list,
which may hold negative axes. RESULT is "error" when NumPy raises, else "NDIM D0 D1 ..".
"""
import itertools
import os
import warnings

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
OPS = ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex128"]
SHAPES = [(3, 4, 5), (3, 1, 4), (2, 0, 3)]


def call(op, a, axes, keepdims):
    return getattr(np, op)(a, axis=axes, keepdims=keepdims)


def axis_sets(op, ndim):
    """Every axis subset; each non-empty subset once with non-negative and once with
    negative axes (and, for three axes, a mixed spelling)."""
    if op in ("argmax", "argmin"):
        yield None
        for ax in range(ndim):
            yield ax
            yield ax - ndim
        return
    yield None
    for k in range(1, ndim + 1):
        for sub in itertools.combinations(range(ndim), k):
            yield sub
            yield tuple(a - ndim for a in sub)
            if k == ndim:
                yield (sub[2] - ndim, sub[0], sub[1] - ndim)  # unsorted and mixed


def fmt_axes(axes):
    if axes is None:
        return "none"
    if isinstance(axes, int):
        return str(axes)
    return ",".join(str(a) for a in axes)


def main():
    warnings.simplefilter("ignore")  # mean of empty slices
    with open(os.path.join(OUT, "reductions_dtypes.txt"), "w") as f:
        for op in OPS:
            for dt in DTYPES:
                r = call(op, np.ones((2, 3), dtype=dt), None, False)
                f.write(f"{op} {dt} {np.asarray(r).dtype}\n")
    with open(os.path.join(OUT, "reductions_shapes.txt"), "w") as f:
        for op in OPS:
            for shape in SHAPES:
                a = np.ones(shape)
                for axes in axis_sets(op, len(shape)):
                    for keepdims in (False, True):
                        try:
                            r = np.asarray(call(op, a, axes, keepdims))
                            res = " ".join(str(x) for x in (r.ndim,) + r.shape)
                        except ValueError:
                            res = "error"
                        dims = " ".join(str(d) for d in shape)
                        f.write(f"{op} {len(shape)} {dims} {fmt_axes(axes)} {int(keepdims)} "
                                f"{res}\n")


if __name__ == "__main__":
    main()
