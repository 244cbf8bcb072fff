#!/usr/bin/python3
"""Writes tests/data/statistics.txt, NumPy's answers for tests/test_statistics.cpp: var, std and
the nan-functions, count_nonzero, average, ptp, cov, corrcoef, histogram, bincount, isclose and
numpy.fft's fftfreq, rfftfreq, fftshift and ifftshift, over several dtypes, shapes and axes, with
NaN, inf, empty and 0-d inputs and bad arguments.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_statistics_fixtures.py

Format, one record per line, a case being `case`, `call`, its `in` lines, then `out` lines or
`error`, then `end`:
    numpy VERSION
    case NAME
    call FUNC KEY=VALUE ..      (axes=0,1 | none; range=LO,HI; bools as 0/1)
    in DTYPE NDIM D0 D1 .. VALUES..
    out DTYPE NDIM D0 D1 .. VALUES..
    error                       (NumPy raises: kiln must throw a kiln::Error)
Values are in row-major order: Python's repr of floats (nan, inf, -inf), integers, 0/1 for bool,
RE,IM for complex.
"""
import os
import warnings

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "statistics.txt")


def fmt_value(v, dt):
    if dt.kind == "c":
        return f"{float(v.real)!r},{float(v.imag)!r}"
    if dt.kind == "b":
        return str(int(v))
    if dt.kind in "iu":
        return str(int(v))
    return repr(float(v))


def fmt_array(tag, a):
    a = np.asarray(a)
    vals = " ".join(fmt_value(v, a.dtype) for v in a.reshape(-1))
    dims = " ".join(str(d) for d in a.shape)
    return f"{tag} {a.dtype} {a.ndim} {dims} {vals}".rstrip().replace("  ", " ")


def fmt_kw(k, v):
    if v is None:
        return f"{k}=none"
    if isinstance(v, bool):
        return f"{k}={int(v)}"
    if isinstance(v, (tuple, list)):
        return f"{k}=" + ",".join(repr(x) for x in v)
    return f"{k}={v!r}"


