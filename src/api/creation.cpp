// Creating arrays: from memory (copied into a kiln buffer) or as lazy constants, which cost
// nothing until used and then fuse into their consumer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "api/build.hpp"
#include "api/promotion.hpp"
#include "graph/shape.hpp"
#include "runtime/backends.hpp"

namespace kiln {

Array asarray(const Array& a, Device d) { return a.to(d); }

Array asarray(const void* data, DType t, Shape s, Device d) {
  graph::check_rank(s, "asarray");
  size_t nbytes = static_cast<size_t>(shape_size(s)) * itemsize(t);
  if (!data && nbytes)
    throw Error("asarray: data is null but the shape " + shape_str(s) + " has elements");
  if (d.is_cuda()) cuda(d.index);  // DeviceError when there is no such GPU
  auto buf = runtime::allocate(d, nbytes);
  // User memory is pageable and may be freed once we return: copy it now (to a GPU through
  // double-buffered pinned staging).
  if (nbytes) runtime::backend_for(d).copy_from_host(buf->data(), data, nbytes, false);
  return Array(graph::buffer_node(std::move(buf), t, std::move(s)));
}

void detail::check_vector_fits(size_t n, const Shape& s) {
  graph::check_rank(s, "asarray");
  if (static_cast<size_t>(shape_size(s)) != n)
    throw ShapeError("asarray: a vector of " + std::to_string(n) + " elements cannot fill shape " +
                     shape_str(s) + " (" + std::to_string(shape_size(s)) +
                     " elements); pass a shape whose sizes multiply to the vector's size");
}

Array asarray(const std::vector<bool>& v, Shape s, Device d) {
  detail::check_vector_fits(v.size(), s);
  // One byte per element, as kiln's (and NumPy's) bool dtype stores it.
  std::unique_ptr<bool[]> bytes(new bool[v.size()]);
  std::copy(v.begin(), v.end(), bytes.get());
  return asarray(bytes.get(), DType::Bool, std::move(s), d);
}

Array full(Shape s, Scalar v, std::optional<DType> t, Device d) {
  graph::check_rank(s, "full");
  if (d.is_cuda()) cuda(d.index);
  DType dt = t.value_or(api::default_dtype(v));
  api::check_fits(v, dt, "full");
  return api::finish(api::broadcast(api::scalar(v, dt, d), s));
}

Array zeros(Shape s, DType t, Device d) { return full(std::move(s), 0, t, d); }
Array ones(Shape s, DType t, Device d) { return full(std::move(s), 1, t, d); }
Array empty(Shape s, DType t, Device d) { return zeros(std::move(s), t, d); }

Array arange(Scalar stop) { return arange(0, stop, 1); }

namespace {

// NumPy's fill rule for arange (@TYPE@_fill): the first two elements are start and start + step
// stored in the dtype, and element i is first + i * (second - first), computed in the dtype (in
// float32 for float16 and bfloat16, in the parts' dtype for complex). So a float step with an
// integer dtype steps by the stored difference (arange(3, 0, -0.5, int32) by 2 - 3 = -1), and a
// float range carries the rounding of start + step (arange(1, 2, 0.1)[2] is 1.2000000000000002).
// The Iota node computes first + i * delta in `compute`.
struct IotaTerms {
  Scalar first, delta;
  DType compute;
};

IotaTerms iota_terms(const Scalar& start, const Scalar& step, DType dt, bool ints) {
  const DType compute = dt == DType::Bool         ? DType::Float64
                        : dt == DType::Complex64  ? DType::Float32
                        : dt == DType::Complex128 ? DType::Float64
                        : is_half(dt)             ? DType::Float32
                                                  : dt;
  if (ints && is_integer(dt)) return {start, step, compute};  // second - first is step, wrapped
  const Scalar second =
      ints ? Scalar(static_cast<double>(static_cast<__int128>(start.as_int()) + step.as_int()))
           : Scalar(start.as_double() + step.as_double());
  const DType stored = is_complex(dt) ? compute : dt;
  const IotaTerms terms = visit_dtype(stored, [&](auto z) -> IotaTerms {
    using T = decltype(z);
    const T a = start.as<T>(), b = second.as<T>();
    if constexpr (std::is_same_v<T, bool>)  // (at most two elements: a, then b)
      return {Scalar(a ? 1.0 : 0.0), Scalar((b ? 1.0 : 0.0) - (a ? 1.0 : 0.0)), compute};
    else if constexpr (std::is_integral_v<T>)
      return {Scalar(a), Scalar(static_cast<T>(b - a)), compute};
    else if constexpr (std::is_same_v<T, double>)
      return {Scalar(a), Scalar(b - a), compute};
    else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, float16> ||
                       std::is_same_v<T, bfloat16>)  // in float32
      return {Scalar(static_cast<float>(a)), Scalar(static_cast<float>(b) - static_cast<float>(a)),
              compute};
    else
      throw std::logic_error("arange: a complex dtype's parts are stored real (kiln bug)");
  });
  // Integer bounds that the dtype holds exactly give start and step themselves: kept as the
  // integers they are, so they stay the same constants as a program's other integers.
  if (ints && terms.first.as_double() == start.as_double() &&
      terms.delta.as_double() == step.as_double())
    return {start, step, compute};
  return terms;
}

}  // namespace

