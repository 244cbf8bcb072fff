// NumPy's array repr for kiln arrays: "array([[1, 2],\n       [3, 4]])".
//
// The layout follows np.array2string with its default options (legacy=False): at most 75
// columns, arrays of more than 1000 elements summarised to 3 items at each edge of every long
// axis, columns aligned over the printed elements only, and floats written as the shortest
// string that reads back to the same value, with at most 8 digits after the point (NumPy's
// floatmode "maxprec"), in scientific notation when the magnitudes call for it.
//
// The work happens in three steps:
//   1. choose the printed elements (all of them, or the edges of a summarised array);
//   2. decide a format from those elements (column width, positional or scientific floats);
//   3. write the nested brackets, wrapping rows that are wider than the line.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {
namespace {

// np.set_printoptions defaults.
constexpr size_t kLineWidth = 75;
constexpr int64_t kThreshold = 1000;  // more elements than this are summarised
constexpr int64_t kEdgeItems = 3;     // items kept at each end of a summarised axis
constexpr int kPrecision = 8;         // most digits after the point
const std::string kSeparator = ", ";
const std::string kSummary = "...";

// Formats one element, given its position in the row-major data.
using ElementFormat = std::function<std::string(int64_t flat)>;

// ---- step 1: the printed elements ---------------------------------------------------------

// Positions along an axis of length n that are printed.
std::vector<int64_t> printed_positions(int64_t n, bool summarise) {
  std::vector<int64_t> out;
  if (summarise && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    for (int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
  }
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

// Row-major offsets of every printed element.
std::vector<int64_t> printed_offsets(const Shape& shape, bool summarise) {
  std::vector<int64_t> strides = row_major_strides(shape);
  std::vector<int64_t> offsets{0};
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    std::vector<int64_t> next;
    for (int64_t base : offsets)
      for (int64_t i : printed_positions(shape[axis], summarise))
        next.push_back(base + i * strides[axis]);
    offsets = std::move(next);
  }
  return offsets;
}

// ---- step 2: formats of one element ---------------------------------------------------------

std::string pad_left(std::string_view s, size_t width) {
  std::string out(width > s.size() ? width - s.size() : 0, ' ');
  return out.append(s);
}

std::string pad_right(std::string_view s, size_t width) {
  std::string out(s);
  if (width > out.size()) out.append(width - out.size(), ' ');
  return out;
}

void trim_trailing_zeros(std::string& digits) {
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
}

// A finite float split into the pieces that NumPy aligns: the sign and digits before the point,
// the digits after it (no trailing zeros), and for scientific notation the exponent ("+05").
struct FloatPieces {
  std::string whole;
  std::string fraction;
  std::string exponent;
};

template <class H>
inline constexpr bool is_half_type = std::is_same_v<H, float16> || std::is_same_v<H, bfloat16>;

// The shortest string that reads back as v in type H: std::to_chars does this for float and
// double; a float16 or bfloat16 value (held in a float) takes the fewest significant digits
// whose correctly rounded decimal reads back, rounded to H, as v (NumPy's float16 repr: 0.1
// in float16 prints 0.1, not its float32 digits 0.099975586), written in `style` as the
// shortest string of that decimal.
template <class H, class T>
std::string shortest_string(T v, std::chars_format style) {
  char buf[512];  // fixed notation of a double can need 309 digits before the point
  if constexpr (is_half_type<H>) {
    for (int precision = 0; precision < 9; ++precision) {
      std::string sci(
          buf,
          std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, precision).ptr);
      double decimal = std::strtod(sci.c_str(), nullptr);
      if (static_cast<float>(H(decimal)) == v)
        return std::string(buf, std::to_chars(buf, buf + sizeof buf, decimal, style).ptr);
    }
  }
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, style).ptr);
}

// The digits of v: the shortest string that reads back as v in H (float32 values get float32
// digits), or, when that needs more than kPrecision digits after the point, v correctly
// rounded to kPrecision digits.
template <class H, class T>
std::string shortest_digits(T v, std::chars_format style) {
  char buf[512];
  std::string shortest = shortest_string<H>(v, style);
  size_t dot = shortest.find('.');
  size_t end = std::min(shortest.find('e'), shortest.size());
  if (dot == std::string::npos || end - dot - 1 <= static_cast<size_t>(kPrecision)) return shortest;
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, style, kPrecision).ptr);
}