def data(shape, dtype, seed, special=None):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif np.dtype(dtype).kind in "iu":
        a = rng.integers(-20, 20, n).astype(dtype)
    elif np.dtype(dtype).kind == "c":
        a = (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
    else:
        a = (rng.normal(size=n) * 3 + 1).astype(dtype)
    a = a.reshape(shape)
    if special:
        flat = a.reshape(-1)
        for i, v in special:
            flat[i] = v
    return a


class Writer:
    def __init__(self):
        self.lines = [f"numpy {np.__version__}"]
        self.names = set()

    def case(self, name, func, inputs, call, **kw):
        assert name not in self.names, name
        self.names.add(name)
        self.lines.append(f"case {name}")
        self.lines.append(" ".join([f"call {func}"] + [fmt_kw(k, v) for k, v in kw.items()]))
        for a in inputs:
            self.lines.append(fmt_array("in", a))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = call(*inputs)
            outs = r if isinstance(r, tuple) else (r,)
            for o in outs:
                self.lines.append(fmt_array("out", o))
        except (ValueError, TypeError, ZeroDivisionError):
            self.lines.append("error")
        self.lines.append("end")


def np_axes(axes):
    if axes is None:
        return None
    return tuple(axes) if len(axes) > 1 else axes[0]


def main():
    w = Writer()
    shapes = [(7,), (3, 4), (2, 3, 4)]
    dtypes = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]

    # var / std over dtypes, shapes, axes, ddof, keepdims
    for func in ("var", "std"):
        f = getattr(np, func)
        for dt in dtypes:
            for si, shape in enumerate(shapes):
                axes_list = [None] + [[i] for i in range(len(shape))]
                if len(shape) == 3:
                    axes_list += [[0, 2], [-1, -2]]
                for ai, axes in enumerate(axes_list):
                    for ddof in (0, 1):
                        for keep in (False, True):
                            if keep and ddof == 0 and ai % 2:
                                continue
                            a = data(shape, dt, si * 10 + ai)
                            w.case(f"{func}_{dt}_{si}_{ai}_{ddof}_{int(keep)}", func, [a],
                                   lambda a, axes=axes, ddof=ddof, keep=keep: f(
                                       a, axis=np_axes(axes), ddof=ddof, keepdims=keep),
                                   axes=axes, ddof=ddof, keepdims=keep)
        # float16: NumPy rounds its intermediates to float16, kiln computes them in float32
        # (README, dtypes): the test compares within a few float16 ulps.
        for si, shape in enumerate(shapes[:2]):
            for axes in (None, [0], [-1]):
                for ddof in (0, 1):
                    a = data(shape, "float16", 90 + si)
                    w.case(f"{func}_float16_{si}_{axes}_{ddof}".replace(" ", ""), func, [a],
                           lambda a, axes=axes, ddof=ddof: f(a, axis=np_axes(axes), ddof=ddof),
                           axes=axes, ddof=ddof)
        # edges: ddof >= n (inf and NaN), empty, 0-d, NaN and inf inputs, float ddof
        w.case(f"{func}_ddof_n", func, [np.array([1.0, 2.0, 4.0])],
               lambda a: f(a, ddof=3), ddof=3)
        w.case(f"{func}_ddof_big", func, [np.array([1.0, 2.0, 4.0])],
               lambda a: f(a, ddof=5), ddof=5)
        w.case(f"{func}_ddof_const", func, [np.array([2.0, 2.0])],
               lambda a: f(a, ddof=2), ddof=2)
        w.case(f"{func}_ddof_float", func, [np.array([1.0, 2.0, 4.0, 8.0])],
               lambda a: f(a, ddof=0.5), ddof=0.5)
        w.case(f"{func}_empty", func, [np.zeros((0,))], lambda a: f(a))
        w.case(f"{func}_empty_axis", func, [np.zeros((2, 0))],
               lambda a: f(a, axis=1), axes=[1])
        w.case(f"{func}_empty_other_axis", func, [np.zeros((2, 0))],
               lambda a: f(a, axis=0), axes=[0])
        w.case(f"{func}_0d", func, [np.array(3.5)], lambda a: f(a))
        w.case(f"{func}_nan", func, [np.array([1.0, np.nan, 3.0])], lambda a: f(a))
        w.case(f"{func}_inf", func, [np.array([1.0, np.inf, 3.0])], lambda a: f(a))
        w.case(f"{func}_bad_axis", func, [np.ones((2, 3))], lambda a: f(a, axis=2), axes=[2])

    # nan-functions
    nan_in = [
        ("f64", data((3, 5), "float64", 1, [(0, np.nan), (6, np.nan), (7, np.nan), (14, np.inf)])),
        ("f32", data((3, 5), "float32", 2, [(2, np.nan), (10, -np.inf)])),
        ("allnan_row", np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, -2.0]])),
        ("c128", data((2, 4), "complex128", 3, [(1, complex(np.nan, 0)), (6, complex(0, np.nan))])),
        ("i64", data((3, 4), "int64", 4)),
        ("bool", data((2, 5), "bool", 5)),
        ("f16", data((3, 5), "float16", 6, [(1, np.nan), (8, np.inf)])),
    ]
    for func in ("nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd"):
        f = getattr(np, func)
        for label, a in nan_in:
            if func in ("nanmax", "nanmin") and label == "c128":
                continue  # NumPy orders complex NaN by position; kiln does not promise that
            for axes in (None, [0], [-1]):
                for keep in (False, True):
                    if keep and axes is None:
                        continue
                    kw = {"axes": axes, "keepdims": keep}
                    if func in ("nanvar", "nanstd"):
                        for ddof in (0, 1, 2):
                            w.case(f"{func}_{label}_{axes}_{int(keep)}_{ddof}".replace(" ", ""),
                                   func, [a], lambda a, axes=axes, keep=keep, ddof=ddof: f(
                                       a, axis=np_axes(axes), keepdims=keep, ddof=ddof),
                                   ddof=ddof, **kw)
                    else:
                        w.case(f"{func}_{label}_{axes}_{int(keep)}".replace(" ", ""), func, [a],
                               lambda a, axes=axes, keep=keep: f(a, axis=np_axes(axes),
                                                                 keepdims=keep), **kw)
    for func in ("nanargmax", "nanargmin"):
        f = getattr(np, func)
        for label, a in nan_in:
            if label == "c128":
                continue
            for axis in (None, 0, -1):
                w.case(f"{func}_{label}_{axis}", func, [a],
                       lambda a, axis=axis: f(a, axis=axis), axis=axis)
        w.case(f"{func}_keepdims", func, [nan_in[0][1]],
               lambda a: f(a, axis=1, keepdims=True), axis=1, keepdims=True)
        w.case(f"{func}_empty", func, [np.zeros((0,))], lambda a: f(a))
    w.case("nanmean_empty", "nanmean", [np.zeros((0, 3))], lambda a: np.nanmean(a, axis=0),
           axes=[0])
    w.case("nanmax_empty", "nanmax", [np.zeros((0, 3))], lambda a: np.nanmax(a, axis=0),
           axes=[0])

    # count_nonzero and ptp
    for dt in dtypes:
        for si, shape in enumerate(shapes):
            a = data(shape, dt, 40 + si)
            if dt != "bool":
                a.reshape(-1)[::3] = 0
            for axes in (None, [0], [-1]):
                w.case(f"count_nonzero_{dt}_{si}_{axes}".replace(" ", ""), "count_nonzero", [a],
                       lambda a, axes=axes: np.count_nonzero(a, axis=np_axes(axes)), axes=axes)
                if dt.startswith("complex"):
                    continue
                w.case(f"ptp_{dt}_{si}_{axes}".replace(" ", ""), "ptp", [a],
                       lambda a, axes=axes: np.ptp(a, axis=np_axes(axes)), axes=axes)
    w.case("count_nonzero_keepdims", "count_nonzero", [data((3, 4), "float64", 9)],
           lambda a: np.count_nonzero(a, axis=1, keepdims=True), axes=[1], keepdims=True)
    w.case("count_nonzero_nan", "count_nonzero", [np.array([0.0, np.nan, -0.0, 2.0])],
           lambda a: np.count_nonzero(a))
    w.case("ptp_keepdims", "ptp", [data((3, 4), "float32", 9)],
           lambda a: np.ptp(a, axis=0, keepdims=True), axes=[0], keepdims=True)
    w.case("ptp_int32_wraps", "ptp", [np.array([-2**31, 2**31 - 1], dtype=np.int32)],
           lambda a: np.ptp(a))
    w.case("ptp_nan", "ptp", [np.array([1.0, np.nan, 3.0])], lambda a: np.ptp(a))

    # average
    for dt in ("int32", "float32", "float64", "complex128"):
        a = data((3, 4), dt, 60)
        w.case(f"average_{dt}", "average", [a], lambda a: np.average(a))
        w.case(f"average_{dt}_axis", "average", [a], lambda a: np.average(a, axis=1), axes=[1])
        for wdt in ("int64", "float32", "float64"):
            wt = np.abs(data((3, 4), wdt, 61)) + 1
            w.case(f"average_{dt}_w{wdt}", "average", [a, wt],
                   lambda a, wt: np.average(a, weights=wt))
            w.case(f"average_{dt}_w{wdt}_axis0", "average", [a, wt],
                   lambda a, wt: np.average(a, axis=0, weights=wt), axes=[0])
            w1 = np.abs(data((4,), wdt, 62)) + 1
            w.case(f"average_{dt}_w{wdt}_1d", "average", [a, w1],
                   lambda a, w1: np.average(a, axis=1, weights=w1), axes=[1])
            w.case(f"average_{dt}_w{wdt}_1d_neg", "average", [a, w1],
                   lambda a, w1: np.average(a, axis=-1, weights=w1), axes=[-1])
    a = data((2, 3, 4), "float64", 63)
    w3 = data((3,), "float64", 64) ** 2 + 0.5
    w.case("average_3d_middle", "average", [a, w3],
           lambda a, wt: np.average(a, axis=1, weights=wt), axes=[1])
    w.case("average_3d_middle_keepdims", "average", [a, w3],
           lambda a, wt: np.average(a, axis=1, weights=wt, keepdims=True), axes=[1],
           keepdims=True)
    w.case("average_returned", "average", [a, w3],
           lambda a, wt: np.average(a, axis=1, weights=wt, returned=True), axes=[1],
           returned=True)
    w.case("average_returned_full", "average", [a, np.abs(a) + 1],
           lambda a, wt: np.average(a, axis=2, weights=wt, returned=True), axes=[2],
           returned=True)
    w.case("average_returned_noweights", "average", [a],
           lambda a: np.average(a, axis=(0, 2), returned=True), axes=[0, 2], returned=True)
    w.case("average_bad_length", "average", [a, np.ones(5)],
           lambda a, wt: np.average(a, axis=1, weights=wt), axes=[1])
    w.case("average_no_axis", "average", [a, np.ones(3)],
           lambda a, wt: np.average(a, weights=wt))

    # cov / corrcoef
    for dt in ("int64", "float32", "float64", "complex128"):
        for shape in ((3, 6), (6,), (1, 5), (4, 2)):
            m = data(shape, dt, 70 + len(shape))
            for rowvar in (True, False):
                if len(shape) == 1 and not rowvar:
                    continue
                w.case(f"cov_{dt}_{shape}_{int(rowvar)}".replace(" ", ""), "cov", [m],
                       lambda m, rowvar=rowvar: np.cov(m, rowvar=rowvar), rowvar=rowvar)
                w.case(f"corrcoef_{dt}_{shape}_{int(rowvar)}".replace(" ", ""), "corrcoef", [m],
                       lambda m, rowvar=rowvar: np.corrcoef(m, rowvar=rowvar), rowvar=rowvar)
    m = data((3, 6), "float64", 75)
    w.case("cov_bias", "cov", [m], lambda m: np.cov(m, bias=True), bias=True)
    w.case("cov_ddof3", "cov", [m], lambda m: np.cov(m, ddof=3), ddof=3)
    w.case("cov_ddof_n", "cov", [m], lambda m: np.cov(m, ddof=6), ddof=6)
    w.case("cov_ddof_big", "cov", [m], lambda m: np.cov(m, ddof=9), ddof=9)
    w.case("cov_one_obs", "cov", [np.array([[1.0], [2.0]])], lambda m: np.cov(m))
    w.case("cov_3d", "cov", [np.ones((2, 2, 2))], lambda m: np.cov(m))
    w.case("cov_no_variables", "cov", [np.zeros((0, 3))], lambda m: np.cov(m))
    w.case("cov_no_observations", "cov", [np.zeros((2, 0))], lambda m: np.cov(m))
    w.case("cov_0d", "cov", [np.array(2.0)], lambda m: np.cov(m))
    w.case("cov_bool", "cov", [np.array([[True, False, True], [True, True, False]])],
           lambda m: np.cov(m))
    w.case("corrcoef_constant_row", "corrcoef", [np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])],
           lambda m: np.corrcoef(m))

    # histogram
    hist_in = [
        ("f64", data((50,), "float64", 80)),
        ("f32", data((8, 5), "float32", 81)),
        ("i64", data((40,), "int64", 82)),
        ("edges", np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 2.5, 4.999])),
        ("const", np.array([3.0, 3.0, 3.0])),
        ("empty", np.zeros((0,))),
        ("bool", np.array([True, False, True, True])),
        ("f16", data((30,), "float16", 83)),
    ]
    for label, a in hist_in:
        for bins in (1, 5, 10):
            w.case(f"histogram_{label}_{bins}", "histogram", [a],
                   lambda a, bins=bins: np.histogram(a, bins=bins), bins=bins)
        w.case(f"histogram_{label}_range", "histogram", [a],
               lambda a: np.histogram(a, bins=4, range=(-1.0, 3.0)), bins=4, range=(-1.0, 3.0))
    a = np.array([0.5, np.nan, 1.5, np.inf, -np.inf, 2.0, 2.5])
    w.case("histogram_nan_range", "histogram", [a],
           lambda a: np.histogram(a, bins=3, range=(0.0, 3.0)), bins=3, range=(0.0, 3.0))
    w.case("histogram_nan_norange", "histogram", [a], lambda a: np.histogram(a, bins=3), bins=3)
    w.case("histogram_bad_range", "histogram", [hist_in[0][1]],
           lambda a: np.histogram(a, bins=3, range=(2.0, 1.0)), bins=3, range=(2.0, 1.0))
    w.case("histogram_zero_bins", "histogram", [hist_in[0][1]],
           lambda a: np.histogram(a, bins=0), bins=0)
    wts = np.abs(data((50,), "float64", 83))
    w.case("histogram_weights", "histogram", [hist_in[0][1], wts],
           lambda a, wt: np.histogram(a, bins=6, weights=wt), bins=6)
    w.case("histogram_density", "histogram", [hist_in[0][1]],
           lambda a: np.histogram(a, bins=6, density=True), bins=6, density=True)
    # Many values into few bins, so that sums of weights depend on the order they are added in.
    many = data((3000,), "float64", 84)
    w.case("histogram_many_weights", "histogram", [many, data((3000,), "float64", 85)],
           lambda a, wt: np.histogram(a, bins=7, weights=wt), bins=7)
    w.case("histogram_f32_weights_2d", "histogram", [hist_in[1][1], data((8, 5), "float32", 86)],
           lambda a, wt: np.histogram(a, bins=3, weights=wt), bins=3)
    w.case("histogram_complex_weights", "histogram",
           [hist_in[0][1], data((50,), "complex128", 88)],
           lambda a, wt: np.histogram(a, bins=4, weights=wt), bins=4)
    w.case("histogram_bad_weights", "histogram", [hist_in[0][1], np.ones(3)],
           lambda a, wt: np.histogram(a, bins=6, weights=wt), bins=6)

    # bincount
    x = np.array([0, 1, 1, 3, 2, 1, 7], dtype=np.int64)
    w.case("bincount", "bincount", [x], lambda x: np.bincount(x))
    w.case("bincount_int32", "bincount", [x.astype(np.int32)], lambda x: np.bincount(x))
    w.case("bincount_bool", "bincount", [np.array([True, False, True])], lambda x: np.bincount(x))
    w.case("bincount_minlength", "bincount", [x], lambda x: np.bincount(x, minlength=10),
           minlength=10)
    w.case("bincount_minlength_small", "bincount", [x], lambda x: np.bincount(x, minlength=3),
           minlength=3)
    wts = np.array([0.5, 1.0, -2.0, 3.0, 0.25, 1.0, 2.0])
    w.case("bincount_weights", "bincount", [x, wts], lambda x, wt: np.bincount(x, weights=wt))
    w.case("bincount_int_weights", "bincount", [x, np.arange(7)],
           lambda x, wt: np.bincount(x, weights=wt))
    rng = np.random.default_rng(87)
    many = rng.integers(0, 300, 5000)
    w.case("bincount_many", "bincount", [many], lambda x: np.bincount(x))
    w.case("bincount_many_weights", "bincount", [many, rng.standard_normal(5000)],
           lambda x, wt: np.bincount(x, weights=wt))
    w.case("bincount_complex_weights", "bincount", [x, wts.astype(np.complex128)],
           lambda x, wt: np.bincount(x, weights=wt))
    w.case("bincount_empty", "bincount", [np.zeros((0,), dtype=np.int64)],
           lambda x: np.bincount(x))
    w.case("bincount_empty_minlength", "bincount", [np.zeros((0,), dtype=np.int64)],
           lambda x: np.bincount(x, minlength=4), minlength=4)
    w.case("bincount_negative", "bincount", [np.array([1, -1, 2])], lambda x: np.bincount(x))
    w.case("bincount_float", "bincount", [np.array([1.0, 2.0])], lambda x: np.bincount(x))
    w.case("bincount_2d", "bincount", [np.ones((2, 2), dtype=np.int64)], lambda x: np.bincount(x))
    w.case("bincount_bad_weights", "bincount", [x, np.ones(3)],
           lambda x, wt: np.bincount(x, weights=wt))

    # isclose
    a = np.array([1.0, 1.0 + 1e-6, 1.1, np.nan, np.inf, -np.inf, np.inf, 0.0, 1e-9, np.nan])
    b = np.array([1.0, 1.0, 1.0, np.nan, np.inf, np.inf, 1.0, 1e-9, 0.0, 1.0])
    for equal_nan in (False, True):
        w.case(f"isclose_{int(equal_nan)}", "isclose", [a, b],
               lambda a, b, e=equal_nan: np.isclose(a, b, equal_nan=e), equal_nan=equal_nan)
    w.case("isclose_tol", "isclose", [a, b],
           lambda a, b: np.isclose(a, b, rtol=0.2, atol=0.0), rtol=0.2, atol=0.0)
    w.case("isclose_broadcast", "isclose", [data((3, 1), "float32", 90), data((4,), "float32", 90)],
           lambda a, b: np.isclose(a, b, atol=1.0), atol=1.0)
    w.case("isclose_int", "isclose", [np.array([1, 2, 3]), np.array([1, 3, 3])],
           lambda a, b: np.isclose(a, b))
    w.case("isclose_bool", "isclose", [np.array([True, False]), np.array([True, True])],
           lambda a, b: np.isclose(a, b))
    w.case("isclose_complex", "isclose", [np.array([1 + 1j, 1 + 2j]), np.array([1 + 1j, 1 + 1j])],
           lambda a, b: np.isclose(a, b))
    w.case("isclose_0d", "isclose", [np.array(1.0), np.array(1.0 + 1e-9)],
           lambda a, b: np.isclose(a, b))

    # numpy.fft helpers
    for n in (1, 2, 5, 8):
        for d in (1.0, 0.25):
            w.case(f"fftfreq_{n}_{d}", "fftfreq", [], lambda n=n, d=d: np.fft.fftfreq(n, d),
                   n=n, d=d)
            w.case(f"rfftfreq_{n}_{d}", "rfftfreq", [], lambda n=n, d=d: np.fft.rfftfreq(n, d),
                   n=n, d=d)
    for label, a in (("1d_even", np.arange(8.0)), ("1d_odd", np.arange(7)),
                     ("2d", np.arange(15.0).reshape(3, 5)),
                     ("3d", (np.arange(24) + 1j * np.arange(24)).reshape(2, 3, 4)),
                     ("empty", np.zeros((0, 3)))):
        for func in ("fftshift", "ifftshift"):
            f = getattr(np.fft, func)
            w.case(f"{func}_{label}", func, [a], lambda a, f=f: f(a))
            if a.ndim >= 2:
                w.case(f"{func}_{label}_axis", func, [a], lambda a, f=f: f(a, axes=(-1,)),
                       axes=[-1])
                w.case(f"{func}_{label}_axis0", func, [a], lambda a, f=f: f(a, axes=(0,)),
                       axes=[0])

    with open(OUT, "w") as f:
        f.write("\n".join(w.lines) + "\n")


if __name__ == "__main__":
    main()
