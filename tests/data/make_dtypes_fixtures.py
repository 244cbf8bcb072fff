#!/usr/bin/python3
"""Writes tests/data/dtypes.txt, the NumPy fixtures of tests/test_dtypes.cpp: casts between
every pair of real dtypes and the reductions of the smaller and unsigned integer types.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_dtypes_fixtures.py

One record a line, tokens separated by single spaces; integers in decimal, floats as Python's
repr of the value (float32 values widen to float64 exactly), bool as 0/1, NaN and infinities as
"nan", "inf", "-inf". The first line names the NumPy version.
    cast FROM TO N IN_VALUES... OUT_VALUES...     a.astype(TO) of an array of dtype FROM
    reduce OP DTYPE AXIS ROWS COLS IN_VALUES... RESULT_DTYPE N OUT_VALUES...
AXIS is "none" (every axis) or 0 or 1, of a ROWS x COLS input.

Float to integer casts of out-of-range values and NaN are what NumPy gives on x86 (the C casts
GCC compiles). Where NumPy's own result depends on the element's position in the array (float
to uint32 outside [-2^31, 2^32) and of NaN: its vectorised loop gives 0 or 2^31, its scalar one
the low bits of the int64 conversion, which kiln gives), the value is left out; each cast is
computed on a long array and element by element to find such values.

float16 casts are NumPy's. NumPy has no bfloat16: its casts are derived here as ml_dtypes
(Eigen's bfloat16) defines them, from NumPy's float32: a value goes to float32 first (NumPy's
cast; float64 rounds once to float32), then to bfloat16 by bf16_round, a bit-exact round to
nearest even on the float32's bits written below; a bfloat16 value is its float32 value, cast
on by NumPy. Its values are written as the float32 value's repr. The float inputs include the
half-precision edges: 65504 (float16's largest), 65519.996 and 65520 (the tie, which rounds to
inf), 2^-24 and 2^-25 (the smallest subnormal and the tie below it), 6e-8, 1e-5 (subnormals),
0.1, and 3.4e38 (past bfloat16's largest finite, 3.3895e38: inf).
"""
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REAL = ["bool"] + INTS + ["float32", "float64", "float16", "bfloat16"]
NEW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]

FLOATS = [0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 127.9, 128.0, 255.0, 256.0, 300.0, -1.0, -129.0,
          32767.0, 32768.0, 65535.0, 65536.0, 1e9, 3e9, 5e9, -3e9, 2.0**63, 2.0**64, -2.0**63,
          1e20, -1e20, np.nan, np.inf, -np.inf, 4294967301.0, 65504.0, 65519.996, 65520.0,
          2.0**-24, 2.0**-25, 6e-8, 1e-5, 0.1, -0.1, 3.4e38, 3.3895313892515355e38]