// v correctly rounded to exactly `digits` digits after the point. Where these are more than
// the shortest digits, they continue with v's exact decimal expansion, not with zeros
// (float32 0.6889215 with 8 digits is "6.88921511e-01" rounded: "6.8892151e-01").
template <class T>
std::string exact_digits(T v, std::chars_format style, int digits) {
  char buf[512];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, style, digits).ptr);
}

// Splits "-1.25e+05" / "-1.25" into its pieces; trailing zeros stay, for the caller to judge.
template <class T>
FloatPieces split_float(std::string s, T v, bool plus_sign) {
  FloatPieces p;
  if (size_t e = s.find('e'); e != std::string::npos) {
    p.exponent = s.substr(e + 1);
    s.resize(e);
  }
  size_t dot = s.find('.');
  p.whole = s.substr(0, dot);
  if (dot != std::string::npos) p.fraction = s.substr(dot + 1);
  if (plus_sign && !std::signbit(v)) p.whole = std::string(1, '+').append(p.whole);
  return p;
}

// The shortest pieces of v (at most kPrecision digits after the point, no trailing zeros).
template <class H, class T>
FloatPieces shortest_pieces(T v, bool scientific, bool plus_sign) {
  auto style = scientific ? std::chars_format::scientific : std::chars_format::fixed;
  FloatPieces p = split_float(shortest_digits<H>(v, style), v, plus_sign);
  trim_trailing_zeros(p.fraction);
  return p;
}

// ---- floats: the decision pass and the element writer ------------------------------------

// The format of a column of real floats, decided from all printed values (NumPy's
// FloatingFormat with floatmode "maxprec"). The imaginary parts of complex numbers use a
// second one that always writes the sign. H is the dtype's type, T the one values are held in
// (float for float16 and bfloat16, whose digits are H's).
template <class T, class H = T>
class FloatFormat {
 public:
  FloatFormat(const std::vector<T>& values, bool plus_sign) : plus_sign_(plus_sign) {
    std::vector<T> finite;
    bool any_negative_inf = false;
    for (T v : values) {
      if (std::isfinite(v)) finite.push_back(v);
      if (std::isinf(v) && v < 0) any_negative_inf = true;
    }
    scientific_ = needs_scientific(finite);
    measure(finite);
    if (finite.size() != values.size()) widen_for_nonfinite(any_negative_inf);
  }

  std::string operator()(T v) const {
    if (!std::isfinite(v)) return pad_left(nonfinite_text(v), width());
    if (!scientific_) {
      // Positional: the shortest digits, the point aligned, spaces after short fractions.
      FloatPieces p = shortest_pieces<H>(v, false, plus_sign_);
      return pad_left(p.whole, whole_width_) + "." + pad_right(p.fraction, fraction_width_);
    }
    // Scientific: every element gets the longest fraction of the column.
    const int digits = static_cast<int>(fraction_width_);
    FloatPieces p =
        split_float(exact_digits(v, std::chars_format::scientific, digits), v, plus_sign_);
    return pad_left(p.whole, whole_width_) + "." + p.fraction + "e" + p.exponent[0] +
           pad_left_zeros(p.exponent.substr(1), exponent_digits_);
  }

  // Characters every element takes.
  size_t width() const {
    size_t exp = scientific_ ? 2 + exponent_digits_ : 0;  // "e+" and the digits
    return whole_width_ + 1 + fraction_width_ + exp;
  }

 private:
  // Scientific notation when the nonzero magnitudes span more than 1e3 or reach past
  // [1e-4, 1e8). The ratio is taken in T, as NumPy does; the bounds compare as doubles.
  static bool needs_scientific(const std::vector<T>& finite) {
    T lo = 0, hi = 0;
    bool any = false;
    for (T v : finite) {
      if (v == 0) continue;
      T m = std::abs(v);
      lo = any ? std::min(lo, m) : m;
      hi = any ? std::max(hi, m) : m;
      any = true;
    }
    if (!any) return false;
    return static_cast<double>(hi) >= 1e8 || static_cast<double>(lo) < 1e-4 ||
           in_h(hi / lo) > static_cast<T>(1000);
  }
  static T in_h(T v) {  // v rounded to H, as NumPy computes the ratio in the array's type
    if constexpr (is_half_type<H>)
      return static_cast<float>(H(v));
    else
      return v;
  }

  // Column widths from a first pass over the finite values.
  void measure(const std::vector<T>& finite) {
    for (T v : finite) {
      FloatPieces p = shortest_pieces<H>(v, scientific_, plus_sign_);
      whole_width_ = std::max(whole_width_, p.whole.size());
      fraction_width_ = std::max(fraction_width_, p.fraction.size());
      if (scientific_) exponent_digits_ = std::max(exponent_digits_, p.exponent.size() - 1);
    }
  }

