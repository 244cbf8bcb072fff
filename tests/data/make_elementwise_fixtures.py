#!/usr/bin/python3
"""Writes the fixtures of tests/test_promotion.cpp and tests/test_elementwise.cpp from NumPy.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_elementwise_fixtures.py

NumPy 1.24 is switched to NumPy 2's promotion of Python scalars (NEP 50, "weak" scalars) with
np._set_promotion_state("weak"), the rule kiln follows.

Both files are plain text, one record a line, tokens separated by single spaces. Numbers are
written so that they read back exactly: integers in decimal, float64 with repr() (shortest
round trip), float32 with NumPy's shortest float32 repr, bool as 0/1, a complex number as two
numbers (real, imaginary). NaN and infinities are "nan", "inf", "-inf".

tests/data/promotion.txt, dtypes as NumPy names ("error" where NumPy raises TypeError):
    pair A B R              np.result_type(A, B) (arrays of dtypes A and B)
    binop OP A B R          dtype of (A array) OP (B array), OP in + - * / & | ^ == != < <= > >=
    weak OP A KIND R        dtype of (A array) OP (Python scalar of KIND), KIND in bool int
                            float complex; the same holds for (scalar) OP (array)
    unary OP A R            dtype of OP(A array), OP in sqrt exp log sin cos tan tanh abs neg
                            invert real imag conj
    reduce OP A R           dtype of OP(A array), OP in sum prod mean max min

tests/data/elementwise/cases.txt:
    input NAME DTYPE SHAPE VALUES...
    case NAME OP SIGNED_ZERO NARGS ARGS... RESULT_DTYPE SHAPE VALUES...
    error NAME OP NARGS ARGS...
SHAPE is the dimensions joined by "x" ("4", "3x1"), or "0d" for rank 0. An ARG is "@NAME" (an
input array) or a Python scalar: "b:0", "i:-5", "f:2.5", "c:1.5:-2". OP is a NumPy function
name or one of the compound expressions of EXPRESSION_FUNCTIONS below (the test builds the
same expression with kiln).
SIGNED_ZERO is 1 when the sign of zero results is defined by IEEE and NumPy (so kiln must
match it), 0 otherwise (NumPy's minimum/maximum/clip of -0.0 and 0.0 depend on its SIMD path).
"error" lines are the operations NumPy rejects with TypeError; kiln must throw DTypeError.

float16 results (every float function of bool, int8 and uint8) are NumPy's float16 values,
written as NumPy's shortest float16 repr. The promotion table also covers float16 (NumPy) and
bfloat16, which NumPy lacks: its rows follow ml_dtypes' registered safe casts (bfloat16 from
bool, int8 and uint8; to float32, float64 and the complex types; none with float16), and a
pair's result is the smallest type both cast to safely (write_promotion's bf16_promote).
Where kiln documents a different result dtype than NumPy 1.24, the case holds kiln's dtype and
the values NumPy computes in it (each such place is marked KILN below):
  * floor and ceil of integer and bool arrays keep the dtype (NumPy >= 2.3; 1.24 returns
    floating point): the values are the input, which 1.24's floor/ceil equal.
  * conj of bool: bool (NumPy: int8); same values.
  * trunc of integer and bool arrays keeps the dtype, as floor and ceil (NumPy >= 2.3).
  * reciprocal of bool raises (NumPy: int8, whose 1 // 0 is a conversion artefact).
  * round of complex arrays raises (NumPy rounds each part).
  * arcsin ... arctanh, log2, log10, exp2, sinh, cosh, rint of complex raise, as log1p.
  * gelu and gelu_tanh (kiln::gelu, torch.nn.functional.gelu's approximate='none' and 'tanh'),
    which NumPy lacks: see GELU below for the reference; any dtype but a float raises, as in
    PyTorch (an "error" case).
Three NumPy 1.24 behaviours that NumPy 2 changed are computed the NumPy 2 way:
  * sign of complex numbers: NumPy 2's z / |z| (1.24: the sign of the first nonzero part).
  * where() with Python scalars: NumPy 2 promotes them as weak scalars (1.24 ignores that).
  * clip() with a scalar NaN bound: NumPy >= 1.25 propagates the NaN (1.24 ignores the bound).
A Python integer that the array's integer dtype cannot hold (uint8 + 300, uint8 + -1) is
NumPy 2's OverflowError (also under 1.24's "weak" promotion state): an "error" case, where kiln
throws DTypeError. Compared with such an integer (uint8 < -1), NumPy 2 answers (every element
lies on one side of it), where 1.24's weak state raises: computed the NumPy 2 way.
Float to unsigned 32-bit integer conversion of NaN and of values below -2^63 gives 0 or 2^31 in
NumPy depending on the element's position (vectorised loop or not); such values are not cast.
NumPy rejects negative integer powers of integer arrays (ValueError), by value; those cases
are left out (kiln checks a negative scalar exponent; tests/test_elementwise.cpp tests it).
"""
import math
import os
import re

import numpy as np

np._set_promotion_state("weak")

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "elementwise")

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128", "int8",
          "int16", "uint8", "uint16", "uint32", "uint64", "float16"]
