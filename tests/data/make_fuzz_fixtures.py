#!/usr/bin/python3
"""Writes tests/data/fuzz_dtypes.txt: the result dtypes the fuzzer (tests/fuzz/oracle.cpp)
needs that tests/data/promotion.txt does not hold. The fuzzer reads both files and
tests/data/reductions_dtypes.txt; none of them is computed by kiln.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_fuzz_fixtures.py

NumPy 1.24 is switched to NumPy 2's promotion of Python scalars (NEP 50, "weak" scalars) with
np._set_promotion_state("weak"), as make_elementwise_fixtures.py does. Lines, dtypes as NumPy
names ("error" where NumPy raises TypeError):
    weakpair A KIND R     np.result_type(A array, Python scalar of KIND) under NEP 50
    binop OP A B R        dtype of OP(A array, B array), OP in ** minimum maximum and the
                          binary Math rows of src/graph/op_table.hpp (arctan2, hypot, ...)
    weak OP A KIND R      dtype of OP(A array, Python scalar of KIND) (and of OP(scalar, array))
    unary OP A R          OP in floor ceil, gelu gelu_tanh (make_elementwise_fixtures.py's
                          GELU: floats only) and the unary Math rows of op_table.hpp that
                          promotion.txt lacks (log1p, expm1, ...)
    reduce OP A R         OP in argmax argmin any all, every dtype (complex64 included)
    fft FN A R            FN one of numpy.fft's ten functions

where() and clip() with several operands: NumPy 1.24 does not apply NEP 50 to them jointly
(where ignores weak scalars), so the fuzzer composes them from "pair" (the arrays) and
"weakpair" (then each Python scalar in turn), which is NEP 50's rule.

Where kiln documents a result NumPy 1.24 does not give, the line holds the documented rule
(each marked KILN below):
  * floor and ceil of integer and bool arrays keep the dtype (NumPy >= 2.3).
  * A Math row whose complex column is 0 refuses complex operands (DTypeError), whether or
    not NumPy takes them (NumPy's log1p does).
  * FFTs keep single precision (NumPy >= 2.0): float16, bfloat16, float32 and complex64
    give complex64 (irfft*: float32), every other dtype complex128 (irfft*: float64); rfft*
    of complex input is an error (NumPy 1.24 drops the imaginary part, kiln's fft.hpp
    refuses it).
bfloat16, which NumPy lacks, takes make_elementwise_fixtures.py's rule (typed_dtype: NumPy's
float16 answer on the ml_dtypes promotion); its sum, prod, max, min and mean, which
reductions_dtypes.txt (NumPy's) cannot hold, are bfloat16, as kiln's half rule says.
"""
import os

import numpy as np

from make_elementwise_fixtures import (  # one rule for "error" and dtype names; the table
    BINARY_MATH, GELU, PROMO_UNARY, UNARY_MATH, typed_dtype)

np._set_promotion_state("weak")

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128", "int8",
          "int16", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16"]
SCALARS = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}
BINOPS = {"**": np.power, "minimum": np.minimum, "maximum": np.maximum}
BINOPS.update({name: getattr(np, name) for name, _ in BINARY_MATH})
UNARY = {"floor": np.floor, "ceil": np.ceil}
UNARY.update({name: getattr(np, name) for name, _ in UNARY_MATH if name not in PROMO_UNARY})
UNARY.update(GELU)
REAL_ONLY = {name for name, cx in UNARY_MATH + BINARY_MATH if not cx}
REDUCE = {"argmax": np.argmax, "argmin": np.argmin, "any": np.any, "all": np.all}
FFTS = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn"]


def kiln_binop(op, a, b, numpy_result):
    if op in REAL_ONLY and "complex" in (a, b):  # KILN: complex raises
        return "error"
    return numpy_result


def kiln_unary(op, a, numpy_result):
    if op in REAL_ONLY and a.startswith("complex"):  # KILN: complex raises
        return "error"
    if op in ("floor", "ceil") and (a == "bool" or "int" in a):  # KILN: NumPy >= 2.3
        return a
    return numpy_result


def fft_dtype(fn, a):
    # KILN (NumPy >= 2.0): single precision in, single precision out.
    if fn.startswith("rfft") and a.startswith("complex"):
        return "error"
    single = a in ("float32", "complex64", "float16", "bfloat16")
    if fn.startswith("irfft"):
        return "float32" if single else "float64"
    return "complex64" if single else "complex128"


def main():
    arrays = {t: np.ones(4, t) for t in DTYPES if t != "bfloat16"}

    def dtype_of(fn, *args):
        return typed_dtype(fn, arrays, *args)

    def weakpair(a, s):
        if a == "bfloat16":  # a Python scalar never promotes a float array
            r = np.result_type(arrays["float16"], s).name
            return "bfloat16" if r == "float16" else r
        return np.result_type(arrays[a], s).name
    lines = ["# Written by tests/data/make_fuzz_fixtures.py with NumPy %s; do not edit."
             % np.__version__]
    for a in DTYPES:
        for kind, s in SCALARS.items():
            lines.append("weakpair %s %s %s" % (a, kind, weakpair(a, s)))
    for op, fn in BINOPS.items():
        for a in DTYPES:
            for b in DTYPES:
                r = kiln_binop(op, a, b, dtype_of(fn, a, b))
                lines.append("binop %s %s %s %s" % (op, a, b, r))
    for op, fn in BINOPS.items():
        for a in DTYPES:
            for kind, s in SCALARS.items():
                left, right = dtype_of(fn, a, s), dtype_of(fn, s, a)
                assert left == right, (op, a, kind)
                lines.append("weak %s %s %s %s" % (op, a, kind, kiln_binop(op, a, kind, left)))
    for op, fn in UNARY.items():
        for a in DTYPES:
            lines.append("unary %s %s %s" % (op, a, kiln_unary(op, a, dtype_of(fn, a))))
    for op, fn in REDUCE.items():
        for a in DTYPES:
            lines.append("reduce %s %s %s" % (op, a, dtype_of(fn, a)))
    for op in ["sum", "prod", "max", "min", "mean"]:
        lines.append("reduce %s bfloat16 bfloat16" % op)  # KILN: the half rule
    for fn in FFTS:
        for a in DTYPES:
            lines.append("fft %s %s %s" % (fn, a, fft_dtype(fn, a)))
    with open(os.path.join(HERE, "fuzz_dtypes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