  // nan and inf are right-aligned in the column, which may have to grow to hold them.
  void widen_for_nonfinite(bool any_negative_inf) {
    size_t after_whole = width() - whole_width_;
    size_t inf_len = 3 + (plus_sign_ || any_negative_inf ? 1 : 0);
    size_t nan_len = 3;
    for (size_t len : {nan_len, inf_len})
      if (len > after_whole) whole_width_ = std::max(whole_width_, len - after_whole);
  }

  std::string nonfinite_text(T v) const {
    if (std::isnan(v)) return plus_sign_ ? "+nan" : "nan";
    if (v < 0) return "-inf";
    return plus_sign_ ? "+inf" : "inf";
  }

  static std::string pad_left_zeros(const std::string& digits, size_t width) {
    return std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
  }

  bool plus_sign_;
  bool scientific_ = false;
  size_t whole_width_ = 0;     // sign and digits before the point
  size_t fraction_width_ = 0;  // digits after the point (all of them in scientific notation)
  size_t exponent_digits_ = 0;
};

// Complex numbers: a column for the real parts and one for the imaginary parts, which always
// carry a sign; the "j" goes right after the digits, before any padding ("1. +2.j ").
template <class T>
class ComplexFormat {
 public:
  explicit ComplexFormat(const std::vector<std::complex<T>>& values)
      : real_(parts(values, false), false), imag_(parts(values, true), true) {}

  std::string operator()(std::complex<T> v) const {
    std::string im = imag_(v.imag());
    size_t digits_end = im.find_last_not_of(' ') + 1;
    std::string out = real_(v.real());
    out.append(im, 0, digits_end).append(1, 'j').append(im, digits_end);
    return out;
  }

 private:
  static std::vector<T> parts(const std::vector<std::complex<T>>& values, bool imaginary) {
    std::vector<T> out;
    out.reserve(values.size());
    for (const auto& v : values) out.push_back(imaginary ? v.imag() : v.real());
    return out;
  }

  FloatFormat<T> real_, imag_;
};

// Integers are right-aligned to the widest printed value.
template <class T>
class IntegerFormat {
 public:
  explicit IntegerFormat(const std::vector<T>& values) {
    for (T v : values) width_ = std::max(width_, std::to_string(v).size());
  }
  std::string operator()(T v) const { return pad_left(std::to_string(v), width_); }

 private:
  size_t width_ = 0;
};

// " True" lines up with "False", except in a 0-d array, which prints alone.
class BoolFormat {
 public:
  explicit BoolFormat(bool zero_dim) : true_text_(zero_dim ? "True" : " True") {}
  std::string operator()(bool v) const { return v ? true_text_ : "False"; }

 private:
  std::string true_text_;
};

template <class T>
struct is_complex_type : std::false_type {};
template <class T>
struct is_complex_type<std::complex<T>> : std::true_type {};

// The format of every element of data, decided from the printed ones.
ElementFormat make_element_format(const void* data, DType dtype, const Shape& shape,
                                  bool summarise) {
  return visit_dtype(dtype, [&](auto zero) -> ElementFormat {
    using T = decltype(zero);
    const T* p = static_cast<const T*>(data);
    std::vector<T> printed;
    for (int64_t off : printed_offsets(shape, summarise)) printed.push_back(p[off]);
    if constexpr (std::is_same_v<T, bool>) {
      return [p, f = BoolFormat(shape.empty())](int64_t i) { return f(p[i]); };
    } else if constexpr (std::is_integral_v<T>) {
      return [p, f = IntegerFormat<T>(printed)](int64_t i) { return f(p[i]); };
    } else if constexpr (is_complex_type<T>::value) {
      return [p, f = ComplexFormat<typename T::value_type>(printed)](int64_t i) { return f(p[i]); };
    } else if constexpr (is_half_type<T>) {
      std::vector<float> values;
      for (T v : printed) values.push_back(static_cast<float>(v));
      return [p, f = FloatFormat<float, T>(values, false)](int64_t i) {
        return f(static_cast<float>(p[i]));
      };
    } else {
      return [p, f = FloatFormat<T>(printed, false)](int64_t i) { return f(p[i]); };
    }
  });
}

// ---- step 3: nested brackets and line wrapping ----------------------------------------------

void rstrip(std::string& s) { s.erase(s.find_last_not_of(' ') + 1); }

