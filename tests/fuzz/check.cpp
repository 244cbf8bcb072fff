#include "fuzz/check.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <sstream>

#include "fuzz/facts.hpp"
#include "fuzz/reference.hpp"

namespace kiln::fuzz {

const char* verdict_name(Verdict v) {
  static constexpr const char* names[] = {"ok", "rejected", "illegal", "mismatch", "crash"};
  return names[static_cast<int>(v)];
}

namespace {

struct Path {
  const char* name;
  Device device;
  Mode mode;
  bool bitwise = false;  // compared with the reference bit for bit, noisy values included
};

struct Snapshot {
  Device device;  // where the output was (its bytes are a host copy)
  DType dtype;
  Shape shape;
  std::vector<unsigned char> bytes;
};

enum class Status { Ok, Rejected, Crash, Illegal, Mismatch };

struct PathRun {
  Status status = Status::Ok;
  std::string what;        // the exception's message
  std::string error_type;  // its kiln type, for rejections
  std::vector<Snapshot> outputs;
};

class ModeGuard {
 public:
  explicit ModeGuard(Mode m) : saved_(get_mode()) { set_mode(m); }
  ~ModeGuard() { set_mode(saved_); }
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;

 private:
  Mode saved_;
};

// kiln refusing bad arguments is a rejection; failing to compile, run or allocate is not.
bool is_rejection(const std::exception& e) {
  if (dynamic_cast<const CompileError*>(&e) || dynamic_cast<const CudaError*>(&e) ||
      dynamic_cast<const OutOfMemory*>(&e))
    return false;
  return dynamic_cast<const Error*>(&e) != nullptr;
}

std::string error_type(const std::exception& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const DeviceError*>(&e)) return "DeviceError";
  if (dynamic_cast<const CompileError*>(&e)) return "CompileError";
  if (dynamic_cast<const CudaError*>(&e)) return "CudaError";
  if (dynamic_cast<const OutOfMemory*>(&e)) return "OutOfMemory";
  if (dynamic_cast<const Error*>(&e)) return "kiln::Error";
  return "std::exception";
}

Snapshot snapshot(const Array& a) {
  Array h = a.get();
  h.eval();
  Snapshot s{a.device(), h.dtype(), h.shape(), {}};
  s.bytes.resize(static_cast<size_t>(h.nbytes()));
  if (!s.bytes.empty()) std::memcpy(s.bytes.data(), h.data(), s.bytes.size());
  return s;
}

void fail(PathRun& r, Status status, const std::string& where, const std::exception& e) {
  r.status = status;
  r.error_type = error_type(e);
  r.what = where + ": " + r.error_type + ": " + e.what();
}

// "" when kiln's dtype and shape of op's result are the oracle's; else the op, its operands
// and both answers.
std::string against_oracle(const Program& p, size_t op, const std::vector<Facts>& facts,
                           const Array& got) {
  std::vector<Typed> operands = typed(facts);
  Expectation e = expect(p.ops[op], operands);
  if (e.result && e.result->dtype == got.dtype() && e.result->shape == got.shape()) return "";
  std::ostringstream os;
  os << "v" << p.inputs.size() + op << " = " << describe(p.ops[op], operands) << ": ";
  if (e.result)
    os << "expected " << dtype_name(e.result->dtype) << " " << shape_str(e.result->shape)
       << " (oracle)";
  else
    os << "NumPy refuses it (" << e.refusal << ")";
  os << ", kiln gave " << dtype_name(got.dtype()) << " " << shape_str(got.shape());
  return os.str();
}

// Builds every value (inferring facts along the way when asked), then evaluates the
// outputs together, as one plan.
PathRun run_path(const Program& p, const Path& path, std::vector<Facts>* facts) {
  ModeGuard guard(path.mode);
  PathRun r;
  std::vector<Array> values;
  size_t op = 0;
  try {
    for (const auto& in : p.inputs) {
      values.push_back(make_input(in, path.device));
      if (facts) facts->push_back(input_facts(in));
    }
    for (; op < p.ops.size(); ++op) {
      values.push_back(apply_op(p.ops[op], values, last_use(p, op)));
      if (!facts) continue;
      std::string wrong = against_oracle(p, op, *facts, values.back());
      if (!wrong.empty()) return PathRun{Status::Mismatch, wrong, "", {}};
      auto f = infer(p.ops[op], *facts);
      if (!f) return PathRun{Status::Illegal, "", "", {}};
      facts->push_back(*f);
    }
  } catch (const std::exception& e) {
    fail(r, is_rejection(e) ? Status::Rejected : Status::Crash,
         "building v" + std::to_string(p.inputs.size() + op), e);
    return r;
  }
  try {
    std::vector<Array> outputs;
    for (int o : p.outputs) outputs.push_back(values.at(static_cast<size_t>(o)));
    values.clear();  // intermediates that are not outputs need not be kept
    kiln::eval(outputs);
    for (const auto& a : outputs) r.outputs.push_back(snapshot(a));
  } catch (const std::exception& e) {
    fail(r, Status::Crash, "evaluating", e);
  }
  return r;
}

// ---- comparing one element -------------------------------------------------------------

double smallest_normal(DType t) {
  switch (real_dtype(t)) {
    case DType::Float16:
      return 0x1p-14;
    case DType::BFloat16:
    case DType::Float32:
      return std::numeric_limits<float>::min();
    default:
      return std::numeric_limits<double>::min();
  }
}

// One real component of two paths' results; `size` is the element's largest finite
// component on either path, for the relative part of a noisy value's tolerance.
template <class R>
bool agree(R x, R y, const Facts& f, double size, bool bitwise) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (bitwise) return std::memcmp(&x, &y, sizeof(R)) == 0;
  if (x == y) return true;
  if (!f.noisy || std::isinf(x) || std::isinf(y)) return false;
  // Both results may be off by the bound, in opposite directions; subnormals may differ in
  // absolute terms only.
  double tolerance =
      2 * (f.abs_err + f.rel_err * size * std::sqrt(2.0)) + 64 * smallest_normal(f.dtype);
  return std::abs(x - y) <= tolerance;
}