SMALL_INTS = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
NP = {name: np.dtype(name) for name in DTYPES}
nan, inf = np.nan, np.inf
I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)
I8, I16 = np.iinfo(np.int8), np.iinfo(np.int16)
U8, U16, U32, U64 = (np.iinfo(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


# ---- formatting -------------------------------------------------------------------------
def fmt_real(v, dt):
    if dt == np.float32:
        return str(np.float32(v))
    if dt == np.float16:
        return str(np.float16(v))
    return repr(float(v))


def fmt_values(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        return [str(int(v)) for v in flat]
    if a.dtype.kind in "iu":
        return [str(int(v)) for v in flat]
    if a.dtype.kind == "f":
        return [fmt_real(v, a.dtype) for v in flat]
    part = np.float32 if a.dtype == np.complex64 else np.float64
    out = []
    for v in flat:
        out += [fmt_real(v.real, part), fmt_real(v.imag, part)]
    return out


def fmt_shape(shape):
    return "x".join(str(d) for d in shape) if shape else "0d"


# ---- inputs -----------------------------------------------------------------------------
# Two inputs of each dtype, A and B, of one length: binary ops pair them elementwise, so the
# pairs below are the interesting ones (overflow, NaN against numbers, inf - inf, 0 / 0, ...).
RAW = {
    "bool": (
        [False, True, False, True],
        [False, False, True, True],
    ),
    "int32": (
        [0, 1, -1, 7, -7, 100, I32.max, I32.min, I32.max, I32.min, 46341, 123456, -99999, 3, 0, -8],
        [1, -1, 3, 2, -2, 0, 1, -1, I32.max, I32.max, 46341, -654321, 7, 0, 0, 3],
    ),
    "int64": (
        [0, 1, -1, 7, -7, 100, I64.max, I64.min, I64.max, I64.min, 3037000500, 2**40, -(10**15),
         3, 2**53 + 1, -8],
        [1, -1, 3, 2, -2, 0, 1, -1, I64.max, I64.max, 3037000500, 2**30, 7, 0, 0, 3],
    ),
    # The smaller and unsigned integers: wraparound at both ends, MIN // -1, shifts by the
    # width and beyond, zero divisors.
    "int8": (
        [0, 1, -1, 7, -7, 100, I8.max, I8.min, I8.max, I8.min, 12, 64, -99, 3, 0, -8],
        [1, -1, 3, 2, -2, 0, 1, -1, I8.max, I8.max, 12, 9, 7, 0, 8, 3],
    ),
    "int16": (
        [0, 1, -1, 7, -7, 100, I16.max, I16.min, I16.max, I16.min, 182, 1234, -9999, 3, 0, -8],
        [1, -1, 3, 2, -2, 0, 1, -1, I16.max, I16.max, 182, -321, 7, 0, 16, 3],
    ),
    "uint8": (
        [0, 1, 255, 7, 250, 100, U8.max, 0, U8.max, 128, 16, 200, 99, 3, 0, 8],
        [1, 255, 3, 2, 7, 0, 1, 1, U8.max, U8.max, 16, 2, 7, 0, 8, 3],
    ),
    "uint16": (
        [0, 1, 65535, 7, 65530, 100, U16.max, 0, U16.max, 32768, 256, 40000, 999, 3, 0, 8],
        [1, 65535, 3, 2, 7, 0, 1, 1, U16.max, U16.max, 256, 2, 7, 0, 16, 3],
    ),
    "uint32": (
        [0, 1, U32.max, 7, U32.max - 5, 100, U32.max, 0, U32.max, 2**31, 65536, 3000000000,
         99999, 3, 0, 8],
        [1, U32.max, 3, 2, 7, 0, 1, 1, U32.max, U32.max, 65536, 2, 7, 0, 32, 3],
    ),
    "uint64": (
        [0, 1, U64.max, 7, U64.max - 5, 100, U64.max, 0, U64.max, 2**63, 2**32, 2**63 + 12345,
         10**15, 3, 2**53 + 1, 8],
        [1, U64.max, 3, 2, 7, 0, 1, 1, U64.max, U64.max, 2**32, 2, 7, 0, 64, 3],
    ),
    "float32": (
        [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 3e38, -1e-30, 1e-45, nan, inf, -inf, inf, nan,
         2.0, 1e10, -7.25, 0.1, 100.0],
        [-0.0, 0.0, 3.0, -1.0, 0.0, 2.0, -0.5, 3e38, 1e-10, 2.0, 1.0, inf, inf, 0.0, nan,
         -3.0, 1e-10, 7.25, 0.3, -inf],
    ),
    "float64": (
        [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 1e300, -1e-300, 5e-324, nan, inf, -inf, inf, nan,
         2.0, 1e10, -7.25, 0.1, 100.0],
        [-0.0, 0.0, 3.0, -1.0, 0.0, 2.0, -0.5, 1e300, 1e-10, 2.0, 1.0, inf, inf, 0.0, nan,
         -3.0, 1e-10, 7.25, 0.3, -inf],
    ),
    # float16: its largest finite value, a subnormal, the smallest normal; 0.1 and 0.3 are
    # not float16 values (they round on input, as in NumPy).
    "float16": (
        [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 65504.0, -6.1e-5, 6e-8, nan, inf, -inf, inf, nan,
         2.0, 1e4, -7.25, 0.1, 100.0],
        [-0.0, 0.0, 3.0, -1.0, 0.0, 2.0, -0.5, 65504.0, 1e-3, 2.0, 1.0, inf, inf, 0.0, nan,
         -3.0, 1e-3, 7.25, 0.3, -inf],
    ),
}
COMPLEX = (
    [0j, complex(-0.0, 0.0), 1 + 2j, -3.5 + 0.5j, 2 - 3j, 1e15 + 1e-15j, complex(nan, 1),
     complex(1, nan), complex(inf, 0), complex(0, inf), complex(-inf, -1), 0.5 - 0.25j, -1 + 0j,
     -1j, complex(nan, nan), 3 + 4j, complex(inf, inf)],
    [1 + 0j, 2 + 2j, 1 + 2j, 0j, -1 - 1j, 1e-15 + 1e15j, 2 + 0j, 1 + 1j, 1 + 0j, 2 + 0j, 1 + 1j,
     0.5 + 0.25j, -1 + 0j, -1j, 1 + 0j, 0j, 1j],
)
RAW["complex64"] = COMPLEX
RAW["complex128"] = COMPLEX

# Domain inputs for the functions (the A/B inputs above are edge cases for them too).
FUNC_RAW = {
    "int32": [0, 1, 2, -1, -3, 4, 10, 100, 1000, 46341, I32.max, I32.min],
    "int64": [0, 1, 2, -1, -3, 4, 10, 100, 1000, 2**40, I64.max, I64.min],
    "int8": [0, 1, 2, -1, -3, 4, 10, 100, 50, 11, I8.max, I8.min],
    "int16": [0, 1, 2, -1, -3, 4, 10, 100, 1000, 181, I16.max, I16.min],
    "uint8": [0, 1, 2, 3, 4, 10, 100, 50, 11, 128, 200, U8.max],
    "uint16": [0, 1, 2, 3, 4, 10, 100, 1000, 256, 40000, 181, U16.max],
    "uint32": [0, 1, 2, 3, 4, 10, 100, 1000, 2**20, 3000000000, 65535, U32.max],
    "uint64": [0, 1, 2, 3, 4, 10, 100, 1000, 2**40, 2**63, 2**32 + 1, U64.max],
    "float32": [0.25, 1.5, -0.75, 2.0, 10.0, -10.0, 3.14159265, 1.5707964, 50.0, 88.0, 89.0,
                -100.0, -104.0, 1e-6, 1e-40, 1e4, 123.456],
    "float64": [0.25, 1.5, -0.75, 2.0, 10.0, -10.0, 3.141592653589793, 1.5707963267948966, 50.0,
                709.0, 710.0, -720.0, -746.0, 1e-12, 1e-310, 1e6, 123.456],
    "float16": [0.25, 1.5, -0.75, 2.0, 10.0, -10.0, 3.14159, 1.5708, 5.0, 11.0, 12.0, -100.0,
                -17.0, 1e-3, 1e-6, 1e4, 123.4],
    "complex": [0.25 + 0.5j, -1.5 + 2j, 3 - 4j, -2 - 0.5j, 0.001 + 1e-4j, 10 + 1j, 1 + 10j, -5j,
                -4 + 0j, complex(-4, -0.0), 0.7 + 0.7j],
}
# Non-negative exponents: NumPy rejects negative integer powers of integer arrays.
POW_RAW = {
    "int32": ([0, 1, -1, 2, 3, -3, 7, 2, 10, -2, 0, 5, 46341],
              [0, 5, 7, 10, 19, 3, 11, 31, 9, 31, 3, 1, 2]),
    "int64": ([0, 1, -1, 2, 3, -3, 7, 2, 10, -2, 0, 5, 3037000500],
              [0, 5, 7, 10, 40, 3, 11, 63, 18, 63, 3, 1, 2]),
    "int8": ([0, 1, -1, 2, 3, -3, 7, 2, 10, -2, 0, 5, 12],
             [0, 5, 7, 6, 5, 3, 11, 7, 3, 7, 3, 1, 2]),
    "int16": ([0, 1, -1, 2, 3, -3, 7, 2, 10, -2, 0, 5, 182],
              [0, 5, 7, 10, 9, 3, 11, 15, 4, 15, 3, 1, 2]),
    "uint8": ([0, 1, 255, 2, 3, 253, 7, 2, 10, 254, 0, 5, 16],
              [0, 5, 7, 6, 5, 3, 11, 8, 3, 7, 3, 1, 2]),
    "uint16": ([0, 1, 65535, 2, 3, 65533, 7, 2, 10, 65534, 0, 5, 256],
               [0, 5, 7, 10, 9, 3, 11, 16, 4, 15, 3, 1, 2]),
    "uint32": ([0, 1, U32.max, 2, 3, U32.max - 2, 7, 2, 10, U32.max - 1, 0, 5, 65536],
               [0, 5, 7, 10, 19, 3, 11, 32, 9, 31, 3, 1, 2]),
    "uint64": ([0, 1, U64.max, 2, 3, U64.max - 2, 7, 2, 10, U64.max - 1, 0, 5, 2**32],
               [0, 5, 7, 10, 40, 3, 11, 64, 18, 63, 3, 1, 2]),
    "float": ([0.0, 0.0, -0.0, 2.0, -8.0, 4.0, nan, 1.0, inf, -inf, 2.0, 0.5, -2.0, 1.5, 10.0],
              [0.0, -1.0, -1.0, 0.5, 1.0 / 3.0, -0.5, 0.0, nan, -1.0, 3.0, 1e4, inf, 3.0, 2.5,
               -300.0]),
    "complex": ([1 + 2j, 0j, 0j, 2 - 3j, -1 + 0j, 0.5 + 0.5j, 3 + 4j, 1j, -2 - 2j, 1.5 + 0j],
                [2 + 0j, 0j, 2 + 0j, 0.5 + 0.25j, 0.5 + 0j, 3 + 0j, -1 + 0j, 1j, -2 + 0j,
                 0.5 - 1j]),
}


class Writer:
    def __init__(self):
        self.lines = []
        self.inputs = {}

    def input(self, name, a):
        a = np.asarray(a)
        assert name not in self.inputs, name
        self.inputs[name] = a
        self.lines.append(" ".join(["input", name, a.dtype.name, fmt_shape(a.shape)] +
                                   fmt_values(a)))

    def case(self, name, op, args, result, signed_zero=True):
        result = np.asarray(result)
        toks = ["case", name, op, str(int(signed_zero)), str(len(args))]
        toks += [arg_token(x) for x in args]
        toks += [result.dtype.name, fmt_shape(result.shape)] + fmt_values(result)
        self.lines.append(" ".join(toks))

    def error(self, name, op, args):
        self.lines.append(" ".join(["error", name, op, str(len(args))] +
                                   [arg_token(x) for x in args]))


class Ref:
    """An input array, by name, as a case argument."""

    def __init__(self, w, name):
        self.name, self.value = name, w.inputs[name]


def arg_token(x):
    if isinstance(x, Ref):
        return "@" + x.name
    if isinstance(x, bool):
        return "b:%d" % x
    if isinstance(x, int):
        return "i:%d" % x
    if isinstance(x, float):
        return "f:" + repr(x)
    if isinstance(x, complex):
        return "c:%s:%s" % (repr(x.real), repr(x.imag))
    raise TypeError(x)


def val(x):
    return x.value if hasattr(x, "value") else x


def math_rows(kind):
    """The Math rows of src/graph/op_table.hpp's KILN_<kind>_OPS: (name, takes complex). Their
    names are NumPy's, so each is tested as numpy.<name> without being listed here."""
    text = open(os.path.join(HERE, "..", "..", "src", "graph", "op_table.hpp")).read()
    block = text[text.index("#define KILN_%s_OPS(X)" % kind):]
    block = block.split("\n\n")[0]
    rows = re.findall(r"X\((\w+), (\w+), (\w+), (\w+), ([01]), ([01])\)", block)
    return [(name, cx == "1") for _, name, _, form, cx, _ in rows if form == "Math"]


UNARY_MATH = math_rows("UNARY")
BINARY_MATH = math_rows("BINARY")
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "power": np.power,
    "minimum": np.minimum, "maximum": np.maximum,
}
BINARY.update({name: getattr(np, name) for name, _ in BINARY_MATH})
# Integer division and shifts (Custom rows) and the logical functions (compositions).
BINARY.update({
    "floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "divmod_quotient": lambda a, b: np.divmod(a, b)[0],
    "divmod_remainder": lambda a, b: np.divmod(a, b)[1],
})
UNARY = {
    "negative": np.negative, "invert": np.invert, "absolute": np.absolute,
    "real": np.real, "imag": np.imag, "conj": np.conj, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "square": np.square, "reciprocal": np.reciprocal, "sign": np.sign,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit,
    "logical_not": np.logical_not, "degrees": np.degrees, "radians": np.radians,
    "angle": np.angle, "angle_deg": lambda a: np.angle(a, deg=True), "nan_to_num": np.nan_to_num,
}
# numpy.round(a, decimals) and numpy.nan_to_num(a, nan, posinf, neginf): the array, then
# Python scalars.
WITH_SCALARS = {"round": np.round,
                "nan_to_num": lambda a, n, p, m: np.nan_to_num(a, nan=n, posinf=p, neginf=m)}
UNARY.update({name: getattr(np, name) for name, _ in UNARY_MATH})


# GELU, x Phi(x) and its tanh approximation 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715
# x^3), computed in float64 from math's erfc and exp: Phi(x) = erfc(-x / sqrt 2) / 2 and
# 0.5 (1 + tanh z) = 1 / (1 + exp(-2z)), the same functions without the cancellation of 1 + erf
# and 1 + tanh, which lose every digit of a float64 result below x = -8.5 (erf's: 2e-6 of it
# at x = -7, more than float32's rounding). Then rounded to the dtype, float16 through
# float32, as kiln (and NumPy's float16 loops) compute a half in float32 and round it.
def _gelu_erf(x):
    return x * (0.5 * math.erfc(-x / math.sqrt(2.0)))


def _gelu_tanh(x):
    w = -2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
    return x / (1.0 + math.exp(w)) if w < 709.0 else x * 0.0  # past exp's range: +-0 (NaN)


def _gelu(f):
    def call(a):
        a = np.asarray(a)
        if a.dtype.kind != "f":
            raise TypeError("gelu of %s (PyTorch's takes floats only)" % a.dtype)
        r = np.array([f(float(v)) for v in a.reshape(-1)]).reshape(a.shape)
        return r.astype(np.float32).astype(a.dtype) if a.dtype == np.float16 else r.astype(a.dtype)
    return call


GELU = {"gelu": _gelu(_gelu_erf), "gelu_tanh": _gelu(_gelu_tanh)}
UNARY.update(GELU)
TRANSCENDENTAL = {name for name, _ in UNARY_MATH} | set(GELU)
# Functions kiln defines for real numbers only (the complex column of their row is 0): a
# complex input raises DTypeError, whether or not NumPy takes it (NumPy's log1p does).
REAL_ONLY = {name for name, cx in UNARY_MATH + BINARY_MATH if not cx}
NO_SIGNED_ZERO = {"minimum", "maximum", "clip"}


def signed_zero_defined(op, args):
    """Whether zeros of the result must have NumPy's sign. kiln computes the reciprocal of a
    complex number by Smith's division (NumPy by a formula of its own: the same values but
    for the sign of a zero part, as 1 / (inf+0j)), and rebuilds a complex nan_to_num's
    numbers with a non-finite part from their parts (re + im * 1j)."""
    if op in NO_SIGNED_ZERO:
        return False
    complex_input = any(np.iscomplexobj(val(x)) for x in args)
    return not (complex_input and op in ("reciprocal", "nan_to_num"))


def numpy_call(op, args):
    """NumPy's result, or None where NumPy raises TypeError."""
    vals = [val(x) for x in args]
    try:
        with np.errstate(all="ignore"):
            if op in WITH_SCALARS and len(vals) > 1:
                return np.asarray(WITH_SCALARS[op](*vals))
            if op in BINARY:
                return np.asarray(BINARY[op](*vals))
            if op in UNARY:
                return np.asarray(UNARY[op](*vals))
            if op == "where":
                return numpy_where(*args)
            if op == "clip":
                return numpy_clip(*vals)
    except OverflowError:
        return numpy2_comparison(op, vals) if op in COMPARISONS else None
    except TypeError:
        return None
    raise KeyError(op)


COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


def numpy2_comparison(op, vals):
    # NumPy 2 (gh-24915) answers a comparison of an integer array with a Python integer its
    # dtype cannot hold (uint8 < -1: False everywhere), where 1.24's "weak" state raises
    # OverflowError: compared here as Python integers, exactly.
    objs = [v.astype(object) if isinstance(v, np.ndarray) else v for v in vals]
    return np.asarray(BINARY[op](*objs), dtype=bool)


def numpy_where(cond, x, y):
    # NumPy 1.24's where ignores weak scalars; NumPy 2 (and kiln) promote them as weak.
    t = np.result_type(val(x), val(y))
    return np.where(val(cond), np.asarray(val(x), t), np.asarray(val(y), t))


def numpy_clip(a, lo, hi):
    # NumPy 1.24 ignores a scalar NaN bound (deprecated since 1.17); NumPy >= 1.25, like kiln,
    # propagates it, as 1.24 already does for array bounds: pass such a bound as an array.
    t = np.result_type(a, lo, hi)
    lo, hi = [np.full(np.shape(a), x, t) if isinstance(x, float) and np.isnan(x) else x
              for x in (lo, hi)]
    return np.asarray(np.clip(a, lo, hi))


def kiln_result(op, args, r):
    """NumPy's result in the dtype kiln documents (see the module docstring)."""
    arrays = [val(x) for x in args if isinstance(x, Ref)]
    t = arrays[0].dtype if arrays else None
    if op in ("floor", "ceil") and t.kind in "biu":  # KILN: NumPy >= 2.3 keeps the dtype
        a = arrays[0]
        small = np.abs(a.astype(np.float64)) < 2.0**53
        assert (r.astype(np.float64)[small] == a.astype(np.float64)[small]).all()
        return a.copy()
    if op == "trunc" and t.kind in "biu":  # KILN: NumPy >= 2.3 keeps the dtype
        return arrays[0].copy()
    if op == "sign" and t.kind == "c":  # NumPy 2's complex sign (1.24 has another)
        return numpy2_complex_sign(arrays[0])
    if op == "conj" and t == np.bool_:  # KILN: bool stays bool (NumPy: int8)
        assert (r == arrays[0]).all()
        return arrays[0].copy()
    return r


def numpy2_complex_sign(z):
    """NumPy 2's sign of complex numbers: z / |z|, 0 for 0, NaN when |z| is NaN, and for an
    infinite part the unit in its direction (NaN when both parts are infinite)."""
    out = np.empty_like(z)
    part = z.real.dtype.type
    with np.errstate(all="ignore"):
        for i, v in enumerate(z.reshape(-1)):
            re, im = v.real, v.imag
            mag = np.hypot(re, im)
            if np.isnan(mag):
                o = (np.nan, np.nan)
            elif np.isinf(re) and np.isinf(im):
                o = (np.nan, np.nan)
            elif np.isinf(re):
                o = (1.0 if re > 0 else -1.0, 0.0)
            elif np.isinf(im):
                o = (0.0, 1.0 if im > 0 else -1.0)
            elif mag == 0:
                o = (0.0, 0.0)
            else:
                o = (re / mag, im / mag)
            out.reshape(-1)[i] = complex(part(o[0]), part(o[1]))
    return out


# KILN: what kiln refuses (DTypeError) though NumPy computes it.
def kiln_refuses(op, args, complex_input):
    t = np.asarray(val(args[0])).dtype
    if op in REAL_ONLY and complex_input:
        return True
    if op == "reciprocal" and t == np.bool_:
        return True
    return op == "round" and complex_input


def emit(w, name, op, args):
    try:
        r = numpy_call(op, args)
    except ValueError:
        # NumPy rejects negative integer powers of integers by value; kiln checks only a
        # negative scalar exponent (a DTypeError, tested by hand), so such cases are left out.
        assert op == "power", name
        print("left out (NumPy: ValueError):", name)
        return
    complex_input = any(np.iscomplexobj(val(x)) for x in args)
    if r is None or kiln_refuses(op, args, complex_input):
        w.error(name, op, args)
        return
    w.case(name, op, args, kiln_result(op, args, r), signed_zero_defined(op, args))


def write_elementwise():
    w = Writer()
    for t in DTYPES:
        a, b = RAW[t]
        w.input(t + "_a", np.array(a, NP[t]))
        w.input(t + "_b", np.array(b, NP[t]))
    for t in ["int32", "int64", "float32", "float64", "float16"] + SMALL_INTS:
        w.input(t + "_f", np.array(FUNC_RAW[t], NP[t]))
    for t in ["complex64", "complex128"]:
        w.input(t + "_f", np.array(FUNC_RAW["complex"], NP[t]))
    for t in DTYPES[1:]:
        kind = t if t in POW_RAW else "complex" if t.startswith("complex") else "float"
        base, ex = POW_RAW[kind]
        w.input(t + "_pa", np.array(base, NP[t]))
        w.input(t + "_pb", np.array(ex, NP[t]))
    w.input("bool_c4", np.array([True, False, False, True]))

    def ref(n):
        return Ref(w, n)

    # Binary operations on two arrays of one dtype, and across dtypes (promotion + values).
    for t in DTYPES:
        A, B = ref(t + "_a"), ref(t + "_b")
        for op in BINARY:
            if op == "power":
                continue
            emit(w, "%s/%s_%s" % (op, t, t), op, [A, B])
    # Mixed dtypes: a few pairs, values after promotion.
    mixed = [("bool", "int32"), ("int32", "int64"), ("int32", "float32"), ("int64", "float64"),
             ("float32", "float64"), ("float32", "complex64"), ("int64", "complex64"),
             ("float64", "complex64"), ("bool", "float32"), ("int32", "complex128"),
             # NumPy's signed/unsigned rules: a wider signed type, or float64 beside uint64.
             ("uint8", "int8"), ("int8", "uint8"), ("uint16", "int16"), ("uint32", "int32"),
             ("uint64", "int64"), ("uint64", "int8"), ("uint8", "int64"), ("uint32", "uint64"),
             ("int8", "int16"), ("bool", "uint8"), ("int8", "float32"), ("uint16", "float32"),
             ("int16", "complex64"), ("uint32", "float32"), ("uint8", "complex64"),
             # float16 with NumPy's table: 8-bit integers stay float16, wider ones do not.
             ("float16", "float32"), ("int8", "float16"), ("float16", "uint8"),
             ("float16", "int16"), ("float16", "int64"), ("float16", "complex64"),
             ("bool", "float16")]
    for ta, tb in mixed:
        a = w.inputs[ta + "_a"][:4]
        b = w.inputs[tb + "_b"][:4]
        na, nb = "%s_a4" % ta, "%s_b4" % tb
        if na not in w.inputs:
            w.input(na, a)
        if nb not in w.inputs:
            w.input(nb, b)
        for op in ["add", "multiply", "divide", "less", "maximum", "remainder", "logical_and"]:
            emit(w, "%s/%s_%s" % (op, ta, tb), op, [ref(na), ref(nb)])

    # power on its own inputs (bool: the truth table).
    emit(w, "power/bool_bool", "power", [ref("bool_a"), ref("bool_b")])
    for t in DTYPES[1:]:
        emit(w, "power/%s_%s" % (t, t), "power", [ref(t + "_pa"), ref(t + "_pb")])

    # Array op weak scalar, and scalar op array.
    scalars = {"bool": [True], "int32": [1, -3, 2147483647], "int64": [1, -3, 2**62],
               "float32": [2.5, -0.0, inf, 1e30], "float64": [2.5, -0.0, nan, 1e308],
               "complex64": [1.5 - 2j], "complex128": [1.5 - 2j, 0j],
               # The dtype's ends, and just past them (NumPy 2: OverflowError).
               "int8": [1, -3, 127, 128, -129], "int16": [-3, 32767, 40000],
               "uint8": [1, 255, 256, -1], "uint16": [3, 65535, 70000],
               "uint32": [3, 4294967295, -2], "uint64": [3, 2**62, -1],
               # A weak float beyond float16's range becomes inf, as NumPy casts it.
               "float16": [2.5, -0.0, inf, 0.1, 1e5]}
    sc_ops = ["add", "subtract", "multiply", "divide", "less", "equal", "maximum", "power"]
    for t in DTYPES:
        A = ref(t + "_a")
        for s in scalars[t] + ([2.5, 1j] if t in ("int32", "bool", "int8", "uint64") else []):
            for op in sc_ops:
                if op == "power" and t.startswith("int") and isinstance(s, int) and s < 0:
                    continue
                if op == "power" and isinstance(s, float) and s > 100:
                    continue
                emit(w, "%s/%s_scalar(%r)" % (op, t, s), op, [A, s])
                emit(w, "%s/scalar(%r)_%s" % (op, s, t), op, [s, A])
        for s in scalars[t]:
            for op in ["floor_divide", "remainder", "fmod", "left_shift", "right_shift",
                       "logical_or", "copysign"]:
                emit(w, "%s/%s_scalar(%r)" % (op, t, s), op, [A, s])
                emit(w, "%s/scalar(%r)_%s" % (op, s, t), op, [s, A])
        if t != "bool":
            emit(w, "bitwise_and/%s_scalar(6)" % t, "bitwise_and", [A, 6])
    emit(w, "bitwise_xor/bool_scalar(True)", "bitwise_xor", [ref("bool_a"), True])
    emit(w, "bitwise_or/int64_scalar(-256)", "bitwise_or", [ref("int64_a"), -256])

    # Unary operations, on the edge inputs and the function-domain inputs.
    for t in DTYPES:
        for op in UNARY:
            emit(w, "%s/%s" % (op, t), op, [ref(t + "_a")])
            if t != "bool" and (op in TRANSCENDENTAL or op == "absolute"):
                emit(w, "%s/%s_domain" % (op, t), op, [ref(t + "_f")])
            if op in ("floor", "ceil") and t.startswith("float"):
                emit(w, "%s/%s_domain" % (op, t), op, [ref(t + "_f")])

    # Rounding: ties (to even), decimals either side of the point, NumPy's 10^d beyond 1e8
    # (repeated multiplication), integers at negative decimals (through float64).
    ties = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.675, 0.125, 1234.5678, -0.0, nan, inf, -inf,
            0.049999999999999996, 15.0, 25.0, -149.99, 1e-7, 123456.789]
    w.input("float64_r", np.array(ties + [1e300], np.float64))
    w.input("float32_r", np.array(ties + [3e38], np.float32))
    w.input("int32_r", np.array([15, 25, -15, -25, 149, 150, 151, -150, 0, 5, 994, I32.max,
                                 I32.min], np.int32))
    w.input("int64_r", np.array([15, 25, -15, -25, 149, 150, 151, -150, 0, 5, 994, 2**53 + 5,
                                 I64.max, I64.min], np.int64))
    w.input("int8_r", np.array([15, 25, -15, -25, 125, -125, 0, 5, 94, I8.max, I8.min], np.int8))
    w.input("uint8_r", np.array([15, 25, 149, 150, 151, 0, 5, 250, 245, U8.max], np.uint8))
    w.input("uint64_r", np.array([15, 25, 149, 150, 0, 5, 994, 2**53 + 5, 2**63, U64.max],
                                 np.uint64))
    for t in ["float32", "float64", "int32", "int64", "int8", "uint8", "uint64"]:
        R = ref(t + "_r")
        for d in [0, 1, 2, 3, -1, -2, 10]:
            emit(w, "round/%s_decimals(%d)" % (t, d), "round", [R, d])
        for op in ["rint", "trunc", "sign", "floor_divide", "remainder"]:
            if op in UNARY:
                emit(w, "%s/%s_ties" % (op, t), op, [R])
            else:
                emit(w, "%s/%s_ties_by(-0.75)" % (op, t), op, [R, -0.75])
    emit(w, "round/bool_decimals(0)", "round", [ref("bool_a"), 0])
    emit(w, "round/bool_decimals(1)", "round", [ref("bool_a"), 1])
    emit(w, "round/complex128_decimals(1)", "round", [ref("complex128_a"), 1])
    # nan_to_num with its replacements given.
    for t in ["float32", "float64", "complex64", "complex128", "int32", "bool", "uint8",
              "float16"]:
        emit(w, "nan_to_num/%s_values" % t, "nan_to_num", [ref(t + "_a"), -1.0, 1e10, -1e10])

    # where: array/array, array/scalar (weak), scalar/scalar, mixed dtypes.
    for t in DTYPES:
        n = len(w.inputs[t + "_a"])
        cname = "cond%d" % n
        if cname not in w.inputs:
            w.input(cname, (np.arange(n) % 3) == 1)
        emit(w, "where/%s_%s" % (t, t), "where", [ref(cname), ref(t + "_a"), ref(t + "_b")])
        emit(w, "where/%s_scalar(2)" % t, "where", [ref(cname), ref(t + "_a"), 2])
        emit(w, "where/scalar(2.5)_%s" % t, "where", [ref(cname), 2.5, ref(t + "_a")])
    emit(w, "where/int32_float32", "where", [ref("bool_c4"), ref("int32_a4"), ref("float32_b4")])
    emit(w, "where/bool_int64", "where", [ref("bool_c4"), ref("bool_a"), ref("int64_b4")])
    emit(w, "where/scalar(1)_scalar(0.5)", "where", [ref("bool_c4"), 1, 0.5])
    emit(w, "where/scalar(True)_scalar(False)", "where", [ref("bool_c4"), True, False])

    # clip: scalar bounds (weak), array bounds, NaN bounds, bounds crossing (lo > hi).
    for t in DTYPES:
        A = ref(t + "_a")
        if t == "bool":
            emit(w, "clip/bool", "clip", [A, False, True])
            continue
        emit(w, "clip/%s_scalar(-5,100)" % t, "clip", [A, -5, 100])
        emit(w, "clip/%s_scalar(-2.5,3.5)" % t, "clip", [A, -2.5, 3.5])
        emit(w, "clip/%s_scalar(5,-5)" % t, "clip", [A, 5, -5])
        emit(w, "clip/%s_array" % t, "clip", [A, ref(t + "_b"), ref(t + "_a")])
    emit(w, "clip/float64_scalar(nan,1)", "clip", [ref("float64_a"), nan, 1.0])
    emit(w, "clip/float32_scalar(0,nan)", "clip", [ref("float32_a"), 0.0, nan])

    # Broadcasting: (3,1) op (4,), inside compound expressions, across chunk boundaries.
    rng = np.random.default_rng(20240602)
    w.input("f64_col3", np.array([[0.5], [-1.25], [nan]]))
    w.input("f64_row4", np.array([2.0, -0.0, inf, 3.5]))
    w.input("f32_col3", np.array([[0.5], [-1.25], [2.0]], np.float32))
    w.input("i32_row4", np.array([1, -2, I32.max, 0], np.int32))
    w.input("i32_col3", np.array([[1], [I32.max], [-5]], np.int32))
    w.input("c128_row4", np.array([1 + 1j, -2j, complex(nan, 0), 3 + 0j]))
    w.input("bool_col3", np.array([[True], [False], [True]]))
    for op in ["add", "subtract", "multiply", "divide", "less", "maximum", "power"]:
        emit(w, "%s/broadcast_f64_3x1_4" % op, op, [ref("f64_col3"), ref("f64_row4")])
    for op in ["add", "multiply", "equal", "bitwise_xor", "floor_divide", "remainder",
               "left_shift"]:
        emit(w, "%s/broadcast_i32_3x1_4" % op, op, [ref("i32_col3"), ref("i32_row4")])
    emit(w, "remainder/broadcast_f64_3x1_4", "remainder", [ref("f64_col3"), ref("f64_row4")])
    w.input("f64_0d", np.array(2.5))
    w.input("i32_0d", np.array(-7, np.int32))
    for op in ["add", "multiply", "less", "power"]:
        emit(w, "%s/broadcast_f64_0d_4" % op, op, [ref("f64_0d"), ref("f64_row4")])
    emit(w, "subtract/broadcast_i32_0d_3x1", "subtract", [ref("i32_0d"), ref("i32_col3")])
    emit(w, "add/f64_0d_0d", "add", [ref("f64_0d"), ref("f64_0d")])
    emit(w, "divide/i32_0d_f64_0d", "divide", [ref("i32_0d"), ref("f64_0d")])
    emit(w, "sin/f64_0d", "sin", [ref("f64_0d")])
    emit(w, "absolute/i32_0d", "absolute", [ref("i32_0d")])
    emit(w, "add/broadcast_f32_3x1_i32_4", "add", [ref("f32_col3"), ref("i32_row4")])
    emit(w, "multiply/broadcast_f64_3x1_c128_4", "multiply", [ref("f64_col3"), ref("c128_row4")])
    emit(w, "where/broadcast_3x1_4", "where", [ref("bool_col3"), ref("f64_row4"), ref("f32_col3")])
    emit(w, "clip/broadcast_4_3x1", "clip", [ref("f64_row4"), ref("f32_col3"), 3.0])

    # Compound expressions (the test writes the same formula with kiln; see EXPRESSIONS).
    w.input("f64_col40", rng.uniform(-4, 4, (40, 1)).round(3))
    w.input("f64_row55", rng.uniform(-4, 4, 55).round(3))
    w.input("i64_col40", rng.integers(-1000, 1000, (40, 1)))
    w.input("i64_row55", rng.integers(-1000, 1000, 55))
    w.input("f32_row4", np.array([0.25, -3.0, 8.5, 0.0], np.float32))
    w.input("i8_col40", rng.integers(-128, 128, (40, 1)).astype(np.int8))
    w.input("i8_row55", rng.integers(-128, 128, 55).astype(np.int8))
    w.input("u8_col40", rng.integers(0, 256, (40, 1)).astype(np.uint8))
    w.input("u16_row55", rng.integers(0, 65536, 55).astype(np.uint16))
    w.input("u8_row55", rng.integers(0, 256, 55).astype(np.uint8))
    for kind, label, args in EXPRESSIONS:
        with np.errstate(all="ignore"):
            r = EXPRESSION_FUNCTIONS[kind](*[w.inputs[a] for a in args])
        w.case("expr/%s/%s" % (kind, label), kind, [ref(a) for a in args], r, True)

    # NumPy's rejections, checked by hand too (they are kiln DTypeErrors):
    emit(w, "bitwise_and/float64_scalar(1)", "bitwise_and", [ref("float64_a"), 1])
    emit(w, "bitwise_or/int32_scalar(1.0)", "bitwise_or", [ref("int32_a"), 1.0])

    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.txt"), "w") as f:
        f.write("# Written by tests/data/make_elementwise_fixtures.py with NumPy %s; do not edit.\n"
                % np.__version__)
        f.write("\n".join(w.lines) + "\n")
    return w


def _expr_trig(a, b):
    return np.sin(a) * 2 + np.cos(b) / 3


def _expr_poly(a, b):
    return (a * b - a) / (b * b + 1) + np.abs(a - b)


def _expr_int(a, b):
    return np.where(a > b, a * b - 7, np.minimum(a, b) + 3)


def _expr_mixed(a, b):
    return np.sqrt(np.abs(a * 2.0)) + b * 2


def _expr_clip_exp(a, b):
    return np.exp(np.clip(a + b, -3.0, 3.0)) - 1


def _expr_cmp(a, b):
    return (a < b) & ~(a == 0) | (b > 2)


def _expr_i32_f32(a, b):
    return a * b + a


def _expr_intdiv(a, b):
    return (a // b) * 3 + (a % b) - np.fmod(a, 7) + (a << 2) - (b >> 1)


def _expr_ufuncs(a, b):
    return np.sign(a) * np.trunc(b) + np.round(a, 1) + np.degrees(b) - np.square(a) % 1.5


# The compound expressions, by OP name; tests/test_elementwise.cpp writes each with kiln.
EXPRESSION_FUNCTIONS = {
    "expr_trig": _expr_trig, "expr_poly": _expr_poly, "expr_int": _expr_int,
    "expr_mixed": _expr_mixed, "expr_clip_exp": _expr_clip_exp, "expr_cmp": _expr_cmp,
    "expr_i32_f32": _expr_i32_f32, "expr_intdiv": _expr_intdiv, "expr_ufuncs": _expr_ufuncs,
}
# OP, label, input names.
EXPRESSIONS = [
    ("expr_trig", "f64_3x1_4", ["f64_col3", "f64_row4"]),
    ("expr_trig", "f64_40x1_55", ["f64_col40", "f64_row55"]),
    ("expr_poly", "f64_40x1_55", ["f64_col40", "f64_row55"]),
    ("expr_int", "i64_40x1_55", ["i64_col40", "i64_row55"]),
    ("expr_mixed", "i32_3x1_f32_4", ["i32_col3", "f32_row4"]),
    ("expr_clip_exp", "f64_40x1_55", ["f64_col40", "f64_row55"]),
    ("expr_cmp", "i64_40x1_55", ["i64_col40", "i64_row55"]),
    ("expr_i32_f32", "i32_3x1_f32_4", ["i32_col3", "f32_row4"]),
    ("expr_intdiv", "i64_40x1_55", ["i64_col40", "i64_row55"]),
    ("expr_ufuncs", "f64_40x1_55", ["f64_col40", "f64_row55"]),
    ("expr_int", "i8_40x1_55", ["i8_col40", "i8_row55"]),
    ("expr_intdiv", "i8_40x1_55", ["i8_col40", "i8_row55"]),
    ("expr_int", "u8_40x1_55", ["u8_col40", "u8_row55"]),
    ("expr_intdiv", "u8_40x1_u16_55", ["u8_col40", "u16_row55"]),
    ("expr_cmp", "u8_40x1_i8_55", ["u8_col40", "i8_row55"]),
    ("expr_poly", "i8_40x1_u8_55", ["i8_col40", "u8_row55"]),
]


# ---- promotion --------------------------------------------------------------------------
SCALARS = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}
PROMO_BINOPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
                "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor, "==": np.equal,
                "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
                ">=": np.greater_equal}