Array arange(Scalar start, Scalar stop, Scalar step, std::optional<DType> t, Device d) {
  if (d.is_cuda()) cuda(d.index);
  bool ints = start.kind() != Scalar::Kind::Float && stop.kind() != Scalar::Kind::Float &&
              step.kind() != Scalar::Kind::Float;
  if (start.kind() == Scalar::Kind::Complex || stop.kind() == Scalar::Kind::Complex ||
      step.kind() == Scalar::Kind::Complex)
    throw DTypeError("arange: complex bounds are not supported; use real numbers");
  DType dt = t.value_or(ints ? DType::Int64 : DType::Float64);
  if (step.as_double() == 0) throw Error("arange: step must not be zero");
  double len = std::ceil((stop.as_double() - start.as_double()) / step.as_double());
  if (ints) {  // exactly, in 128 bits: the bounds and the step may be anywhere in int64
    __int128 a = start.as_int(), b = stop.as_int(), c = step.as_int();
    len = static_cast<double>(c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c);
  }
  if (std::isnan(len))
    throw Error("arange: cannot compute the length of a range with start " +
                std::to_string(start.as_double()) + ", stop " + std::to_string(stop.as_double()) +
                " and step " + std::to_string(step.as_double()) + "; use finite numbers");
  // The length asked for, not a clamped one, in the message (arange(0, 1e20) has 1e+20).
  constexpr double kAddressable = static_cast<double>(std::numeric_limits<int64_t>::max() / 16);
  if (len > kAddressable) {
    auto str = [](const Scalar& v) {
      if (v.kind() != Scalar::Kind::Float) return std::to_string(v.as_int());
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
      return std::string(buf);
    };
    char count[32];
    std::snprintf(count, sizeof count, "%.6g", len);
    throw ShapeError("arange(" + str(start) + ", " + str(stop) + ", " + str(step) +
                     ") would have " + count +
                     " elements, more than kiln can address (2^59); narrow the range or take a "
                     "larger step");
  }
  int64_t n = len > 0 ? static_cast<int64_t>(len) : 0;
  graph::check_rank({n}, "arange");
  // As NumPy: past two elements a bool range has no meaning (every step after 0 is True).
  if (dt == DType::Bool && n > 2)
    throw DTypeError("arange: a bool range has at most 2 elements, this one " + std::to_string(n) +
                     "; make an integer range and compare it (a != 0)");
  const IotaTerms terms = iota_terms(start, step, dt, ints);
  const DType it = terms.compute;
  graph::NodeSpec spec{graph::OpKind::Iota,
                       0,
                       it,
                       {n},
                       d,
                       {api::scalar(terms.first, it, d), api::scalar(terms.delta, it, d)}};
  return api::finish(api::cast(graph::make_node(std::move(spec)), dt));
}

Array linspace(double start, double stop, int64_t num, bool endpoint, DType t, Device d) {
  if (num < 0) throw ShapeError("linspace: num must be >= 0, got " + std::to_string(num));
  graph::check_rank({num}, "linspace");
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
  Array i = arange(0, num, 1, DType::Float64, d);
  Array y = i * step + start;
  // As NumPy: the last sample is exactly `stop` when it is an endpoint.
  if (endpoint && num > 1) y = where(i == static_cast<double>(num - 1), stop, y);
  return y.astype(t);
}

}  // namespace kiln