double finite_size(std::initializer_list<double> parts) {
  double m = 0;
  for (double v : parts)
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  return m;
}

template <class T>
T element(const Snapshot& s, size_t i) {
  T v;
  std::memcpy(&v, s.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  os.precision(17);
  if constexpr (std::is_same_v<T, bool>)
    os << (v ? "true" : "false");
  else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    os << static_cast<float>(v);
  else
    os << v;
  return os.str();
}

std::string where(const Shape& shape, size_t flat) {
  std::string out = "]";
  for (size_t k = shape.size(); k-- > 0;) {
    auto d = static_cast<size_t>(shape[k]);
    out = (k ? ", " : "") + std::to_string(flat % d) + out;
    flat /= d;
  }
  return "[" + out;
}

// A float sum or mean element's largest distance from the exact result, per component:
// gamma_{n-1} * sum |x_i| of its actual terms (any summation order), plus its terms' errors;
// a mean's division rounds once more.
double sum_err(const Facts& f, const RefValue& r, size_t i, bool mean) {
  double u = unit_roundoff(f.dtype), n = static_cast<double>(r.terms);
  double e = f.sum_input_err + gamma(n - 1, u) * static_cast<double>(r.magnitude.at(i));
  if (!mean) return e;
  return e / std::max(n, 1.0) + u * static_cast<double>(std::abs(r.v.at(i)));
}

// Per element of a sum, how far two results may be apart (empty for other values).
using SumBound = std::vector<double>;

template <class R>
bool within(R x, R y, double tolerance) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (x == y) return true;
  if (std::isinf(x) || std::isinf(y)) return false;
  return std::abs(x - y) <= tolerance + 64 * std::numeric_limits<float>::min();
}

