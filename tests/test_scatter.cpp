// Scatter updates (x.at(index arrays).set / add / multiply / min / max, bincount) against
// NumPy's rules worked out by hand: the updates apply in order, a repeated index accumulates
// (add.at) or keeps its last value (x[i] = v), a negative index counts from the end. Every
// dtype that scatters, with the value given as a scalar, a 0-d array, one element of an array
// broadcast, or one value per update; the index as int64, int32 or uint8. Also what the plan
// reads: one value for every update is read once, and a 1-d array's indices in place, their
// range checked by the scatter step. The GPU case runs the same updates on a GPU and wants the
// host's bits and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::Device;
using kiln::DType;
using kiln::Slice;

enum class Op { Set, Add, Multiply, Min, Max };
constexpr Op kOps[] = {Op::Set, Op::Add, Op::Multiply, Op::Min, Op::Max};
const char* name(Op op) {
  constexpr const char* kNames[] = {"set", "add", "multiply", "min", "max"};
  return kNames[static_cast<int>(op)];
}

constexpr DType kDTypes[] = {DType::Bool,    DType::Int8,      DType::Int16,     DType::Int32,
                             DType::Int64,   DType::UInt8,     DType::UInt16,    DType::UInt32,
                             DType::UInt64,  DType::Float16,   DType::BFloat16,  DType::Float32,
                             DType::Float64, DType::Complex64, DType::Complex128};

// NumPy's ufunc.at (and x[i] = v), applied in order to x's values in double: every value here is
// a small integer that each dtype holds exactly. On bool, add is logical or and multiply logical
// and, which is the double's result read as != 0.
std::vector<double> expected(Op op, std::vector<double> x, const std::vector<int64_t>& idx,
                             const std::vector<double>& v, bool is_bool) {
  const auto n = static_cast<int64_t>(x.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    double& e = x[static_cast<size_t>(idx[k] < 0 ? idx[k] + n : idx[k])];
    const double u = v[v.size() == 1 ? 0 : k];
    e = op == Op::Set        ? u
        : op == Op::Add      ? e + u
        : op == Op::Multiply ? e * u
        : op == Op::Min      ? std::min(e, u)
                             : std::max(e, u);
    if (is_bool) e = e != 0;
  }
  return x;
}

Array apply(Op op, const Array& x, const Array& idx, const kiln::Operand& v) {
  auto at = x.at(idx);
  switch (op) {
    case Op::Set:
      return at.set(v);
    case Op::Add:
      return at.add(v);
    case Op::Multiply:
      return at.multiply(v);
    case Op::Min:
      return at.min(v);
    default:
      return at.max(v);
  }
}

std::vector<double> values_of(const Array& a) {
  const Array h = a.device().is_host() ? a : a.get();
  return (kiln::is_complex(h.dtype()) ? kiln::real(h) : h)
      .astype(DType::Float64)
      .to_vector<double>();
}

// Results by what they are, for the GPU case to compare with the host's.
using Results = std::map<std::string, Array>;

// The value forms of one number v in dtype t on device d: a scalar (of the kind NumPy's
// same_kind rule lets into t), a 0-d array, one element of an array read through a one-element
// slice (broadcast to the updates), and a 0-d value the plan computes.
std::vector<std::pair<std::string, kiln::Operand>> forms(double v, DType t, Device d) {
  Array row = kiln::asarray(std::vector<double>{9, 8, v, 7}).astype(t).to(d).eval();
  Array zero_d = kiln::full({}, v, t, d);
  const kiln::Scalar scalar = t == DType::Bool      ? kiln::Scalar(v != 0)
                              : kiln::is_integer(t) ? kiln::Scalar(static_cast<int64_t>(v))
                                                    : kiln::Scalar(v);
  std::vector<std::pair<std::string, kiln::Operand>> r = {
      {"scalar", scalar},
      {"0-d array", zero_d},
      {"element 2 of an array", row.index({Slice(2, 3)})},
  };
  if (t != DType::Bool)  // a 0-d value computed in the plan
    r.push_back({"0-d sum", kiln::sum(kiln::full({2}, v, t, d)) - kiln::full({}, v, t, d)});
  return r;
}

