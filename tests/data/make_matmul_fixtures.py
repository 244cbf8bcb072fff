#!/usr/bin/python3
"""Writes tests/data/matmul.txt, NumPy's answers for tests/test_matmul.cpp: numpy.matmul over
1-d promotion, batch broadcasting, empty axes, transposed and sliced views, every dtype kiln
multiplies, promotions between them, and bad input.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_matmul_fixtures.py

Format (tests/support/fixture_cases.hpp), a case being `case`, `call`, two `in` lines (the stored
operands), then `out` lines or `error`, then `end`:
    call matmul a_view=V b_view=V   (V: how kiln views the stored operand before multiplying,
                                     NumPy's same view: none | T (swap the last two axes) |
                                     rows2 ([..., ::2, :]) | cols2 ([..., ::2]) | rev
                                     ([..., ::-1, :]) | Tsub (T, then [..., 1:, 1:]))
    out DTYPE ...   NumPy's result: its dtype and shape, and its values (exact for bool and
                    integers; a float result's values are the reference's, below)
    out ...         float and complex results only: the product of the operands in float64 /
                    complex128 (the operands' own values, exactly), the value checked against
    out ...         and |a| @ |b| in float64, which scales the error bound
bfloat16, which NumPy lacks, is written as its name with values that bfloat16 holds exactly.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matmul.txt")

VIEWS = {
    "none": lambda x: x,
    "T": lambda x: np.swapaxes(x, -1, -2),
    "rows2": lambda x: x[..., ::2, :],
    "cols2": lambda x: x[..., ::2],
    "rev": lambda x: x[..., ::-1, :],
    "Tsub": lambda x: np.swapaxes(x, -1, -2)[..., 1:, 1:],
}


def fmt_value(v, kind):
    if kind == "c":
        return f"{float(v.real)!r},{float(v.imag)!r}"
    if kind in "biu":
        return str(int(v))
    return repr(float(v))


def fmt_array(tag, a, name=None):
    a = np.asarray(a)
    vals = " ".join(fmt_value(v, a.dtype.kind) for v in a.reshape(-1))
    dims = " ".join(str(d) for d in a.shape)
    return f"{tag} {name or a.dtype} {a.ndim} {dims} {vals}".rstrip().replace("  ", " ")


def bfloat16_values(x):
    """x (float) rounded to 8 significant bits: values bfloat16 holds exactly."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return np.ldexp(np.round(m * 256) / 256, e)


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype == "bfloat16":
        a = bfloat16_values(rng.normal(size=n) * 3 + 1).astype(np.float32)
    elif np.dtype(dtype).kind == "u":
        a = rng.integers(0, 40, n).astype(dtype)
    elif np.dtype(dtype).kind == "i":
        a = rng.integers(-40, 40, n).astype(dtype)
    elif np.dtype(dtype).kind == "c":
        a = (rng.normal(size=n) * 3 + 1j * rng.normal(size=n) * 3).astype(dtype)
    else:
        a = (rng.normal(size=n) * 3 + 1).astype(dtype)
    return a.reshape(shape)


def stored_shape(shape, view):
    """The shape to store so that VIEWS[view] of it has `shape`."""
    s = list(shape)
    if view == "T":
        s[-1], s[-2] = s[-2], s[-1]
    elif view == "rows2":
        s[-2] = 2 * s[-2] - 1 if s[-2] else 0
    elif view == "cols2":
        s[-1] = 2 * s[-1] - 1 if s[-1] else 0
    elif view == "Tsub":
        s[-1], s[-2] = s[-2] + 1, s[-1] + 1
    return tuple(s)