// Appends word to the current line, first moving to a new line (starting with indent) when the
// word would pass width; a line holding only the indent is never wrapped, as that cannot help.
void extend_line(std::string& text, std::string& line, const std::string& word, size_t width,
                 const std::string& indent) {
  if (line.size() + word.size() > width && line.size() > indent.size()) {
    rstrip(line);
    text += line + "\n";
    line = indent;
  }
  line += word;
}

class NestedWriter {
 public:
  NestedWriter(const Shape& shape, bool summarise, ElementFormat format)
      : shape_(shape),
        strides_(row_major_strides(shape)),
        summarise_(summarise),
        format_(std::move(format)) {}

  // The sub-array from axis on, starting at offset. Continuation lines start with indent, and
  // no line passes width (elements are never broken, so a single wide one may).
  std::string write(size_t axis, int64_t offset, const std::string& indent, size_t width) const {
    if (axis == shape_.size()) return format_(offset);
    // Inner levels sit one column further right, behind this level's "[", and leave room for
    // this level's "]".
    const std::string inner_indent = indent + " ";
    const size_t inner_width = width - 1;
    const int64_t n = shape_[axis];
    const bool gap = summarise_ && n > 2 * kEdgeItems;
    auto child = [&](int64_t i) {
      return write(axis + 1, offset + i * strides_[axis], inner_indent, inner_width);
    };

    std::string text;
    if (axis + 1 == shape_.size()) {
      // A row: elements separated by ", ", wrapped to the width left for "," or "]".
      const size_t elem_width = width - 1;
      std::string line = indent;
      for (int64_t i = 0; i < n; ++i) {
        if (gap && i == kEdgeItems) {
          extend_line(text, line, kSummary, elem_width, indent);
          line += kSeparator;
          i = n - kEdgeItems;
        }
        extend_line(text, line, child(i), elem_width, indent);
        if (i + 1 < n) line += kSeparator;
      }
      text += line;
    } else {
      // Sub-arrays one per line, with an extra blank line per level below the rows.
      const std::string line_end = std::string(1, ',').append(shape_.size() - axis - 1, '\n');
      for (int64_t i = 0; i < n; ++i) {
        if (gap && i == kEdgeItems) {
          text += indent + kSummary + line_end;
          i = n - kEdgeItems;
        }
        text += indent + child(i);
        if (i + 1 < n) text += line_end;
      }
    }
    std::string bracketed(1, '[');
    bracketed.append(text, indent.size()).append(1, ']');
    return bracketed;
  }

 private:
  Shape shape_;
  std::vector<int64_t> strides_;
  bool summarise_;
  ElementFormat format_;
};

// ---- the repr ---------------------------------------------------------------------------

// NumPy leaves out the dtype of non-empty arrays of its default types.
bool dtype_is_implied(DType t) {
  return t == DType::Bool || t == DType::Int64 || t == DType::Float64 || t == DType::Complex128;
}

// Python's repr of the shape tuple: "(0,)", "(2, 0)".
std::string shape_tuple(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// The text between "array(" and the closing ")" or ", dtype=...": "[[1, 2],\n       [3, 4]]".
// prefix_len is the length of "array(", which continuation lines are indented past; width is
// the line width less what follows the data.
std::string data_text(const Array& host, size_t prefix_len, size_t width) {
  const Shape& shape = host.shape();
  if (host.size() == 0) return shape.size() == 1 ? "[]" : "[], shape=" + shape_tuple(shape);
  const bool summarise = host.size() > kThreshold;
  NestedWriter writer(shape, summarise,
                      make_element_format(host.data(), host.dtype(), shape, summarise));
  return writer.write(0, 0, std::string(prefix_len + 1, ' '), width);
}

}  // namespace

std::string repr(const Array& a) {
  const Array host = a.get();
  const std::string prefix = "array(";
  const bool skip_dtype = dtype_is_implied(host.dtype()) && host.size() > 0;
  const std::string after_data = skip_dtype ? ")" : ",";
  std::string text =
      prefix + data_text(host, prefix.size(), kLineWidth - after_data.size()) + after_data;
  if (skip_dtype) return text;

  // The dtype goes on a line of its own when it would pass the line width.
  const std::string dtype_text = std::string("dtype=") + dtype_name(host.dtype()) + ")";
  const size_t last_line = text.size() - (text.rfind('\n') + 1);  // npos + 1 == 0
  const bool own_line = last_line + 1 + dtype_text.size() > kLineWidth;
  if (own_line) {
    text.append(1, '\n').append(prefix.size(), ' ');
  } else {
    text.append(1, ' ');
  }
  return text.append(dtype_text);
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << repr(a); }

}  // namespace kiln