// Every dtype, operation and value form on device d, against expected(); each result is also
// computed eagerly, which must give the same bits.
Results check_small_updates(Device d) {
  Results results;
  const std::vector<double> x0 = {0, 1, 2, 3, 4, 5};
  const std::vector<int64_t> idx = {1, -1, 1, 4, 1};
  const Array idx64 = kiln::asarray(idx).to(d);
  // NumPy's indices need not be int64; uint8 ones cannot be negative.
  const Array idx32 = idx64.astype(DType::Int32);
  const Array idx8 = kiln::asarray(std::vector<int64_t>{1, 5, 1, 4, 1}).astype(DType::UInt8).to(d);
  for (DType t : kDTypes) {
    const bool is_bool = t == DType::Bool;
    const Array x = kiln::asarray(x0).astype(t).to(d).eval();
    const std::vector<double> xs = values_of(x);
    for (Op op : kOps) {
      if (kiln::is_complex(t) && (op == Op::Min || op == Op::Max)) continue;  // refused
      // A GPU has no 16-byte atomic update (the GPU refuses it, saying so).
      if (!d.is_host() && t == DType::Complex128 && op == Op::Multiply) continue;
      const std::string what = std::string(kiln::dtype_name(t)) + " " + name(op);
      const double v = op == Op::Min ? 0 : 2;  // a min that changes something
      for (const auto& [form, value] : forms(v, t, d)) {
        for (const Array* i : {&idx64, &idx32, &idx8}) {
          const std::string label =
              what + " of a " + form + " at " + kiln::dtype_name(i->dtype()) + " indices";
          INFO(label);
          Array got = apply(op, x, *i, value);
          CHECK(got.dtype() == t);
          CHECK(values_of(got) == expected(op, xs, idx, {is_bool ? double(v != 0) : v}, is_bool));
          Array eager;
          {
            kiln::EagerScope scope;
            eager = apply(op, x, *i, value);
          }
          CHECK(kiln::array_equal(eager, got));
          results[label] = got;
        }
      }
      // One value per update: the last of a repeated index wins a set.
      const std::vector<double> per = {3, 1, 4, 1, 5};
      Array vals = kiln::asarray(per).astype(t).to(d);
      INFO(what << " of one value per update");
      std::vector<double> want = per;
      if (is_bool)
        for (double& w : want) w = w != 0;
      Array got = apply(op, x, idx64, vals);
      CHECK(values_of(got) == expected(op, xs, idx, want, is_bool));
      results[what + " of one value per update"] = got;
    }
  }
  return results;
}

// Enough updates for the host's paths past 2^20 of them (the set's bitmap of positions met,
// the private counts of integer updates into a small array), with one value and with one per
// update; the answers follow from the index pattern k % m.
Results check_many_updates(Device d) {
  constexpr int64_t kCount = 1200000, kM = 1500;
  const Array k = kiln::arange(int64_t{0}, kCount).to(d);
  const Array idx = (k % kM).eval();
  Results results;
  // One value for every update: each of the first kM positions is 7, the rest keep x's 0.
  Array x = kiln::zeros({2000}, DType::Float64, d);
  Array set_one = x.at(idx).set(7.0);
  std::vector<double> got = values_of(set_one);
  CHECK(std::count(got.begin(), got.begin() + kM, 7.0) == kM);
  CHECK(std::count(got.begin() + kM, got.end(), 0.0) == 2000 - kM);
  results["set of one value"] = set_one;
  // One value per update: position p keeps its last, p + (kCount / kM - 1) * kM.
  Array set_each = x.at(idx).set(k.astype(DType::Float64));
  got = values_of(set_each);
  for (int64_t p : {int64_t{0}, int64_t{1}, kM - 1})
    CHECK(got[static_cast<size_t>(p)] == static_cast<double>(p + (kCount / kM - 1) * kM));
  CHECK(got[static_cast<size_t>(kM)] == 0.0);
  results["set of one value per update"] = set_each;
  // A negative index for every update: the same positions from the end.
  Array set_neg = x.at(idx - 2000).set(7.0);
  CHECK(kiln::array_equal(set_neg, set_one));
  // Integer adds of one value into a small array (per thread, then combined): 3 per update.
  Array added = kiln::zeros({kM}, DType::Int32, d).at(idx).add(3);
  CHECK(kiln::array_equal(added, kiln::full({kM}, 3 * (kCount / kM), DType::Int32, d)));
  results["int32 add of one value"] = added;
  // bincount: kCount / kM in each bin; minlength adds empty bins; bool counts false and true.
  Array counts = kiln::bincount(idx, std::nullopt, kM + 5);
  CHECK(counts.dtype() == DType::Int64);
  std::vector<int64_t> want(kM + 5, kCount / kM);
  std::fill(want.end() - 5, want.end(), 0);
  CHECK(counts.get().to_vector<int64_t>() == want);
  results["bincount"] = counts;
  Array truth = kiln::bincount(idx < 500);
  CHECK(truth.get().to_vector<int64_t>() == std::vector<int64_t>{kCount / 3 * 2, kCount / 3});
  results["bincount of bools"] = truth;
  return results;
}