def bf16_round(a):
    """float32 values rounded to bfloat16 (round to nearest even on the dropped 16 bits; NaN
    becomes the quiet NaN 0x7fc0 with its sign, as Eigen), returned as float32."""
    shape = np.shape(a)
    a = np.array(a, np.float32).reshape(-1)
    u = a.view(np.uint32).astype(np.uint64)
    k16, one = np.uint64(16), np.uint64(1)
    r = ((u + np.uint64(0x7FFF) + ((u >> k16) & one)) >> k16) & np.uint64(0xFFFF)
    nan = np.isnan(a)
    r[nan] = ((u[nan] >> k16) & np.uint64(0x8000)) | np.uint64(0x7FC0)
    return (r.astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(shape)


def cast(a, src, to):
    """a (of dtype src; bfloat16 held as float32) cast to `to`, as kiln must give it."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if to == "bfloat16":
            return bf16_round(a.astype(np.float32))
        return a.astype(to)


def inputs(t):
    if t == "bfloat16":
        return np.unique(bf16_round(np.array(FLOATS, np.float64).astype(np.float32)))
    dt = np.dtype(t)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "f":
        with np.errstate(all="ignore"):
            return np.array(FLOATS, dt)
    info = np.iinfo(dt)
    vals = {0, 1, 2, 7, 100, 127, 128, 200, 255, 256, 300, 40000, 65535, 65536, 2**31 - 1,
            2**31, 2**32 - 1, 2**32 + 5, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1,
            -1, -2, -100, -128, -129, -32768, -40000, -2**31, -2**63}
    vals |= {info.min, info.max}
    return np.array(sorted(v for v in vals if info.min <= v <= info.max), dt)


def fmt(a):
    out = []
    for v in np.asarray(a).reshape(-1):
        if a.dtype.kind == "b":
            out.append(str(int(v)))
        elif a.dtype.kind in "iu":
            out.append(str(int(v)))
        else:
            out.append(repr(float(v)))
    return out


def stable_cast(a, to):
    """a.astype(to), and which elements NumPy converts the same wherever they sit."""
    reps = 40
    long = np.repeat(a, reps)
    r = cast(long, None, to).reshape(len(a), reps)
    single = np.array([cast(np.array([x]), None, to)[0] for x in a], r.dtype)
    ok = (r == r[:, :1]).all(axis=1) & (r[:, 0] == single)
    if r.dtype.kind == "f":
        ok |= np.isnan(r).all(axis=1)
    return r[:, 0], ok


def main():
    lines = ["numpy %s" % np.__version__]
    for src in REAL:
        a = inputs(src)
        for to in REAL:
            r, ok = stable_cast(a, to)
            left_out = a[~ok]
            if len(left_out):
                assert "float" in src and to == "uint32", (src, to, left_out)
            lines.append(" ".join(["cast", src, to, str(int(ok.sum()))] + fmt(a[ok]) +
                                  fmt(r[ok])))
    for t in NEW:
        info = np.iinfo(t)
        vals = np.array([info.max, 1, info.min, info.max, 3, 2], t).reshape(2, 3)
        vals2 = np.array([info.max, info.max, 5, info.max - 1, 0, info.min], t).reshape(2, 3)
        for v in (vals, vals2):
            for op in ["sum", "prod", "max", "min", "mean", "argmax", "argmin"]:
                for axis in (None, 0, 1):
                    r = np.asarray(getattr(np, op)(v, axis=axis))
                    lines.append(" ".join(
                        ["reduce", op, t, "none" if axis is None else str(axis), "2", "3"] +
                        fmt(v) + [r.dtype.name, str(r.size)] + fmt(r)))
    # float16 and bfloat16 reduce in float32 and round once (kiln's rule; NumPy's sum and prod
    # of float16 accumulate in float16, its mean in float32): the expected values are NumPy's
    # reduction of the float32 values, rounded to the half. The sums are exact in float32, so
    # the order of the additions does not matter; 2048 + 1 + 1 shows the difference (float16
    # accumulation would lose both ones), 65504 + 65504 overflows to inf.
    for t in ["float16", "bfloat16"]:
        vals = np.array([2048, 1, 1, 0.5, 1000, -3.5], np.float32).reshape(2, 3)
        vals2 = np.array([65504, 65504, 1, -2, 0.25, 3], np.float32).reshape(2, 3)
        for v in (vals, vals2):
            v = cast(v, "float32", t)
            v32 = v.astype(np.float32)
            for op in ["sum", "prod", "max", "min", "mean", "argmax", "argmin"]:
                for axis in (None, 0, 1):
                    with np.errstate(all="ignore"):
                        r = np.asarray(getattr(np, op)(v32, axis=axis))
                    name = "int64"
                    if not op.startswith("arg"):
                        r = cast(r, "float32", t)
                        name = t
                    lines.append(" ".join(
                        ["reduce", op, t, "none" if axis is None else str(axis), "2", "3"] +
                        fmt(v) + [name, str(r.size)] + fmt(r)))
    with open(os.path.join(HERE, "dtypes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
