// kiln::elementwise: your own elementwise function, written as a CUDA C++ expression over named
// inputs, like CuPy's ElementwiseKernel, except that it is a node of kiln's lazy graph: it fuses
// with kiln's operations before and after it into one kernel.
//
//   auto a = kiln::asarray(x, kiln::cuda()), b = kiln::asarray(y, kiln::cuda());
//   auto f = kiln::elementwise("x * y + sinf(x)", {{"x", a}, {"y", b}}, kiln::DType::Float32);
//   auto g = kiln::sum(kiln::exp(-f) * 2);  // one kernel: the expression, exp, mul and sum
#pragma once
#include <string>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// One input of a user expression: the name it has in the expression and its value.
struct ElementwiseInput {
  std::string name;  // a C identifier, distinct from the other inputs' names
  Operand value;     // an Array, or a Scalar (a kernel parameter: new values never recompile)
};

// The array whose every element is `expr` evaluated on the inputs' elements, converted to
// `out`. Lazy, like every kiln operation.
//
// - Array inputs broadcast together (NumPy's rules) and keep their dtypes. Each name is a
//   `const` C++ variable of its input's type: bool, int (int32), long long (int64), float,
//   double, kiln::complex<float>, kiln::complex<double> (complex numbers have + - * /, ==,
//   kiln::abs, kiln::exp, kiln::log, kiln::sqrt, kiln::sin, ... and .re / .im). A Scalar input
//   is a variable of its default dtype: bool, long long, double or kiln::complex<double>.
// - `expr` is one C++ expression (no top-level `;`), using CUDA's device functions: sinf and
//   expf for float, sin and exp for double, fminf, __float2int_rn, ... The value is converted to
//   `out` as astype converts (float to integer as NumPy, complex to real keeps the real part).
// - The text and the names are part of the expression's identity: building the same call twice
//   gives one node, one plan and one compiled kernel; different texts never share them.
// - It runs on a GPU only. The inputs must be on one CUDA device (as for any operation); a
//   graph with host inputs can be built and explained, but evaluating it throws DeviceError
//   (copy the inputs with kiln::asarray(x, kiln::cuda())).
// - The expression is compiled (NVRTC) with the kernel it is fused into, at the first
//   evaluation; one that does not compile raises CompileError then, with NVRTC's log and the
//   path of the saved source.
//
// Throws kiln::Error for a bad name (not a C identifier, a C++ keyword, `kiln`, a reserved
// identifier, a repeated name), an empty expression, one whose brackets, quotes or comments
// are unbalanced or that holds a control character, or no Array input; ShapeError when the inputs
// do not broadcast; DeviceError when they are on different devices.
Array elementwise(const std::string& expr, const std::vector<ElementwiseInput>& inputs, DType out);

}  // namespace kiln
