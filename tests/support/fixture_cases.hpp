// The NumPy fixture files written by tests/data/make_*_fixtures.py: a "numpy VERSION" line,
// then cases of the form
//   case NAME / call FUNC key=value ... / in DTYPE NDIM DIMS... VALUES... / out ... / error / end
// Values are numbers, or "re,im" for complex ones. V is double, or std::complex<double> where a
// file holds complex values.
#pragma once
#include <doctest/doctest.h>

#include <complex>
#include <fstream>
#include <kiln/kiln.hpp>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fixtures {

template <class V>
struct Values {
  kiln::DType dtype = kiln::DType::Float64;
  kiln::Shape shape;
  std::vector<V> v;
};

template <class V>
struct Case {
  std::string name, func;
  std::map<std::string, std::string> kw;
  std::vector<Values<V>> in, out;
  bool error = false;
};

inline kiln::DType parse_dtype(const std::string& s) {
  for (kiln::DType t : kiln::kAllDTypes)
    if (s == kiln::dtype_name(t)) return t;
  FAIL("unknown dtype " << s);
  return kiln::DType::Float64;
}

template <class V>
V parse_value(const std::string& tok) {
  if constexpr (std::is_same_v<V, std::complex<double>>) {
    auto comma = tok.find(',');
    if (comma == std::string::npos) return {std::stod(tok), 0};
    return {std::stod(tok.substr(0, comma)), std::stod(tok.substr(comma + 1))};
  } else {
    return std::stod(tok);
  }
}

template <class V>
Values<V> parse_values(std::istringstream& is) {
  Values<V> r;
  std::string dt, tok;
  int nd = 0;
  is >> dt >> nd;
  r.dtype = parse_dtype(dt);
  r.shape.resize(nd);
  for (auto& d : r.shape) is >> d;
  while (is >> tok) r.v.push_back(parse_value<V>(tok));
  return r;
}

// Every case of `path`; `script` is what writes it, named when the file is missing.
template <class V>
std::vector<Case<V>> read_cases(const std::string& path, const std::string& script) {
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "run " << script);
  std::vector<Case<V>> out;
  std::string line;
  std::getline(f, line);
  REQUIRE(line.rfind("numpy ", 0) == 0);
  Case<V> c;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string tag;
    is >> tag;
    if (tag == "case") {
      c = Case<V>{};
      is >> c.name;
    } else if (tag == "call") {
      is >> c.func;
      std::string kv;
      while (is >> kv) {
        auto eq = kv.find('=');
        c.kw[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    } else if (tag == "in") {
      c.in.push_back(parse_values<V>(is));
    } else if (tag == "out") {
      c.out.push_back(parse_values<V>(is));
    } else if (tag == "error") {
      c.error = true;
    } else if (tag == "end") {
      out.push_back(c);
    }
  }
  return out;
}

// Keyword k of a case's call; absent, or written "none" (Python's None), gives nullopt.
template <class V>
std::optional<std::string> kw(const Case<V>& c, const std::string& k) {
  auto it = c.kw.find(k);
  if (it == c.kw.end() || it->second == "none") return std::nullopt;
  return it->second;
}

// Keyword k as a list of axes, "0,-1"; absent or "none" is NumPy's axis=None: no axes given.
template <class V>
kiln::AxesArg axes(const Case<V>& c, const std::string& k = "axes") {
  auto s = kw(c, k);
  if (!s) return {};
  kiln::Axes r;
  std::istringstream is(*s);
  std::string t;
  while (std::getline(is, t, ',')) r.push_back(std::stoi(t));
  return r;
}

// The values as an array of their dtype on d (real dtypes take the real parts).
template <class V>
kiln::Array make_array(const Values<V>& x, kiln::Device d) {
  int64_t n = static_cast<int64_t>(x.v.size());
  return kiln::visit_dtype(x.dtype, [&](auto z) {
    using T = decltype(z);
    std::unique_ptr<T[]> buf(new T[n ? n : 1]);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>)
        buf[i] = T(x.v[i]);
      else
        buf[i] = static_cast<T>(std::real(x.v[i]));
    }
    return kiln::asarray(buf.get(), x.dtype, x.shape, d);
  });
}

// Runs every case on the host: an error case must throw E by the time its outputs are
// evaluated; any other case goes to check(case, outputs), and an exception it meets fails that
// case with its message. run(case) builds the outputs. Returns the number of error cases.
template <class E, class V, class Run, class Check>
int check_on_host(const std::vector<Case<V>>& cases, const Run& run, const Check& check) {
  int errors = 0;
  for (const Case<V>& c : cases) {
    INFO("case " << c.name);
    if (c.error) {
      ++errors;
      CHECK_THROWS_AS(
          {
            auto r = run(c);
            for (auto& a : r) a.eval();
          },
          E);
      continue;
    }
    try {
      check(c, run(c));
    } catch (const std::exception& e) {
      FAIL_CHECK("threw " << e.what());
    }
  }
  return errors;
}

}  // namespace fixtures