class Writer:
    def __init__(self):
        self.lines = [f"numpy {np.__version__}"]
        self.names = set()

    def case(self, name, a, b, ta, tb, a_view="none", b_view="none", func="matmul", k=None,
             **kw):
        """a, b: the stored operands as NumPy arrays (float32 standing in for bfloat16); func:
        a numpy function of (a, b, **kw); k: the length of its sums (default a's last axis)."""
        assert name not in self.names, name
        self.names.add(name)
        x, y = VIEWS[a_view](a), VIEWS[b_view](b)
        f = lambda p, q: getattr(np, func)(p, q, **kw)
        if k is None:
            k = x.shape[-1] if x.ndim else 1
        written = dict(kw)
        if isinstance(kw.get("axes"), tuple):  # tensordot's pair of lists
            written = {"a_axes": kw["axes"][0], "b_axes": kw["axes"][1]}
        args = " ".join(f"{key}=" + (",".join(map(str, v)) if isinstance(v, (list, tuple))
                                     else str(v)) for key, v in written.items())
        self.lines += [f"case {name}",
                       f"call {func} a_view={a_view} b_view={b_view} k={k} {args}".rstrip(),
                       fmt_array("in", a, ta), fmt_array("in", b, tb)]
        try:
            r = f(x, y)
        except (ValueError, TypeError):
            self.lines += ["error", "end"]
            return
        if "bfloat16" in (ta, tb):
            others = [t for t in (ta, tb) if t != "bfloat16"]
            other = np.dtype(others[0]) if others else None
            # NumPy has no bfloat16; kiln promotes it as ml_dtypes does: bfloat16 with itself,
            # bool or an 8-bit integer, float32 with float16, else the wider operand's dtype.
            rname = "bfloat16" if other is None or other.kind in "biu" and other.itemsize == 1 \
                else "float32" if other == np.float16 else str(other)
        else:
            rname = str(r.dtype)
        if r.dtype.kind in "biu":
            self.lines += [fmt_array("out", r, rname), "end"]
            return
        wide = np.complex128 if r.dtype.kind == "c" else np.float64
        ref = np.asarray(f(x.astype(wide), y.astype(wide)))
        mag = np.asarray(f(np.abs(x).astype(np.float64), np.abs(y).astype(np.float64)))
        self.lines += [fmt_array("out", ref, rname), fmt_array("out", ref),
                       fmt_array("out", mag), "end"]

    def write(self):
        with open(OUT, "w") as f:
            f.write("\n".join(self.lines) + "\n")