// The index of the first element on which a and b disagree, and both values, or "".
template <class T>
std::string first_difference(const Snapshot& a, const Snapshot& b, const Facts& f, bool bitwise,
                             const SumBound& sums) {
  size_t n = a.bytes.size() / sizeof(T);
  bool by_sum = f.noisy && !bitwise && !sums.empty();
  for (size_t i = 0; i < n; ++i) {
    T x = element<T>(a, i), y = element<T>(b, i);
    bool same;
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      float u = static_cast<float>(x), v = static_cast<float>(y);
      same = by_sum ? within(u, v, sums[i]) : agree(u, v, f, finite_size({u, v}), bitwise);
    } else if constexpr (std::is_floating_point_v<T>) {
      same = by_sum ? within(x, y, sums[i]) : agree(x, y, f, finite_size({x, y}), bitwise);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      double size = finite_size({x.real(), x.imag(), y.real(), y.imag()});
      same = by_sum ? within(x.real(), y.real(), sums[i]) && within(x.imag(), y.imag(), sums[i])
                    : agree(x.real(), y.real(), f, size, bitwise) &&
                          agree(x.imag(), y.imag(), f, size, bitwise);
    } else {
      same = x == y;
    }
    if (!same) return "at " + where(a.shape, i) + ": " + show(x) + " vs " + show(y);
  }
  return "";
}

std::string compare_output(const Snapshot& a, const Snapshot& b, const Facts& f, bool bitwise,
                           const SumBound& sums) {
  if (a.dtype != b.dtype)
    return std::string("dtype ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype);
  if (a.shape != b.shape) return "shape " + shape_str(a.shape) + " vs " + shape_str(b.shape);
  if (a.dtype != f.dtype || a.shape != f.shape)
    return "the generator expected " + std::string(dtype_name(f.dtype)) + " " + shape_str(f.shape);
  std::string d = visit_dtype(
      a.dtype, [&](auto z) { return first_difference<decltype(z)>(a, b, f, bitwise, sums); });
  if (d.empty() || !f.noisy) return d;
  if (bitwise) return d + " (bit for bit)";
  if (!sums.empty()) return d + " (a sum: tolerance gamma_{n-1} * sum |x_i| of its terms)";
  std::ostringstream os;
  os << d << " (noisy: tolerance " << f.abs_err << " + " << f.rel_err << " * |x|)";
  return os.str();
}

// Each output's sum bounds, from the scalar reference's terms (none without one). Two paths
// may each be off by the bound, in opposite directions; the reference is the exact sum
// rounded once (within u * |sum|).
std::vector<SumBound> sum_bounds(const Program& p, const std::vector<Facts>& facts,
                                 const std::optional<std::vector<RefValue>>& model,
                                 bool against_model) {
  std::vector<SumBound> out(p.outputs.size());
  if (!model) return out;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    auto v = static_cast<size_t>(p.outputs[k]);
    const RefValue& r = model->at(v);
    if (r.magnitude.empty() || v < p.inputs.size()) continue;
    const Facts& f = facts.at(v);
    bool mean = p.ops.at(v - p.inputs.size()).fn == static_cast<uint8_t>(ReduceFn::Mean);
    for (size_t i = 0; i < r.v.size(); ++i) {
      double e = sum_err(f, r, i, mean);
      double own = unit_roundoff(f.dtype) * static_cast<double>(std::abs(r.v[i]));
      double bound = against_model ? e + own : 2 * e;
      // A complex term with a NaN part makes the bound NaN, which bounds nothing: the other
      // component is then unbounded too, rather than held to a tolerance no result meets.
      out[k].push_back(std::isnan(bound) ? std::numeric_limits<double>::infinity() : bound);
    }
  }
  return out;
}

