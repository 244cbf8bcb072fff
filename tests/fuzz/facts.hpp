// What the fuzzer knows about a value without computing it, and so how two paths' results
// for it may differ.
//
// Two paths (host lazy / eager, GPU lazy / eager) run the same IEEE operations on the same
// inputs. Most operations round correctly (+ - * / sqrt, casts, comparisons, min/max,
// integer arithmetic that wraps), so their results are identical on every path: such values
// are "exact" and compared bit for bit (NaN equal to NaN). Others legitimately differ in the
// last bits: transcendental functions (the host's libm / Eigen against CUDA's), FFTs, complex
// division and pow (different algorithms), and float sums and products whose rounding
// depends on the order of the terms. Those values are "noisy", and carry a bound on their
// distance from the exact result: abs_err + rel_err * |value| per component.
//
// A sum is exact when every partial sum is representable: the inputs lie on a grid of
// multiples of 2^-grid with |value| <= bound, and the count times the largest numerator fits
// the mantissa. Discontinuous operations (comparisons, floor, casts to integers, argmax,
// where's condition, log / sqrt / pow / division of a value near a pole or a branch cut)
// would turn a last-bit difference into a different answer, so they only take exact values:
// infer() refuses them on noisy ones, and the generator then picks another operation.
//
// The sign of a zero is unspecified for sums (NumPy's pairwise sum starts from +0, the host
// from the first term) and for min / max of -0 and +0 (SIMD and tree orders pick either), so
// such zeros may only reach operations that do not look at their sign: not a divisor, the
// base of a pow, nor the argument of a complex log or sqrt (branch cuts).
#pragma once
#include <limits>
#include <optional>
#include <vector>

#include "fuzz/oracle.hpp"
#include "fuzz/program.hpp"

namespace kiln::fuzz {

struct Facts {
  DType dtype = DType::Float64;
  Shape shape;
  double bound = 0;        // |re| and |im| of every finite element are at most this (inf: unknown)
  int grid = 0;            // finite elements are multiples of 2^-grid (-1: not on such a grid)
  bool special = false;    // may hold NaN or an infinity
  bool noisy = false;      // may differ between paths, by up to abs_err + rel_err * |value|
  bool zero_sign = false;  // a zero element may be -0 on one path and +0 on another
  double abs_err = 0, rel_err = 0;
  // Float sums and means: the part of abs_err the terms' own errors make (n times theirs).
  // Given the terms' magnitudes (reference.hpp), check.cpp bounds the rounding part by
  // gamma_{n-1} * sum |x_i| instead of abs_err's a-priori n * gamma_{n-1} * bound.
  double sum_input_err = 0;
  // Real floats: every element is at least this on every path (-inf: unknown). Softmax's sum
  // of exps and layernorm's sqrt(var + eps) are known to be positive; dividing by them is then
  // bounded although they are noisy.
  double least = -std::numeric_limits<double>::infinity();
};

Facts input_facts(const InputSpec& s);
// The facts of op's result, whose dtype and shape are the oracle's (oracle.hpp), never
// kiln's; nullopt when NumPy refuses op or op would make a value whose paths may
// legitimately disagree beyond any tolerance.
std::optional<Facts> infer(const Op& op, const std::vector<Facts>& values);
// The values' dtypes and shapes, as the oracle reads them.
std::vector<Typed> typed(const std::vector<Facts>& values);

// The unit roundoff of a dtype's real part (0 for integers and bool).
double unit_roundoff(DType t);
// gamma_n = n u / (1 - n u): recursive or pairwise summation of n + 1 terms in any order is
// off by at most gamma_n * sum |x_i| (Higham, Accuracy and Stability, 4.2).
double gamma(double n, double u);

}  // namespace kiln::fuzz