SHAPES = [
    ("vv", (4,), (4,)),
    ("vm", (4,), (4, 3)),
    ("mv", (3, 4), (4,)),
    ("mm", (3, 4), (4, 5)),
    ("k1", (3, 1), (1, 2)),
    ("batch_bcast", (2, 1, 3, 4), (5, 4, 2)),
    ("batch_mv", (2, 3, 4), (4,)),
    ("batch_vm", (4,), (2, 4, 3)),
    ("batch_one", (1, 3, 4), (2, 4, 5)),
    ("batch_same", (3, 2, 5), (3, 5, 4)),
    ("k0", (3, 0), (0, 4)),
    ("m0", (0, 4), (4, 5)),
    ("batch0", (2, 0, 3, 4), (4, 2)),
    ("vv_k0", (0,), (0,)),
    ("big", (17, 40), (40, 9)),
    ("big_batch", (2, 12, 30), (30, 7)),
]
FLOATS = ["float32", "float64", "complex64", "complex128", "float16", "bfloat16"]
EXACT = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def main():
    w = Writer()
    seed = 0
    for dt in FLOATS + EXACT:
        for name, sa, sb in SHAPES:
            if name.startswith("big") and dt not in ("float32", "float64", "float16", "int32"):
                continue
            seed += 1
            w.case(f"{name}_{dt}", data(sa, dt, seed), data(sb, dt, seed + 1000), dt, dt)
    # views the BLAS reads in place (T, rows2, Tsub) and ones kiln writes densely first
    for dt in ("float32", "float64", "complex64", "float16", "int32"):
        for av, bv in [("T", "none"), ("none", "T"), ("T", "T"), ("rows2", "none"),
                       ("none", "rows2"), ("cols2", "none"), ("none", "cols2"), ("rev", "T"),
                       ("Tsub", "Tsub")]:
            for bname, sa, sb in [("mm", (5, 6), (6, 4)), ("batch", (3, 5, 6), (6, 4)),
                                  ("bcast", (2, 1, 5, 6), (3, 6, 4))]:
                seed += 1
                a = data(stored_shape(sa, av), dt, seed)
                b = data(stored_shape(sb, bv), dt, seed + 1000)
                w.case(f"view_{bname}_{av}_{bv}_{dt}", a, b, dt, dt, av, bv)
    # promotion between dtypes
    for ta, tb in [("float32", "float64"), ("int32", "float32"), ("float16", "float32"),
                   ("int64", "complex64"), ("bool", "int8"), ("bool", "float16"),
                   ("uint8", "int8"), ("float16", "complex64"), ("bfloat16", "float32"),
                   ("bfloat16", "bool"), ("int32", "int64"), ("uint32", "int32")]:
        seed += 1
        w.case(f"promote_{ta}_{tb}", data((3, 4), ta, seed), data((4, 2), tb, seed + 1000), ta, tb)
    # bad input: contracted axes differ, batch axes do not broadcast, 0-d operands
    for name, sa, sb in [("k_mismatch", (3, 4), (5, 6)), ("vv_mismatch", (4,), (5,)),
                         ("mv_mismatch", (3, 4), (3,)), ("batch_mismatch", (2, 3, 4), (3, 4, 2)),
                         ("scalar_a", (), (3,)), ("scalar_b", (3, 3), ())]:
        w.case(f"bad_{name}", data(sa, "float64", 1), data(sb, "float64", 2), "float64", "float64")
    # dot, vdot, inner, outer, tensordot: compositions of matmul
    comps = [
        ("dot", "vv", (4,), (4,), {}), ("dot", "mv", (3, 4), (4,), {}),
        ("dot", "mm", (3, 4), (4, 5), {}), ("dot", "nd_v", (2, 3, 4), (4,), {}),
        ("dot", "nd_nd", (2, 3, 4), (5, 4, 2), {}), ("dot", "v_nd", (4,), (2, 4, 3), {}),
        ("dot", "scalar", (), (2, 3), {}), ("dot", "bad", (3, 4), (5,), {}),
        ("dot", "empty", (2, 0), (0, 3), {}),
        ("vdot", "vv", (5,), (5,), {}), ("vdot", "mm", (2, 3), (3, 2), {}),
        ("vdot", "bad", (2, 3), (5,), {}),
        ("inner", "vv", (4,), (4,), {}), ("inner", "mm", (2, 3), (4, 3), {}),
        ("inner", "nd", (2, 3, 4), (5, 4), {}), ("inner", "scalar", (3,), (), {}),
        ("inner", "bad", (2, 3), (3, 2), {}),
        ("outer", "vv", (3,), (4,), {}), ("outer", "mv", (2, 2), (3,), {}),
        ("outer", "empty", (0,), (3,), {}),
        ("tensordot", "ax2", (2, 3, 4), (3, 4, 5), {"axes": 2}),
        ("tensordot", "ax1", (2, 3), (3, 4), {"axes": 1}),
        ("tensordot", "ax0", (2,), (3, 2), {"axes": 0}),
        ("tensordot", "pairs", (3, 4, 5), (4, 3, 2), {"axes": ([1, 0], [0, 1])}),
        ("tensordot", "neg", (3, 4, 5), (5, 2, 4), {"axes": ([-1, 1], [0, -1])}),
        ("tensordot", "bad", (2, 3), (4, 5), {"axes": 1}),
    ]
    for func, label, sa, sb, kw in comps:
        for dt in ("float32", "float64", "complex64", "complex128", "int32", "bool"):
            seed += 1
            a, b = data(sa, dt, seed), data(sb, dt, seed + 1000)
            k = 1
            if func == "vdot":
                k = a.size
            elif func in ("dot", "inner") and a.ndim and b.ndim:
                k = a.shape[-1]
            elif func == "tensordot":
                axes = kw["axes"]
                ca = list(range(a.ndim - axes, a.ndim)) if isinstance(axes, int) else axes[0]
                k = int(np.prod([a.shape[i] for i in ca]))
            w.case(f"{func}_{label}_{dt}", a, b, dt, dt, func=func, k=k, **kw)
    w.write()


if __name__ == "__main__":
    main()
