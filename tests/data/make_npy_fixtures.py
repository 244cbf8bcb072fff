#!/usr/bin/python3
"""Writes the .npy fixtures of tests/test_npy.cpp into tests/data/npy/: files NumPy wrote, for
kiln::load_npy to read.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_npy_fixtures.py

npy/cases.txt, one line per readable file:
    NAME DTYPE FORTRAN VERSION NDIM D0 D1 .. VALUES..
DTYPE is NumPy's name, FORTRAN is 0 or 1, VERSION the format major version. VALUES are the
elements in C order (the logical order, whatever the file's layout): integers and bools as
integers, floats as Python's repr of the value (exact: float32 values widen to float64 without
rounding), complex numbers as two such floats. nan and inf are written so, which strtod reads.

npy/errors.txt, one line per file kiln must refuse:
    NAME EXCEPTION WORDS
EXCEPTION is the kiln exception class; WORDS is a phrase the message must contain.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")


def values_text(a):
    flat = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.kind == "c":
        return [repr(float(p)) for z in flat for p in (z.real, z.imag)]
    if a.dtype.kind == "f":
        return [repr(float(x)) for x in flat]
    return [str(int(x)) for x in flat]


def readable_cases():
    rng = np.random.default_rng(20240611)
    special = [0.0, -0.0, 1.5, -2.25, 0.1, 1e-30, 3e38, np.inf, -np.inf, np.nan]
    cplx = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    return [
        ("bool_1d", np.array([True, False, True, True, False]), {}),
        ("int32_2d", np.array([[-2**31, -1, 0], [1, 7, 2**31 - 1]], dtype=np.int32), {}),
        ("int64_1d", np.array([-2**63, -5, 0, 3, 2**62 + 1, 2**63 - 1], dtype=np.int64), {}),
        ("float32_2d", np.array(special, dtype=np.float32).reshape(2, 5), {}),
        ("float64_3d", rng.normal(size=(2, 3, 4)), {}),
        ("complex64_1d", np.array([1 + 2j, -0.5j, np.inf - 1j, 3], dtype=np.complex64), {}),
        ("complex128_2d", cplx, {}),
        ("scalar_f64", np.array(2.5), {}),
        ("scalar_i64", np.array(-7, dtype=np.int64), {}),
        ("scalar_bool", np.array(True), {}),
        ("empty_f32", np.zeros((0, 3), dtype=np.float32), {}),
        ("empty_3d_c128", np.zeros((2, 0, 4), dtype=np.complex128), {}),
        ("empty_1d_bool", np.zeros(0, dtype=bool), {}),
        ("fortran_f64", np.asfortranarray(np.arange(12.0).reshape(3, 4)), {}),
        ("fortran_i32_3d", np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)), {}),
        ("fortran_c64", np.asfortranarray((np.arange(6) - 2j * np.arange(6)).reshape(2, 3)
                                          .astype(np.complex64)), {}),
        ("fortran_bool", np.asfortranarray(np.arange(6).reshape(3, 2) % 3 == 0), {}),
        ("v2_i64", np.arange(10, dtype=np.int64).reshape(2, 5), {"version": (2, 0)}),
        ("v3_f32", np.linspace(-1, 1, 7, dtype=np.float32), {"version": (3, 0)}),
        ("v2_fortran_f64", np.asfortranarray(rng.normal(size=(3, 2))), {"version": (2, 0)}),
        # The smaller and unsigned integers: a user's 8-bit RGB image, and each type's ends.
        ("uint8_image", rng.integers(0, 256, (4, 5, 3)).astype(np.uint8), {}),
        ("int8_1d", np.array([-128, -1, 0, 1, 127], dtype=np.int8), {}),
        ("int16_2d", np.array([[-32768, -1, 0], [1, 300, 32767]], dtype=np.int16), {}),
        ("uint16_1d", np.array([0, 1, 255, 256, 65535], dtype=np.uint16), {}),
        ("uint32_1d", np.array([0, 1, 2**31, 2**32 - 1], dtype=np.uint32), {}),
        ("uint64_1d", np.array([0, 1, 2**53 + 1, 2**63, 2**64 - 1], dtype=np.uint64), {}),
        ("fortran_u16", np.asfortranarray(np.arange(6, dtype=np.uint16).reshape(2, 3)), {}),
        ("scalar_u8", np.array(200, dtype=np.uint8), {}),
        ("empty_i8", np.zeros((0, 2), dtype=np.int8), {}),
        # float16 ('<f2'): its edges (largest finite, smallest subnormal, -0, NaN, inf).
        ("float16_2d", np.array([0.1, -0.0, 65504.0, 2.0**-24, 1e-5, np.inf, -np.inf, np.nan],
                                dtype=np.float16).reshape(2, 4), {}),
    ]


def write(name, a, **kw):
    with open(os.path.join(OUT, name + ".npy"), "wb") as f:
        np.lib.format.write_array(f, a, **kw)


def write_readable(lines):
    for name, a, kw in readable_cases():
        write(name, a, **kw)
        fortran = int(a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous)
        version = kw.get("version", (1, 0))[0]
        fields = [name, a.dtype.name, str(fortran), str(version), str(a.ndim)]
        fields += [str(d) for d in a.shape] + values_text(a)
        lines.append(" ".join(fields))


def write_refused(lines):
    write("big_endian_f8", np.arange(4, dtype=">f8"))
    lines.append("big_endian_f8 DTypeError big-endian")
    write("object_array", np.array([1, "two", None], dtype=object), allow_pickle=True)
    lines.append("object_array DTypeError object array")
    # Two raw bytes per element (ml_dtypes' bfloat16 arrays reach .npy as such voids).
    write("void2", np.zeros(4, dtype="V2"))
    lines.append("void2 DTypeError is not supported")
    write("big_endian_u2", np.arange(4, dtype=">u2"))
    lines.append("big_endian_u2 DTypeError big-endian")
    write("structured", np.zeros(2, dtype=[("x", "<i4"), ("y", "<f8")]))
    lines.append("structured DTypeError structured")
    write("rank9", np.zeros((1,) * 9))
    lines.append("rank9 ShapeError over kiln's limit")


def main():
    os.makedirs(OUT, exist_ok=True)
    readable, refused = [], []
    write_readable(readable)
    write_refused(refused)
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(readable) + "\n")
    with open(os.path.join(OUT, "errors.txt"), "w") as f:
        f.write("\n".join(refused) + "\n")


if __name__ == "__main__":
    main()