// An integer as dtype t holds it: modulo 2^bits, read as signed where t is.
double wrapped(uint64_t value, DType t) {
  const int bits = static_cast<int>(kiln::itemsize(t)) * 8;
  const uint64_t u = value & ((uint64_t{1} << bits) - 1);
  const bool is_signed = t == DType::Int8 || t == DType::Int16;
  const bool negative = is_signed && u >> (bits - 1);
  return negative ? static_cast<double>(u) - std::ldexp(1.0, bits) : static_cast<double>(u);
}

// 2^20 updates crowding 7 positions of the 1- and 2-byte dtypes (where a GPU updates integers
// on 32-bit words of their own, adds halves in one instruction, and updates bools by or and
// and), against sums, products, minima and maxima worked out here, wrapped.
Results check_crowded_narrow_updates(Device d) {
  constexpr int64_t kCount = int64_t{1} << 20, kM = 7;
  const Array k = kiln::arange(int64_t{0}, kCount).to(d);
  const Array idx = (k % kM).eval();
  // Sums drift upwards (by 2 an update on average), so they wrap many times; the factors are
  // odd, so no product wraps to 0 and stays there.
  const Array add_values = (k % 11 - 3).eval(), mul_values = (k % 4 * 2 + 1).eval();
  const Array extreme_values = (k * 37 % 251 - 120).eval();
  Results results;
  for (DType t : {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16}) {
    std::vector<uint64_t> sum(kM, 5), product(kM, 5);
    std::vector<double> low(kM, 5), high(kM, 5);
    for (int64_t j = 0; j < kCount; ++j) {
      const auto p = static_cast<size_t>(j % kM);
      sum[p] += static_cast<uint64_t>(j % 11 - 3);  // wraps modulo 2^64, then 2^bits
      product[p] *= static_cast<uint64_t>(j % 4 * 2 + 1);
      const double e = wrapped(static_cast<uint64_t>(j * 37 % 251 - 120), t);
      low[p] = std::min(low[p], e), high[p] = std::max(high[p], e);
    }
    std::vector<double> want_sum, want_product;
    for (int64_t p = 0; p < kM; ++p) {
      want_sum.push_back(wrapped(sum[static_cast<size_t>(p)], t));
      want_product.push_back(wrapped(product[static_cast<size_t>(p)], t));
    }
    const Array x = kiln::full({kM}, 5, t, d);
    const std::string type = kiln::dtype_name(t);
    const std::pair<std::string, Array> got[] = {
        {type + " add", x.at(idx).add(add_values.astype(t))},
        {type + " multiply", x.at(idx).multiply(mul_values.astype(t))},
        {type + " min", x.at(idx).min(extreme_values.astype(t))},
        {type + " max", x.at(idx).max(extreme_values.astype(t))}};
    const std::vector<double>* want[] = {&want_sum, &want_product, &low, &high};
    for (size_t i = 0; i < 4; ++i) {
      INFO(got[i].first);
      CHECK(values_of(got[i].second) == *want[i]);
      results["crowded " + got[i].first] = got[i].second;
    }
  }
  // A few thousand updates into an array past 2^23 elements: a GPU updates those in place, by
  // compare-and-swap on the word each element shares (its words would not fit in L2).
  constexpr int64_t kBig = (int64_t{1} << 23) + 9, kFew = 4096;
  const Array near_end = (kBig - kM + k.index({Slice(0, kFew)}) % kM).eval();
  for (DType t : {DType::Int8, DType::UInt16}) {
    std::vector<uint64_t> sum(kM, 0);
    std::vector<double> high(kM, 0);
    for (int64_t j = 0; j < kFew; ++j) {
      sum[static_cast<size_t>(j % kM)] += static_cast<uint64_t>(j % 11 - 3);
      high[static_cast<size_t>(j % kM)] = std::max(
          high[static_cast<size_t>(j % kM)], wrapped(static_cast<uint64_t>(j * 37 % 251 - 120), t));
    }
    const Array big = kiln::zeros({kBig}, t, d);
    const Array added = big.at(near_end).add(add_values.index({Slice(0, kFew)}).astype(t));
    const Array maxed = big.at(near_end).max(extreme_values.index({Slice(0, kFew)}).astype(t));
    INFO(kiln::dtype_name(t) << " in place");
    std::vector<double> want_sum;
    for (uint64_t v : sum) want_sum.push_back(wrapped(v, t));
    CHECK(values_of(added.index({Slice(kBig - kM, kBig)})) == want_sum);
    CHECK(values_of(maxed.index({Slice(kBig - kM, kBig)})) == high);
    CHECK(kiln::count_nonzero(added.index({Slice(0, kBig - kM)})).item<int64_t>() == 0);
    results[std::string("in place add ") + kiln::dtype_name(t)] = added;
    results[std::string("in place max ") + kiln::dtype_name(t)] = maxed;
  }
  // bool: or (add, max) and and (multiply, min) of updates true at one k in 1000.
  const Array b =
      kiln::asarray(std::vector<bool>{false, true, false, true, false, true, false}).to(d);
  const Array rare = (k % 1000 == 0).eval(), mostly = (k % 1000 != 3).eval();
  std::vector<double> any(kM), all(kM);
  for (int64_t p = 0; p < kM; ++p) {
    bool hit = false, miss = false;  // some update at p is true / false
    for (int64_t j = p; j < kCount; j += kM) hit |= j % 1000 == 0, miss |= j % 1000 == 3;
    any[static_cast<size_t>(p)] = (p % 2 == 1) || hit;
    all[static_cast<size_t>(p)] = (p % 2 == 1) && !miss;
  }
  using Case = std::tuple<std::string, Array, std::vector<double>>;
  for (const auto& [label, got, want] :
       {Case{"bool add", b.at(idx).add(rare), any}, Case{"bool max", b.at(idx).max(rare), any},
        Case{"bool multiply", b.at(idx).multiply(mostly), all},
        Case{"bool min", b.at(idx).min(mostly), all}}) {
    INFO(label);
    CHECK(values_of(got) == want);
    results["crowded " + label] = got;
  }
  // Halves: adds of 1 whose every partial sum the half holds exactly, so any order gives it.
  for (const auto& [t, per] : {std::pair{DType::Float16, 2000}, std::pair{DType::BFloat16, 200}}) {
    Array got = kiln::zeros({kM}, t, d).at(idx.index({Slice(0, per * kM)})).add(1.0);
    INFO(kiln::dtype_name(t));
    CHECK(values_of(got) == std::vector<double>(kM, per));
    results[std::string("crowded add ") + kiln::dtype_name(t)] = got;
  }
  return results;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("scatter: every dtype and operation, a scalar, a 0-d or broadcast value, as NumPy") {
  check_small_updates(kiln::host());
}

TEST_CASE("scatter: over 2^20 updates, one value and one per update, and bincount") {
  check_many_updates(kiln::host());
}

TEST_CASE("scatter: 2^20 updates crowding a few positions of 1- and 2-byte dtypes") {
  check_crowded_narrow_updates(kiln::host());
}

TEST_CASE("scatter: one value for every update is read once; a 1-d array's indices in place") {
  Array x = kiln::zeros({100}, DType::Float64).eval();
  Array idx = (kiln::arange(int64_t{0}, int64_t{1000}) % 100).eval();
  Array row = kiln::arange(0.0, 8.0).eval();
  // No kernel runs over the 1000 updates: neither the positions (the indices are read where
  // they lie) nor the values (a scalar is one element, written once; an element of row is read
  // in place).
  for (const Array& y : {x.at(idx).add(1.0), x.at(idx).set(row.index({Slice(3, 4)})),
                         x.at(idx).max(kiln::full({}, 2.0))}) {
    std::string e = kiln::explain({y});
    INFO(e);
    CHECK(count(e, "scatter (") == 1);
    CHECK(count(e, "over (1000,)") == 0);
  }
  CHECK(kiln::array_equal(x.at(idx).set(row.index({Slice(3, 4)})), kiln::full({100}, 3.0)));
  std::string counting = kiln::explain({kiln::bincount(idx)});
  INFO(counting);
  CHECK(count(counting, "over (1000,)") == 0);
  // Indices that wrap (negative ones) are read in place too, the scatter step counting them
  // from the end and checking their range; the values of one per update are read as they are.
  Array negative = (idx - 100).eval(), values = idx.astype(DType::Float64).eval();
  std::string wrapped = kiln::explain({x.at(negative).set(values)});
  INFO(wrapped);
  CHECK(count(wrapped, "over (1000,)") == 0);
  CHECK(count(wrapped, "indices (range checked as it runs)") == 1);
  CHECK(kiln::array_equal(x.at(negative).add(1.0), kiln::full({100}, 10.0)));
  CHECK(kiln::array_equal(x.at(negative).set(values), kiln::arange(0.0, 100.0)));
}

namespace {

// The message of the ShapeError that evaluating y throws ("" when it throws none).
std::string evaluation_error(const Array& y) {
  try {
    y.eval();
  } catch (const kiln::ShapeError& e) {
    return e.what();
  }
  return "";
}

// A 1-d x's bad indices are found by the scatter step as it runs (no pass before it): the
// update is made lazily, its evaluation throws NumPy's IndexError message (the lowest index
// below the range, else the highest above, as take reports), stores nothing and leaves x as it
// was; indices at the ends of the range are taken. On device d.
void check_bad_indices(Device d) {
  const Array x = kiln::zeros({6}, DType::Float64, d).eval();
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{1, 6}, "at: index 6 is out of bounds for axis 0 with size 6"},
      {{-7, 0}, "at: index -7 is out of bounds for axis 0 with size 6"},
      {{2, 9, -8, 1, 7, -9}, "at: index -9 is out of bounds"},
      {{2, 9, 1, 7}, "at: index 9 is out of bounds"}};
  for (const auto& [bad, message] : cases)
    for (DType t : {DType::Int64, DType::Int32}) {
      const Array i = kiln::asarray(bad).astype(t).to(d);
      for (const Array& y :
           {x.at(i).set(1.0), x.at(i).add(2.0), x.at(i).max(3.0),
            x.at(i).set(kiln::full({static_cast<int64_t>(bad.size())}, 4.0, DType::Float64, d))}) {
        INFO(message, " ", kiln::dtype_name(t));
        CHECK(evaluation_error(y).find(message) == 0);
        CHECK(evaluation_error(y).find(message) == 0);  // nothing stored: it throws again
      }
    }
  CHECK(kiln::array_equal(x.get(), kiln::zeros({6})));
  // An empty 1-d x: every index is out of range, reported when evaluated.
  const Array none = kiln::zeros({0}, DType::Float64, d);
  CHECK(evaluation_error(none.at(kiln::asarray(std::vector<int64_t>{0}).to(d)).set(1.0)) ==
        "at: index 0 is out of bounds for axis 0 with size 0");
  CHECK(evaluation_error(none.at(kiln::asarray(std::vector<int64_t>{-1}).to(d)).add(1.0)) ==
        "at: index -1 is out of bounds for axis 0 with size 0");
  // With another result in the same evaluation: neither is stored, and the good one alone runs.
  const Array good = x.at(kiln::asarray(std::vector<int64_t>{-6, 5}).to(d)).set(1.0);
  const Array bad = x.at(kiln::asarray(std::vector<int64_t>{0, 6}).to(d)).set(1.0);
  CHECK_THROWS_AS(kiln::eval({good, bad}), kiln::ShapeError);
  CHECK(kiln::array_equal(good.get(), kiln::asarray(std::vector<double>{1, 0, 0, 0, 0, 1})));
  // Many updates (many threads on a GPU, the prefetching loop on the host), two bad ones.
  const int64_t count = int64_t{1} << 20;
  const Array many = kiln::arange(int64_t{0}, count, int64_t{1}, DType::Int64, d) % 1000 - 500;
  const Array wide = kiln::zeros({1000}, DType::Float32, d);
  // Position p takes residue (p + 500) % 1000 of k, which 1048 or 1049 of the k < 2^20 have.
  const Array residue = (kiln::arange(int64_t{0}, int64_t{1000}) + 500) % 1000;
  CHECK(kiln::array_equal(wide.at(many).add(1.0f).get(),
                          kiln::full({1000}, 1048.0f) + (residue < count % 1000)));
  // A set of float32 values (one 64-bit word per position on a GPU): the last k of each residue.
  std::vector<float> last(1000);
  for (int64_t p = 0; p < 1000; ++p) {
    const int64_t r = (p + 500) % 1000;
    last[p] = static_cast<float>(r + (count - 1 - r) / 1000 * 1000);
  }
  const Array ks = kiln::arange(int64_t{0}, count, int64_t{1}, DType::Float32, d);
  CHECK(kiln::array_equal(wide.at(many).set(ks).get(), kiln::asarray(last)));
  const Array two_bad = many.at(kiln::asarray(std::vector<int64_t>{7, 1000}).to(d))
                            .set(kiln::asarray(std::vector<int64_t>{1001, -1002}).to(d));
  for (const Array& y : {wide.at(two_bad).add(1.0f), wide.at(two_bad).set(ks)})
    CHECK(evaluation_error(y) == "at: index -1002 is out of bounds for axis 0 with size 1000");
}

}  // namespace

