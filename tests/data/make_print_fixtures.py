#!/usr/bin/python3
"""Writes the fixtures of tests/test_print.cpp: arrays and NumPy's repr of each.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_print_fixtures.py

For each case NAME it writes into tests/data/print/:
    NAME.bin   the elements, row-major, little-endian (bool as one byte 0/1)
    NAME.txt   repr(array), exactly, with no trailing newline
and one line per case in tests/data/print/cases.txt:
    NAME DTYPE STORAGE NDIM D0 D1 ...
STORAGE is "full" when NAME.bin holds every element. It is "edges" for large summarised
arrays: NAME.bin then holds only the printed elements (NumPy's leading/trailing block: the
first and last 3 items of every axis longer than 6), with that block's shape, and the test
places them into an array of the full shape whose other elements are a filler value that
would change the output if it were printed or measured.
"""
import os
import shutil

import numpy as np

EDGE = 3
THRESHOLD = 1000
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "print")


def edges(a):
    """The elements NumPy prints of a summarised array, as a dense block."""
    for axis, n in enumerate(a.shape):
        if n > 2 * EDGE:
            keep = np.r_[0:EDGE, n - EDGE:n]
            a = np.take(a, keep, axis=axis)
    return a


def cases():
    rng = np.random.default_rng(20240601)
    f32, f64, c64, c128 = np.float32, np.float64, np.complex64, np.complex128
    i32, i64 = np.int32, np.int64
    nan, inf = np.nan, np.inf

    # integers
    yield "int64_1d", np.array([1, 2, 3], i64)
    yield "int64_neg", np.array([-5, 10, -300, 7], i64)
    yield "int64_2d", np.arange(6, dtype=i64).reshape(2, 3)
    yield "int64_3d", np.arange(24, dtype=i64).reshape(2, 3, 4) - 12
    yield "int64_4d", np.arange(24, dtype=i64).reshape(2, 2, 2, 3) * 7
    yield "int64_0d", np.array(5, i64)
    yield "int64_0d_neg", np.array(-42, i64)
    yield "int64_extremes", np.array([np.iinfo(i64).min, 0, np.iinfo(i64).max], i64)
    yield "int64_wrap", np.arange(-20, 40, dtype=i64) * 1001
    yield "int32_1d", np.array([1, 2, 3], i32)
    yield "int32_2d", np.array([[1, -2], [300, 4]], i32)
    yield "int32_0d", np.array(7, i32)
    yield "int32_extremes", np.array([np.iinfo(i32).min, np.iinfo(i32).max], i32)
    yield "int32_wrap", np.arange(100, dtype=i32)
    yield "int32_dtype_newline", np.arange(24, dtype=i32) * 100
    yield "int32_3d", rng.integers(-1000, 1000, (3, 2, 5)).astype(i32)
    # The smaller and unsigned integers (no rng: the cases after these keep their values).
    for t in (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(t)
        name = np.dtype(t).name
        yield name + "_extremes", np.array([info.min, 0, 1, info.max], t)
        yield name + "_0d", np.array(info.max, t)
        yield name + "_2d", (np.arange(12).reshape(3, 4) * 37 % 128).astype(t)
    # Summarised; below 100, so that a filler of 255 (tests/test_print.cpp) would show.
    yield "uint8_image", (np.arange(2000 * 3) * 7 % 100).astype(np.uint8).reshape(40, 50, 3)
    yield "uint64_big", np.array([2**63, 2**64 - 1, 5], np.uint64)
    # float16: NumPy's shortest float16 digits (0.1 prints 0.1), its edges, scientific columns.
    f16 = np.float16
    yield "float16_1d", np.array([0.1, 0.2, 0.3, 1 / 3, 2.5, -7.0], f16)
    yield "float16_edges", np.array([65504.0, 2.0**-24, 1e-5, -0.0, np.inf, -np.inf, np.nan], f16)
    yield "float16_0d", np.array(0.1, f16)
    yield "float16_2d", (np.arange(12).reshape(3, 4) / 7).astype(f16)

    # bool
    yield "bool_1d", np.array([True, False, True])
    yield "bool_all_true", np.array([True, True])
    yield "bool_2d", rng.integers(0, 2, (3, 4)).astype(bool)
    yield "bool_0d_true", np.array(True)
    yield "bool_0d_false", np.array(False)
    yield "bool_wrap", rng.integers(0, 2, 30).astype(bool)

    # float64
    yield "f64_simple", np.array([1.0, 0.5, 2.0])
    yield "f64_tenths", np.array([0.1, 0.2, 0.3])
    yield "f64_thirds", np.arange(10) / 3
    yield "f64_integers", np.array([1.0, 2.0, 3.0])
    yield "f64_neg_zero", np.array([-0.0, 1.0, 0.0])
    yield "f64_zeros", np.zeros(4)
    yield "f64_random_2d", rng.standard_normal((4, 5))
    yield "f64_random_3d", rng.standard_normal((2, 3, 4)) * 100
    yield "f64_random_4d", rng.uniform(-1, 1, (2, 2, 2, 2))
    yield "f64_small", np.array([1e-5, 1.0])
    yield "f64_min_bound", np.array([1e-4, 0.05])
    yield "f64_large", np.array([1e8, 1.0])
    yield "f64_below_large", np.array([99999999.5, 12345678.0])
    yield "f64_ratio_1000", np.array([1.0, 1000.0])
    yield "f64_ratio_1001", np.array([1.0, 1001.0])
    yield "f64_exp_mixed", np.array([1e10, 1.5e-5, -3.25, 0.0])
    yield "f64_exp3", np.array([1e100, 1.0, -1e-100])
    yield "f64_extremes", np.array([5e-324, 1.7976931348623157e308, 2.2250738585072014e-308])
    yield "f64_nan_inf", np.array([nan, inf, -inf, 1.5])
    yield "f64_nan_only", np.array([nan, nan])
    yield "f64_inf_only", np.array([inf, inf])
    yield "f64_neginf_only", np.array([-inf, nan])
    yield "f64_nan_exp", np.array([nan, 1e20, -inf])
    yield "f64_rounding", np.array([0.001953125, 1.0, 0.123456789012, 0.999999999])
    yield "f64_round_up", np.array([9.9999999996, 0.5])
    yield "f64_exp_round", np.array([9.9999999996e20, 1.0])
    yield "f64_0d", np.array(1.5)
    yield "f64_0d_int", np.array(3.0)
    yield "f64_0d_nan", np.array(nan)
    yield "f64_0d_neginf", np.array(-inf)
    yield "f64_0d_neg_zero", np.array(-0.0)
    yield "f64_0d_exp", np.array(1.234e-7)
    yield "f64_wrap", np.linspace(0, 1, 40)
    yield "f64_wrap_2d", rng.standard_normal((3, 20))
    yield "f64_pi_digits", np.array([np.pi, np.e, 1 / 7])

    # float32
    yield "f32_simple", np.array([1.0, 0.5, 2.0], f32)
    yield "f32_tenths", np.array([0.1, 0.2, 0.3], f32)
    yield "f32_thirds", (np.arange(10) / 3).astype(f32)
    yield "f32_2x2", np.array([[1.5, -2.25], [3.0, 4.125]], f32)
    yield "f32_random", rng.standard_normal((3, 4)).astype(f32)
    yield "f32_exp", np.array([1e-6, 3.5e12, -2.0], f32)
    yield "f32_min_bound", np.array([1e-4, 1.0], f32)
    yield "f32_nan_inf", np.array([nan, -inf, 0.25], f32)
    yield "f32_0d", np.array(1.5, f32)
    yield "f32_0d_third", np.array(1 / 3, f32)
    yield "f32_wrap", rng.uniform(0, 10, 30).astype(f32)
    yield "f32_dtype_newline", np.arange(1, 26, dtype=f32) / 4
    yield "f32_max", np.array([np.finfo(f32).max, np.finfo(f32).tiny], f32)

    # complex
    yield "c128_simple", np.array([1 + 2j, 3 - 4j])
    yield "c128_mixed", np.array([0.5 + 0j, -1.25 + 1e-3j, 2 - 0.125j])
    yield "c128_exp", np.array([1e10 + 1j, 1e-6 - 2j])
    yield "c128_nan_inf", np.array([complex(nan, inf), complex(-inf, 1), 1 + 1j])
    yield "c128_neg_zero", np.array([complex(-0.0, -0.0), complex(1, 0)])
    yield "c128_2d", (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)))
    yield "c128_0d", np.array(1 + 2j)
    yield "c128_wrap", np.exp(1j * np.linspace(0, np.pi, 12))
    yield "c64_simple", np.array([1 + 2j, 3 - 4j], c64)
    yield "c64_random", (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(c64)
    yield "c64_0d", np.array(0.1 - 0.2j, c64)

    # empty
    yield "empty_f64", np.zeros(0)
    yield "empty_f32", np.zeros(0, f32)
    yield "empty_i64", np.zeros(0, i64)
    yield "empty_i64_0x3", np.zeros((0, 3), i64)
    yield "empty_f64_2x0", np.zeros((2, 0))
    yield "empty_bool", np.zeros(0, bool)
    yield "empty_c64_3d", np.zeros((1, 0, 2), c64)

    # summarised (more than 1000 elements)
    yield "sum_randint_2000x2000", rng.integers(0, 255, (2000, 2000))
    yield "sum_i64_1d", np.arange(1001, dtype=i64)
    yield "sum_i32_40x40", rng.integers(-99, 99, (40, 40)).astype(i32)
    yield "sum_f64_1d", rng.standard_normal(5000)
    yield "sum_f64_narrow_rows", rng.standard_normal((500, 3))
    yield "sum_f32_3d", rng.uniform(0, 1, (10, 10, 11)).astype(f32)
    yield "sum_f64_4d", rng.standard_normal((7, 2, 3, 40)) * 1e5
    yield "sum_bool", rng.integers(0, 2, (50, 50)).astype(bool)
    yield "sum_c128", (rng.standard_normal((30, 40)) + 1j * rng.standard_normal((30, 40)))
    yield "sum_c64_1d", (rng.standard_normal(2000) + 1j).astype(c64)
    yield "sum_long_rows", rng.standard_normal((2, 700)) * 1e3
    yield "sum_one_long_axis", rng.standard_normal((1001, 1)).astype(f32)


def main():
    np.set_printoptions()  # the defaults
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    index = []
    for name, a in cases():
        storage = "full"
        stored = a
        if a.size > THRESHOLD and a.nbytes > 8192:
            storage = "edges"
            stored = edges(a)
        stored = np.ascontiguousarray(stored)
        stored.astype(stored.dtype.newbyteorder("<")).tofile(os.path.join(OUT, name + ".bin"))
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write(repr(a))
        shape = " ".join(str(d) for d in a.shape)
        index.append(f"{name} {a.dtype.name} {storage} {a.ndim} {shape}".rstrip())
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(index) + "\n")


if __name__ == "__main__":
    main()