// The reference's values of output k as a snapshot of its dtype.
Snapshot model_snapshot(const RefValue& r) {
  Snapshot s{host(), r.dtype, r.shape, std::vector<unsigned char>(r.v.size() * itemsize(r.dtype))};
  visit_dtype(r.dtype, [&](auto z) {
    using T = decltype(z);
    for (size_t i = 0; i < r.v.size(); ++i) {
      T x;
      if constexpr (std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>)
        x = T(static_cast<typename T::value_type>(r.v[i].real()),
              static_cast<typename T::value_type>(r.v[i].imag()));
      else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
        x = T(static_cast<double>(r.v[i].real()));  // the reference's value is the half's
      else
        x = static_cast<T>(r.v[i].real());
      std::memcpy(s.bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
  });
  return s;
}

// "" when host lazy agrees with the scalar reference; else what differs.
std::string compare_model(const Program& p, const std::vector<Facts>& facts, const PathRun& ref,
                          const std::vector<RefValue>& model, const std::vector<SumBound>& sums) {
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    auto v = static_cast<size_t>(p.outputs[k]);
    std::string d =
        compare_output(model_snapshot(model.at(v)), ref.outputs.at(k), facts.at(v), false, sums[k]);
    if (!d.empty())
      return "scalar reference vs host lazy: output v" + std::to_string(v) + " differs " + d;
  }
  return "";
}

// "" when `got` agrees with the reference run; else what differs.
std::string compare_runs(const Program& p, const std::vector<Facts>& facts, const PathRun& ref,
                         const Path& ref_path, const PathRun& got, const Path& got_path,
                         const std::vector<SumBound>& sums) {
  std::string pair = std::string(ref_path.name) + " vs " + got_path.name + ": ";
  if (ref.status == Status::Rejected || got.status == Status::Rejected) {
    if (ref.status == got.status && ref.error_type == got.error_type) return "";
    return pair + (ref.status == Status::Rejected ? ref.what : std::string("no error")) + " vs " +
           (got.status == Status::Rejected ? got.what : std::string("no error"));
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    int v = p.outputs[i];
    if (!(got.outputs.at(i).device == got_path.device))
      return pair + "output v" + std::to_string(v) + " is on " + got.outputs[i].device.str();
    std::string d = compare_output(ref.outputs.at(i), got.outputs.at(i),
                                   facts.at(static_cast<size_t>(v)), got_path.bitwise, sums.at(i));
    if (!d.empty()) return pair + "output v" + std::to_string(v) + " differs " + d;
  }
  return "";
}

// Host lazy and host eager agree bit for bit, except where a float16 or bfloat16 value is
// computed: a fused kernel carries it in float32 where eager execution rounds it after every
// op (README, dtypes), so there the facts' tolerances apply, as between host and GPU.
std::vector<Path> other_paths(const CheckOptions& o, bool halves) {
  std::vector<Path> paths = {{"host eager", host(), Mode::Eager, o.host_bitwise && !halves}};
  if (o.gpu && cuda_available()) {
    paths.push_back({"gpu lazy", cuda(), Mode::Lazy});
    paths.push_back({"gpu eager", cuda(), Mode::Eager});
  }
  return paths;
}

CheckResult check_paths(const Program& p, const CheckOptions& o) {
  const Path reference{"host lazy", host(), Mode::Lazy};
  std::vector<Facts> facts;
  PathRun ref = run_path(p, reference, &facts);
  if (ref.status == Status::Illegal) return {Verdict::Illegal, ""};
  if (ref.status == Status::Mismatch) return {Verdict::Mismatch, "host lazy: " + ref.what};
  if (ref.status == Status::Crash) return {Verdict::Crash, std::string("host lazy: ") + ref.what};
  std::optional<std::vector<RefValue>> model;
  if (ref.status == Status::Ok && (o.reference || o.gpu)) model = fuzz::reference(p);
  std::vector<SumBound> sums = sum_bounds(p, facts, model, false);
  if (o.reference && model) {
    std::string d = compare_model(p, facts, ref, *model, sum_bounds(p, facts, model, true));
    if (!d.empty()) return {Verdict::Mismatch, d};
  }
  bool halves =
      std::any_of(facts.begin(), facts.end(), [](const Facts& f) { return is_half(f.dtype); });
  for (const Path& path : other_paths(o, halves)) {
    PathRun got = run_path(p, path, nullptr);
    if (got.status == Status::Crash)
      return {Verdict::Crash, std::string(path.name) + ": " + got.what};
    std::string d = compare_runs(p, facts, ref, reference, got, path, sums);
    if (!d.empty()) return {Verdict::Mismatch, d};
  }
  return {ref.status == Status::Rejected ? Verdict::Rejected : Verdict::Ok, ""};
}

}  // namespace

CheckResult check(const Program& p, const CheckOptions& options) {
  try {
    return check_paths(p, options);
  } catch (const std::exception& e) {  // outside any path: reading results, a bad program
    return {Verdict::Crash, std::string("checking: ") + e.what()};
  } catch (...) {
    return {Verdict::Crash, "checking: an exception that is not a std::exception"};
  }
}

}  // namespace kiln::fuzz