PROMO_UNARY = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
               "tan": np.tan, "tanh": np.tanh, "abs": np.absolute, "neg": np.negative,
               "invert": np.invert, "real": np.real, "imag": np.imag, "conj": np.conj}
PROMO_REDUCE = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min}


def dtype_of(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).dtype.name
    except TypeError:
        return "error"


# bfloat16's safe casts as ml_dtypes registers them (jax-ml/ml_dtypes, custom_float.h,
# RegisterCasts): from bool, uint8 and int8; to float32, float64, complex64 and complex128.
BF16_FROM = {"bool", "uint8", "int8", "bfloat16"}
BF16_TO = {"bfloat16", "float32", "float64", "complex64", "complex128"}


def bf16_promote(a, b):
    """NumPy's promotion with a user dtype: the smallest type (in NumPy's order, bfloat16
    among the 16-bit floats) that both cast to safely."""
    order = ["bool", "int8", "uint8", "int16", "uint16", "bfloat16", "float16", "int32",
             "uint32", "float32", "int64", "uint64", "float64", "complex64", "complex128"]

    def safe(x, to):
        if x == "bfloat16":
            return to in BF16_TO
        if to == "bfloat16":
            return x in BF16_FROM
        return np.can_cast(x, to, "safe")
    for t in order:
        if safe(a, t) and safe(b, t):
            return t
    raise AssertionError((a, b))


