"""NumPy's answers for tests/test_sorting.cpp, written at test time into the folder given.

For each case: <name>_in.npy (and <name>_v.npy for searchsorted), <name>_out.npy (and
<name>_out2.npy: unique's counts), and a line of cases.txt: name op axis arg. axis is an
integer or "none"; arg is a side (searchsorted), a q ("0.3" or "0,0.25,1" for a vector), or "-".
Sorts are NumPy's kind="stable" (kiln's sorts are stable).
"""
import sys
import warnings

import numpy as np

out = sys.argv[1]
warnings.simplefilter("ignore")  # NaN arithmetic in quantiles, as intended
np.seterr(all="ignore")
rng = np.random.default_rng(20261203)
lines = []

REAL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]


def values(dtype, shape):
    """Values with many ties; floats add NaNs of both signs, -0.0, 0.0 and infinities."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.startswith("int") or dtype.startswith("uint"):
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, info.max - 1], dtype=dtype)
        if dtype.startswith("int"):
            pool = np.concatenate([pool, np.array([-1, -2, info.min + 1], dtype=dtype)])
        return pool[rng.integers(0, len(pool), n)].reshape(shape)
    real = dtype.startswith("complex") or None
    part = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    nan = np.array(np.nan, dtype=part)
    negnan = -nan
    pool = np.array([0.0, -0.0, 1.5, -1.5, 2.0, np.inf, -np.inf, 0.25, -7.0], dtype=part)
    pool = np.concatenate([pool, np.array([nan, negnan], dtype=part)])
    if real is None:
        return pool[rng.integers(0, len(pool), n)].reshape(shape)
    re = pool[rng.integers(0, len(pool), n)]
    im = pool[rng.integers(0, len(pool), n)]
    v = np.empty(n, dtype=dtype)
    v.real = re
    v.imag = im
    return v.reshape(shape)


def save(name, **arrays):
    for k, a in arrays.items():
        np.save(f"{out}/{name}_{k}.npy", np.array(a, order="C"))  # 0-d stays 0-d


def axis_str(axis):
    return "none" if axis is None else str(axis)


def quantile(f, x, q, axis):
    """NumPy's quantile of the float64 values: kiln's rule for every real input (README:
    quantiles in float64). NumPy's own result dtype differs by version (1.24 subtracts the
    neighbours in the input's dtype, integers wrapping, then scales in float64; 2.x keeps float16
    and float32 throughout), so the input is widened first and the answer is the same under both."""
    if x.dtype.kind in "iubf":
        x = x.astype(np.float64)
    return np.asarray(f(x, q, axis=axis)).astype(np.float64)


for dtype in REAL + COMPLEX:
    for shape in [(6, 7), (2, 3, 5), (0,), (1,), (), (4, 0)]:
        x = values(dtype, shape)
        axes = [None] + list(range(-len(shape), len(shape)))
        for axis in axes:
            for op in ["sort", "argsort"]:
                name = f"{op}_{dtype}_{len(lines)}"
                r = getattr(np, op)(x, axis=axis, kind="stable")
                save(name, **{"in": x, "out": r})
                lines.append(f"{name} {op} {axis_str(axis)} -")
    # Long rows: many ties, every key pass of a radix sort.
    x = values(dtype, (3, 1000))
    for op in ["sort", "argsort"]:
        name = f"{op}_{dtype}_{len(lines)}"
        save(name, **{"in": x, "out": getattr(np, op)(x, axis=-1, kind="stable")})
        lines.append(f"{name} {op} -1 -")
    # A row long enough for the host's parallel sort (parts merged), in a few dtypes.
    if dtype in ("bool", "int16", "float32", "complex64"):
        x = values(dtype, (140003,))
        for op in ["sort", "argsort"]:
            name = f"{op}_{dtype}_{len(lines)}"
            save(name, **{"in": x, "out": getattr(np, op)(x, kind="stable")})
            lines.append(f"{name} {op} -1 -")
    # unique, with counts
    for shape in [(5, 9), (0,), (), (40,)]:
        x = values(dtype, shape)
        name = f"unique_{dtype}_{len(lines)}"
        u, c = np.unique(x, return_counts=True)
        save(name, **{"in": x, "out": u, "out2": c})
        lines.append(f"{name} unique none -")
    # searchsorted: a sorted 1-d array, values of any shape, both sides
    a = np.sort(values(dtype, (30,)), kind="stable")
    v = values(dtype, (4, 6))
    for side in ["left", "right"]:
        name = f"searchsorted_{dtype}_{len(lines)}"
        save(name, **{"in": a, "v": v, "out": np.searchsorted(a, v, side=side)})
        lines.append(f"{name} searchsorted none {side}")
    if dtype in COMPLEX:
        continue
    # median and quantiles: without NaNs (values in arrays with them are NaN) and with.
    for with_nan in [False, True]:
        x = values(dtype, (5, 8))
        if dtype.startswith("float") and not with_nan:
            x = np.where(np.isnan(x), np.array(0.5, dtype=dtype), x)
            x = np.where(np.isinf(x), np.array(3.0, dtype=dtype), x)
        if dtype.startswith("float") and not with_nan:
            x = x + rng.integers(0, 100, x.shape).astype(dtype) / 8
        if with_nan and not dtype.startswith("float"):
            continue
        for axis in [None, 0, 1, -1]:
            name = f"median_{dtype}_{len(lines)}"
            save(name, **{"in": x, "out": np.median(x, axis=axis)})
            lines.append(f"{name} median {axis_str(axis)} -")
            if dtype == "bool":  # NumPy's quantile subtracts bools, which it refuses
                continue
            for q in ["0.3", "0", "1", "0.5", "0,0.25,0.5,0.9,1"]:
                qv = [float(t) for t in q.split(",")] if "," in q else float(q)
                name = f"quantile_{dtype}_{len(lines)}"
                save(name, **{"in": x, "out": quantile(np.quantile, x, qv, axis)})
                lines.append(f"{name} quantile {axis_str(axis)} {q}")
            name = f"percentile_{dtype}_{len(lines)}"
            save(name, **{"in": x, "out": quantile(np.percentile, x, [10, 37.5, 99], axis)})
            lines.append(f"{name} percentile {axis_str(axis)} 10,37.5,99")

with open(f"{out}/cases.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print(len(lines), "cases")
