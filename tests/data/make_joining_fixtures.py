#!/usr/bin/python3
"""Writes tests/data/joining.txt, NumPy's answers for tests/test_joining.cpp: squeeze,
expand_dims, swapaxes, moveaxis, ravel, flip, eye, tril, triu, meshgrid, diag, tile, repeat,
concatenate, stack, hstack, vstack, roll and pad, over 0-d, empty and n-d inputs, several dtypes,
negative axes and bad arguments; and functional slice assignment (kiln's x.at(index).op(v)), as
NumPy's y = x.copy(); y[index] op= v; and take.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_joining_fixtures.py

Format (as statistics.txt), one record per line, a case being `case`, `call`, its `in` lines, then
`out` lines or `error`, then `end`:
    numpy VERSION
    case NAME
    call FUNC KEY=VALUE ..      (lists as 1,2; none for NumPy's None; pad widths as b,a,b,a..;
                                 an index as its parts joined by |, "new" for None, () for none)
    in DTYPE NDIM D0 D1 .. VALUES..
    out DTYPE NDIM D0 D1 .. VALUES..
    error                       (NumPy raises: kiln must throw a kiln::ShapeError)
Values are in row-major order: integers, 0/1 for bool, Python's repr of floats.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "joining.txt")


def fmt_array(tag, a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        vals = " ".join(repr(float(v)) for v in a.reshape(-1))
    else:
        vals = " ".join(str(int(v)) for v in a.reshape(-1))
    dims = " ".join(str(d) for d in a.shape)
    return " ".join(x for x in (tag, str(a.dtype), str(a.ndim), dims, vals) if x)


def fmt_kw(k, v):
    if v is None:
        return f"{k}=none"
    if isinstance(v, (tuple, list)):
        return f"{k}=" + ",".join(str(x) for x in v)
    return f"{k}={v}"


class Writer:
    def __init__(self):
        self.lines = [f"numpy {np.__version__}"]
        self.names = set()

    def case(self, name, func, inputs, call, **kw):
        if name in self.names:  # the same call reached twice (an axis list equal for 0-d)
            return
        self.names.add(name)
        self.lines.append(f"case {name}")
        self.lines.append(" ".join([f"call {func}"] + [fmt_kw(k, v) for k, v in kw.items()]))
        for a in inputs:
            self.lines.append(fmt_array("in", a))
        try:
            r = call(*inputs)
            outs = r if isinstance(r, (tuple, list)) else (r,)
            for o in outs:
                self.lines.append(fmt_array("out", o))
        except (ValueError, TypeError, IndexError):
            self.lines.append("error")
        self.lines.append("end")


def data(shape, dtype="float64", base=0):
    n = int(np.prod(shape))
    a = np.arange(base, base + n)
    if np.dtype(dtype).kind == "b":
        a = a % 3 == 0
    elif np.dtype(dtype).kind == "f":
        a = a * 0.5 - 1
    return a.astype(dtype).reshape(shape)


def pad_wrap(x, widths):
    """np.pad's wrap as NumPy 1.25 defines it (numpy#22575): periodic, whatever the widths.
    NumPy 1.24 misplaces the period when a width passes the axis's length and the two differ
    (numpy#22464); np.pad is still called for its errors."""
    np.pad(x, widths, "wrap")
    for ax, (b, e) in enumerate(np.broadcast_to(widths, (x.ndim, 2))):
        n = x.shape[ax]
        x = np.take(x, (np.arange(b + n + e) - b) % n, axis=ax) if b or e else x
    return x


def axarg(axes):
    if axes is None:
        return None
    return tuple(axes) if isinstance(axes, list) else axes


def main():
    w = Writer()
    shapes = [(), (0,), (5,), (2, 3), (3, 1, 4), (1, 2, 1, 3), (2, 0, 3)]

    def name(*parts):
        return "_".join(str(p).replace(" ", "").replace("(", "").replace(")", "")
                        .replace(",", "x").replace("-", "m") for p in parts)

    for si, s in enumerate(shapes):
        a = data(s)
        nd = len(s)
        # squeeze: all, each length-1 axis, a bad one
        for axes in [None] + [[i] for i in range(-nd, nd)] + ([[0, -1]] if nd >= 2 else []):
            w.case(name("squeeze", si, axes), "squeeze", [a],
                   lambda x, ax=axes: np.squeeze(x, axarg(ax)), axes=axes)
        for axes in [[0], [-1], [nd], [0, -1], [nd + 1], [0, 0]]:
            w.case(name("expand_dims", si, axes), "expand_dims", [a],
                   lambda x, ax=axes: np.expand_dims(x, axarg(ax)), axes=axes)
        for i, j in [(0, -1), (-1, 0), (0, nd)] if nd else [(0, 0)]:
            w.case(name("swapaxes", si, i, j), "swapaxes", [a],
                   lambda x, i=i, j=j: np.swapaxes(x, i, j), a1=i, a2=j)
        moves = [([0], [-1]), ([-1], [0])]
        if nd >= 3:
            moves += [([0, 1], [-1, -2]), ([2, 0], [0, 1]), ([0], [0, 1]), ([0, 0], [1, 2])]
        for src, dst in moves:
            w.case(name("moveaxis", si, src, dst), "moveaxis", [a],
                   lambda x, s_=src, d_=dst: np.moveaxis(x, s_, d_), src=src, dst=dst)
        w.case(name("ravel", si), "ravel", [a], np.ravel)
        for axes in [None, [0], [-1], [0, -1]]:
            w.case(name("flip", si, axes), "flip", [a],
                   lambda x, ax=axes: np.flip(x, axarg(ax)), axes=axes)
        for k in (-2, 0, 1, 5):
            w.case(name("tril", si, k), "tril", [a], lambda x, k=k: np.tril(x, k), k=k)
            w.case(name("triu", si, k), "triu", [a], lambda x, k=k: np.triu(x, k), k=k)
        for k in (-1, 0, 2):
            w.case(name("diag", si, k), "diag", [a], lambda x, k=k: np.diag(x, k), k=k)
        for reps in [[2], [2, 3], [1, 2, 1, 2], [0, 2]]:
            w.case(name("tile", si, reps), "tile", [a], lambda x, r=reps: np.tile(x, r), reps=reps)
        for r in (0, 3):
            for ax in [None, 0, -1]:
                w.case(name("repeat", si, r, ax), "repeat", [a],
                       lambda x, r=r, ax=ax: np.repeat(x, r, ax), repeats=r, axis=ax)
        for shift in (0, 1, -2, 7):
            for ax in [None, 0, -1]:
                w.case(name("roll", si, shift, ax), "roll", [a],
                       lambda x, sh=shift, ax=ax: np.roll(x, sh, ax), shift=shift, axis=ax)
        if nd >= 2:
            w.case(name("roll", si, "multi"), "roll", [a],
                   lambda x: np.roll(x, (1, -3, 2), (0, -1, 0)), shift=(1, -3, 2),
                   axis=(0, -1, 0))
        for mode in ("constant", "edge", "reflect", "wrap", "symmetric"):
            for widths in ([(1, 2)], [(0, 0)], [(3, 1)] * nd, [(7, 5)] * nd, [(-1, 0)], [(2, 11)],
                           [(13, 1)]):
                kw = {"constant_values": 9} if mode == "constant" else {}
                flat = [v for p in widths for v in p]
                w.case(name("pad", si, mode, flat), "pad", [a],
                       (lambda x, wd=widths: pad_wrap(x, wd)) if mode == "wrap" else
                       (lambda x, wd=widths, m=mode, kw=kw: np.pad(x, wd, m, **kw)),
                       width=flat, mode=mode, value=9)

    # dtypes through the index maps (bool, integers, float32)
    for dt in ("bool", "int32", "int64", "float32"):
        a = data((3, 4), dt)
        w.case(name("flip", dt), "flip", [a], lambda x: np.flip(x, 1), axes=[1])
        w.case(name("tril", dt), "tril", [a], lambda x: np.tril(x, 1), k=1)
        w.case(name("roll", dt), "roll", [a], lambda x: np.roll(x, 2, 1), shift=2, axis=1)
        w.case(name("pad", dt), "pad", [a],
               lambda x: np.pad(x, [(1, 1), (2, 0)], "reflect"), width=[1, 1, 2, 0],
               mode="reflect", value=0)
        w.case(name("pad_const", dt), "pad", [a],
               lambda x: np.pad(x, 1, "constant", constant_values=1), width=[1, 1],
               mode="constant", value=1)
        w.case(name("tile", dt), "tile", [a], lambda x: np.tile(x, (2, 1)), reps=[2, 1])

    # rows of 128 to 16384 elements, where the host computes an index map once per row
    # (src/host/chunk.cpp: tables, row gathers), its chunks of 1024 crossing rows or not
    for si, s in enumerate([(700,), (3, 300), (2, 2, 1500)]):
        nd = len(s)
        for dt in ("float64", "int32", "bool") if nd == 2 else ("float64",):
            a = data(s, dt)
            tag = name("long", si, dt)
            for shift, ax in [(7, -1), (-3, None), ((1, -130, 2), (0, -1, 0))]:
                w.case(name("roll", tag, shift, ax), "roll", [a],
                       lambda x, sh=shift, ax=ax: np.roll(x, sh, ax), shift=shift, axis=ax)
            for mode in ("constant", "edge", "reflect", "wrap", "symmetric"):
                for widths in ([(3, 1)] * nd, [(2, 0)] * (nd - 1) + [(5, 400)]):
                    kw = {"constant_values": 9} if mode == "constant" else {}
                    flat = [v for p in widths for v in p]
                    w.case(name("pad", tag, mode, flat), "pad", [a],
                           (lambda x, wd=widths: pad_wrap(x, wd)) if mode == "wrap" else
                           (lambda x, wd=widths, m=mode, kw=kw: np.pad(x, wd, m, **kw)),
                           width=flat, mode=mode, value=9)
            w.case(name("flip", tag), "flip", [a], lambda x: np.flip(x, -1), axes=[-1])
            w.case(name("tile", tag), "tile", [a], lambda x: np.tile(x, 2), reps=[2])
            w.case(name("repeat", tag), "repeat", [a], lambda x: np.repeat(x, 2, -1), repeats=2,
                   axis=-1)
            w.case(name("concatenate", tag), "concatenate", [a, data(s, dt, base=5)],
                   lambda *v: np.concatenate(v, -1), axis=-1)
            if nd >= 2:
                w.case(name("tril", tag), "tril", [a], lambda x: np.tril(x, 3), k=3)

    # past kiln's rank limit of 8 when an axis is added or interleaved: the fallbacks
    a5 = data((2, 1, 2, 1, 2))
    w.case("tile_rank5", "tile", [a5], lambda x: np.tile(x, (1, 2, 1, 3, 2)), reps=[1, 2, 1, 3, 2])
    a8 = data((1, 2, 1, 1, 1, 1, 3, 1))
    b8 = data((1, 2, 1, 1, 1, 1, 2, 1), base=100)
    w.case("concatenate_rank8", "concatenate", [a8, b8], lambda *v: np.concatenate(v, 6), axis=6)
    w.case("concatenate_rank8_equal", "concatenate", [a8, a8], lambda *v: np.concatenate(v, 1),
           axis=1)
    w.case("roll_rank8", "roll", [a8], lambda x: np.roll(x, 2, 6), shift=2, axis=6)
    w.case("pad_rank8", "pad", [a8], lambda x: np.pad(x, [(0, 0)] * 6 + [(2, 1), (0, 0)], "wrap"),
           width=[0, 0] * 6 + [2, 1, 0, 0], mode="wrap", value=0)

    # eye
    for n, m, k in [(3, None, 0), (3, 5, 1), (4, 2, -1), (0, None, 0), (3, 3, 7), (2, 0, 0),
                    (-1, None, 0)]:
        w.case(name("eye", n, m, k), "eye", [], lambda n=n, m=m, k=k: np.eye(n, m, k),
               n=n, m=m, k=k)

    # meshgrid
    xs = [data((3,)), data((2,), base=10), data((4,), base=20)]
    for cnt in (1, 2, 3):
        for ix in ("xy", "ij"):
            w.case(name("meshgrid", cnt, ix), "meshgrid", xs[:cnt],
                   lambda *v, ix=ix: np.meshgrid(*v, indexing=ix), indexing=ix)
    w.case("meshgrid_2d_input", "meshgrid", [data((2, 2)), data((3,))],
           lambda *v: np.meshgrid(*v), indexing="xy")
    w.case("meshgrid_bad_indexing", "meshgrid", [data((2,))],
           lambda *v: np.meshgrid(*v, indexing="yx"), indexing="yx")

    # joining
    joins = [
        ("equal_0", [(2, 3), (2, 3)], 0),
        ("equal_1", [(2, 3), (2, 3), (2, 3)], 1),
        ("unequal_0", [(1, 3), (4, 3), (2, 3)], 0),
        ("unequal_neg", [(2, 1), (2, 4)], -1),
        ("unequal_mid", [(2, 3, 2), (2, 1, 2), (2, 5, 2)], 1),
        ("with_empty", [(2, 0), (2, 3), (2, 0), (2, 2)], 1),
        ("all_empty", [(0, 2), (0, 2)], 0),
        ("1d", [(3,), (5,), (1,)], 0),
        ("single", [(2, 3)], 1),
        ("none", [(2, 3), (4,)], None),
        ("rank_mismatch", [(2, 3), (3,)], 0),
        ("shape_mismatch", [(2, 3), (3, 3)], 1),
        ("bad_axis", [(2, 3), (2, 3)], 2),
        ("zero_d", [(), ()], 0),
    ]
    for nm, ss, ax in joins:
        ins = [data(s, base=100 * i) for i, s in enumerate(ss)]
        w.case(name("concatenate", nm), "concatenate", ins,
               lambda *v, ax=ax: np.concatenate(v, ax), axis=ax)
    w.case("concatenate_promote", "concatenate",
           [data((2,), "int32"), data((3,), "float32"), data((1,), "bool")],
           lambda *v: np.concatenate(v))
    w.case("concatenate_promote_int", "concatenate", [data((2,), "int32"), data((2,), "int64")],
           lambda *v: np.concatenate(v))
    w.case("concatenate_nothing", "concatenate", [], lambda: np.concatenate([]), axis=0)
    for nm, ss in [("1d", [(3,), (3,)]), ("2d", [(2, 3)] * 3), ("0d", [(), ()]),
                   ("empty", [(0, 2), (0, 2)]), ("mismatch", [(2,), (3,)])]:
        ins = [data(s, base=100 * i) for i, s in enumerate(ss)]
        nd = len(ss[0])
        for ax in range(-nd - 2, nd + 2):
            w.case(name("stack", nm, ax), "stack", ins, lambda *v, ax=ax: np.stack(v, ax),
                   axis=ax)
    for f in ("hstack", "vstack"):
        for nm, ss in [("1d", [(3,), (2,)]), ("1d_eq", [(3,), (3,)]), ("2d", [(2, 3), (2, 1)]),
                       ("2d_rows", [(2, 3), (1, 3)]), ("0d", [(), ()]),
                       ("3d", [(2, 2, 2), (2, 1, 2)]), ("3d_rows", [(1, 2, 2), (2, 2, 2)])]:
            ins = [data(s, base=100 * i) for i, s in enumerate(ss)]
            w.case(name(f, nm), f, ins, lambda *v, f=f: getattr(np, f)(v))

    # x.at(index).op(v): y = x.copy(); y[index] op= v, v broadcast to the region
    def parse_index(text):
        parts = []
        if text == "()":  # no index at all: x[()]
            return ()
        for p in text.split("|"):
            if p == "new":
                parts.append(None)
            elif p == "...":
                parts.append(Ellipsis)
            elif ":" in p:
                parts.append(slice(*[int(q) if q else None for q in p.split(":")]))
            else:
                parts.append(int(p))
        return tuple(parts)

    def at_ref(x, v, index, op):
        y = x.copy()
        i = parse_index(index)
        if op == "set":
            y[i] = v
        elif op == "add":
            y[i] += v
        elif op == "multiply":
            y[i] *= v
        elif op == "min":
            y[i] = np.minimum(y[i], v)
        else:
            y[i] = np.maximum(y[i], v)
        return y

    at_cases = [
        ((7,), ["1:-1", "::2", "::-1", "5:1:-2", "-1", "3", "...", "2:2", "new|1:4"]),
        ((4, 5), ["1:-1|1:-1", "::-1|::2", "2", "-1|1:", "...|0", ":|new|3", "1:3|::-3"]),
        ((3, 1, 4), ["...|1::2", "0|0|:", "::2|:|::-1"]),
        ((), ["...", "()"]),
        ((0, 3), [":|1:", "...|0"]),
    ]
    ops = ("set", "add", "multiply", "min", "max")
    for xs, indices in at_cases:
        x = data(xs)
        for ii, index in enumerate(indices):
            region = x[parse_index(index)]
            shapes = [(), region.shape, region.shape[-1:] if region.ndim else ()]
            for vi, vs in enumerate(shapes):
                for op in ops:
                    v = data(vs, base=20 + vi)
                    w.case(name("at", xs, ii, vi, op), "at", [x, v],
                           lambda x, v, i=index, o=op: at_ref(x, v, i, o), op=op, index=index)
        # a region the value cannot broadcast to
        w.case(name("at_badshape", xs), "at", [x, data((9,))],
               lambda x, v, i=indices[0]: at_ref(x, v, i, "set"), op="set", index=indices[0])
    # dtypes: set casts as NumPy's x[i] = v (unsafe), the operations keep the same kind
    for xt, vt in [("int64", "float64"), ("int32", "int64"), ("float32", "float64"),
                   ("float64", "int32"), ("bool", "bool"), ("int64", "bool")]:
        x, v = data((3, 4), xt), data((4,), vt, base=3)
        w.case(name("at_set", xt, vt), "at", [x, v], lambda x, v: at_ref(x, v, "1:", "set"),
               op="set", index="1:")
        if np.can_cast(np.result_type(x, v), x.dtype, "same_kind") and xt != "bool":
            w.case(name("at_add", xt, vt), "at", [x, v], lambda x, v: at_ref(x, v, "::2", "add"),
                   op="add", index="::2")

    # x.at(integer arrays).op(v): a scatter, NumPy's y[idx] = v (the last of repeated indices
    # wins) and add / multiply / minimum / maximum.at (every update applies)
    def scatter_ref(x, v, idx, op):
        y = x.copy()
        if op == "set":
            y[idx] = v
        else:
            ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                     "max": np.maximum}[op]
            ufunc.at(y, idx, v)
        return y

    scatter_cases = [
        ((7,), [[0, 2, 0, 6, -1, 0]]), ((7,), [[[1, 1], [3, -4]]]), ((7,), [[]]),
        ((4, 3), [[3, 0, 3, 3]]), ((4, 3), [[0, 0, 3, -1], [1, 1, 2, 2]]),
        ((4, 3), [[[0], [3]], [0, 0, 2]]), ((2, 3, 4), [[1, 0, 1], [2, 2, -1]]),
        ((2, 3, 4), [[0, 0]]),
    ]
    for si, (xs, idx) in enumerate(scatter_cases):
        index = tuple(np.array(i, "int64") for i in idx)
        for dt in ("float64", "int64", "int8", "bool"):
            x = data(xs, dt)
            if dt == "int8":
                x = (x * 37).astype("int8")  # repeated adds and products wrap
            region = x[index]
            for vi, vs in enumerate([(), region.shape, region.shape[-1:] if region.ndim else ()]):
                v = data(vs, dt, base=20 + vi)
                if dt == "int8":
                    v = (v * 53).astype("int8")
                for op in ("set", "add", "multiply", "min", "max"):
                    w.case(name("scatter", xs, si, dt, vi, op), "scatter", [x, v, *index],
                           lambda x, v, *ii, o=op: scatter_ref(x, v, tuple(ii), o), op=op)
    # an index out of range, values that do not broadcast to the selected region
    w.case("scatter_bad_index", "scatter", [data((4,)), data(()), np.array([1, 4], "int64")],
           lambda x, v, i: scatter_ref(x, v, (i,), "add"), op="add")
    w.case("scatter_bad_shape", "scatter", [data((4, 3)), data((2,)), np.array([1, 2], "int64")],
           lambda x, v, i: scatter_ref(x, v, (i,), "add"), op="add")
    w.case("scatter_int32_index", "scatter",
           [data((5,)), data((3,)), np.array([4, -5, 4], "int32")],
           lambda x, v, i: scatter_ref(x, v, (i,), "add"), op="add")

    # scans: cumsum / cumprod along every axis and raveled, NumPy's result dtypes; rows longer
    # than a GPU tile (2048) too, whose sums of halves stay exact in float64
    for xs in [(7,), (3, 4), (2, 3, 4), (), (0, 3), (3, 5000), (2, 2100, 3)]:
        for dt in ("float64", "int64", "int32", "int8", "uint8", "bool", "float16"):
            if len(xs) > 1 and xs[0] * xs[1] > 1000 and dt in ("int32", "uint8", "bool",
                                                                "float16"):
                continue
            x = data(xs, dt)
            for ax in [None] + list(range(-len(xs), len(xs))):
                for f in ("cumsum", "cumprod"):
                    if f == "cumprod" and dt == "float64" and len(xs) > 1 and xs[1] > 100:
                        continue  # products of long rows overflow to inf
                    w.case(name(f, xs, dt, ax), f, [x],
                           lambda x, f=f, ax=ax: getattr(np, f)(x, axis=ax), axis=ax)
    w.case("cumsum_axis_0d", "cumsum", [data(())], lambda x: np.cumsum(x, axis=0), axis=0)
    w.case("cumsum_axis_bad", "cumsum", [data((3,))], lambda x: np.cumsum(x, axis=1), axis=1)

    # selection: nonzero, flatnonzero, x[mask], compress (counts that depend on the data)
    for xs in [(7,), (3, 4), (2, 3, 4), (0, 3), (4000,)]:
        x = data(xs) if xs != (4000,) else (np.arange(4000) % 7 - 3).astype("float64")
        w.case(name("nonzero", xs), "nonzero", [x], lambda x: np.nonzero(x))
        w.case(name("flatnonzero", xs), "flatnonzero", [x], lambda x: np.flatnonzero(x))
        for k in range(len(xs) + 1):
            mask = (data(xs[:k], "int64") % 3 != 1) if k else np.array(True)
            if k == 0:
                continue  # a 0-d mask is NumPy's x[True], not a mask over axes
            w.case(name("masked", xs, k), "masked", [x, mask], lambda x, m: x[m])
    # (nonzero of a 0-d array: NumPy 1.24 deprecates it, NumPy 2 raises as kiln; test_joining)
    w.case("masked_badshape", "masked", [data((3, 4)), np.ones((4,), bool)], lambda x, m: x[m])
    w.case("masked_int8", "masked", [data((5,), "int8"), data((5,), "int64") % 2 == 0],
           lambda x, m: x[m])
    for xs in [(3, 4), (5,)]:
        x = data(xs)
        for ci, cond in enumerate([[True, False, True], [False, True], [True] * 5 + [False],
                                   [False] * 6 + [True]]):
            for ax in [None, 0, -1]:
                c = np.array(cond, bool)
                w.case(name("compress", xs, ci, ax), "compress", [c, x],
                       lambda c, x, ax=ax: np.compress(c, x, axis=ax), axis=ax)

    # take_along_axis: broadcasting of the other axes, negative and bad indices, axis=None
    along = [((3, 4), [[0, 3], [1, 1], [-1, 2]], 1), ((3, 4), [[2, 0, 1, 0]], 0),
             ((3, 4), [[0], [2]], 0), ((2, 3, 4), [[[3], [0], [1]], [[2], [2], [-4]]], 2),
             ((2, 3, 4), [[[1, 0, 2, 1]]], 1), ((5,), [4, 0, -5], None), ((3, 4), [[4]], 1),
             ((3, 4), [[0, 1]], -1), ((0, 3), [[0]], 1), ((3, 4), [[0, 1]], None)]
    for li, (xs, idx, ax) in enumerate(along):
        w.case(name("take_along_axis", xs, li), "take_along_axis",
               [data(xs), np.array(idx, "int64")],
               lambda x, i, ax=ax: np.take_along_axis(x, i, axis=ax), axis=ax)

    # take (integer-array indexing along one axis): NumPy's modes, negative and bad indices
    for xs in [(7,), (3, 4), (2, 3, 5), (0, 3)]:
        x = data(xs)
        for ii, idx in enumerate([[0], [2, -1, 0, 2], [[1, 0], [0, -2]], [], [5], [-4]]):
            for ax in [None, 0, -1]:
                for mode in ("raise", "wrap", "clip"):
                    w.case(name("take", xs, ii, ax, mode), "take", [x, np.array(idx, "int64")],
                           lambda x, i, ax=ax, m=mode: np.take(x, i, ax, mode=m), axis=ax,
                           mode=mode)
    w.case("take_int32", "take", [data((4,), "int32"), np.array([3, 1], "int32")],
           lambda x, i: np.take(x, i), axis=None, mode="raise")

    # integer arrays on several leading axes at once (NumPy's x[i0, i1, ...]): broadcasting,
    # negative indices, the axes not indexed kept, bad indices and shapes that do not broadcast
    fancy = [((3, 4), [[2, 0, -1], [1, 3, 0]]), ((3, 4), [[[0], [2]], [1, 3]]),
             ((3, 4), [[1], [-4]]), ((2, 3, 5), [[1, 0], [2, -3]]),
             ((2, 3, 5), [[1], [2], [4]]), ((2, 3, 5), [[[1], [0]], [0, 2], [4]]),
             ((2, 3, 5), [[], []]), ((0, 3), [[], []]), ((3, 4), [[3], [0]]),
             ((3, 4), [[0], [4]]), ((3, 4), [[0, 1], [0, 1, 2]]), ((3, 4), [[0], [0], [0]])]
    for fi, (xs, idx) in enumerate(fancy):
        ins = [data(xs)] + [np.array(i, "int64") for i in idx]
        w.case(name("fancy", xs, fi), "fancy", ins, lambda x, *ii: x[tuple(ii)])
    w.case("fancy_int32", "fancy", [data((3, 4), "int32"), np.array([2, 1], "int32"),
                                     np.array([0, -1], "int32")], lambda x, *ii: x[tuple(ii)])

    with open(OUT, "w") as fh:
        fh.write("\n".join(w.lines) + "\n")
    print(f"wrote {len(w.names)} cases to {OUT}")


if __name__ == "__main__":
    main()