def typed_dtype(fn, arrays, *args):
    """The dtype of fn(args), each arg a dtype name (an array of it, from `arrays`) or a Python
    scalar. bfloat16, which NumPy lacks: the operation runs on the promoted type, where
    bfloat16 behaves as float16 does in NumPy (a 16-bit float), so NumPy's dtype for float16
    there, renamed."""
    names = [x if isinstance(x, str) else None for x in args]
    if "bfloat16" not in names:
        return dtype_of(fn, *[arrays[x] if isinstance(x, str) else x for x in args])
    if all(n is not None for n in names):
        p = names[0] if len(names) == 1 else bf16_promote(*names)
        stand_in = [arrays["float16" if p == "bfloat16" else p]] * len(names)
    else:  # an array and a Python scalar
        stand_in = [arrays["float16"] if n == "bfloat16" else x for n, x in zip(names, args)]
    r = dtype_of(fn, *stand_in)
    return "bfloat16" if r == "float16" else r


def write_promotion():
    lines = ["# Written by tests/data/make_elementwise_fixtures.py with NumPy %s; do not edit."
             % np.__version__]
    arrays = {t: np.ones(2, NP[t]) for t in DTYPES}
    promo = DTYPES  # float16 included
    for a in promo:
        for b in promo:
            lines.append("pair %s %s %s" % (a, b, np.result_type(a, b).name))
    for a in promo + ["bfloat16"]:
        lines.append("pair bfloat16 %s %s" % (a, bf16_promote("bfloat16", a)))
        if a != "bfloat16":
            lines.append("pair %s bfloat16 %s" % (a, bf16_promote(a, "bfloat16")))

    def typed(fn, *args):
        return typed_dtype(fn, arrays, *args)
    names = promo + ["bfloat16"]
    for op, fn in PROMO_BINOPS.items():
        for a in names:
            for b in names:
                lines.append("binop %s %s %s %s" % (op, a, b, typed(fn, a, b)))
    for op, fn in PROMO_BINOPS.items():
        for a in names:
            for kind, s in SCALARS.items():
                left = typed(fn, a, s)
                right = typed(fn, s, a)
                assert left == right, (op, a, kind)
                lines.append("weak %s %s %s %s" % (op, a, kind, left))
    for op, fn in PROMO_UNARY.items():
        for a in names:
            lines.append("unary %s %s %s" % (op, a, typed(fn, a)))
    for op, fn in PROMO_REDUCE.items():
        for a in names:
            lines.append("reduce %s %s %s" % (op, a, typed(fn, a)))
    with open(os.path.join(HERE, "promotion.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    write_promotion()
    write_elementwise()