TEST_CASE("scatter: a 1-d array's bad indices are refused when the update is evaluated") {
  check_bad_indices(kiln::host());
}

TEST_CASE("scatter: other bad indices are refused when the update is made") {
  Array x = kiln::zeros({6}, DType::Float64);
  // Several index arrays, or one along the first axis of a 2-d x, are checked at once.
  Array m = kiln::zeros({3, 2});
  try {
    m.at(kiln::asarray(std::vector<int64_t>{2, 3, 1})).add(1.0);
    FAIL("an index past the end was taken");
  } catch (const kiln::ShapeError& e) {
    CHECK(std::string(e.what()).find("at: index 3 is out of bounds for axis 0 with size 3") == 0);
  }
  // No index: x itself, empty or not.
  CHECK(kiln::array_equal(x.at(kiln::asarray(std::vector<int64_t>{})).set(1.0), x));
  CHECK(kiln::zeros({0}).at(kiln::asarray(std::vector<int64_t>{})).set(1.0).shape() ==
        kiln::Shape{0});
  // bincount still refuses a negative value, saying which.
  try {
    kiln::bincount(kiln::asarray(std::vector<int64_t>{3, -2, 0}));
    FAIL("bincount took a negative value");
  } catch (const kiln::Error& e) {
    CHECK(std::string(e.what()).find("negative value (-2)") != std::string::npos);
  }
  // The same of a narrow signed dtype (its values read as uint64 in bincount's one pass), and an
  // unsigned value past any count of bins.
  try {
    kiln::bincount(kiln::asarray(std::vector<int8_t>{4, 1, -5, -1}));
    FAIL("bincount took a negative int8 value");
  } catch (const kiln::Error& e) {
    CHECK(std::string(e.what()).find("negative value (-5)") != std::string::npos);
  }
  CHECK_THROWS_AS(kiln::bincount(kiln::asarray(std::vector<uint64_t>{1, (uint64_t{1} << 63) + 1})),
                  kiln::ShapeError);
  CHECK(kiln::bincount(kiln::asarray(std::vector<uint8_t>{3, 0, 3, 255})).to_vector<int64_t>() ==
        [] {
          std::vector<int64_t> counts(256, 0);
          counts[0] = 1, counts[3] = 2, counts[255] = 1;
          return counts;
        }());
}

GPU_TEST_CASE("scatter on the GPU gives the host's bits") {
  for (auto check : {check_small_updates, check_many_updates, check_crowded_narrow_updates}) {
    const Results host = check(kiln::host()), gpu = check(kiln::cuda());
    REQUIRE(!gpu.empty());  // what the GPU runs, less complex128's multiply (it refuses that)
    for (const auto& [label, g] : gpu) {
      INFO(label);
      CHECK(g.device() == kiln::cuda());
      CHECK(kiln::array_equal(g.get(), host.at(label)));
    }
  }
  // One value stored at repeated positions, which no claim orders on a GPU.
  Array idx = kiln::asarray(std::vector<int64_t>{3, 3, 0, 3, 0}).to(kiln::cuda());
  for (DType t : kDTypes) {
    INFO(kiln::dtype_name(t));
    Array x = kiln::zeros({5}, t, kiln::cuda());
    Array got = x.at(idx).set(kiln::full({}, 1, t, kiln::cuda())).get();
    CHECK(kiln::array_equal(got, kiln::asarray(std::vector<double>{1, 0, 0, 1, 0}).astype(t)));
  }
  check_bad_indices(kiln::cuda());
}
