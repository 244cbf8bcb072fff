// kiln::load_npy / save_npy against files NumPy wrote. The fixtures in tests/data/npy/ come from
// tests/data/make_npy_fixtures.py (NumPy 1.24); see that script for cases.txt and errors.txt.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <kiln/kiln.hpp>

#include "support/fixture_cases.hpp"
#include "support/gpu.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(KILN_TEST_DATA) + "/npy/";

struct Case {
  std::string name;
  kiln::DType dtype;
  bool fortran;
  int version;
  kiln::Shape shape;
  std::vector<std::string> values;  // C order; complex numbers as two entries
};

std::vector<Case> read_cases() {
  std::ifstream in(kDir + "cases.txt");
  REQUIRE_MESSAGE(in.good(), "missing " << kDir << "cases.txt; run make_npy_fixtures.py");
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    Case c;
    std::string dtype;
    int fortran = 0, ndim = 0;
    fields >> c.name >> dtype >> fortran >> c.version >> ndim;
    c.dtype = fixtures::parse_dtype(dtype);
    c.fortran = fortran != 0;
    c.shape.resize(ndim);
    for (auto& d : c.shape) fields >> d;
    REQUIRE_MESSAGE(!fields.fail(), "bad line in cases.txt: " << line);
    for (std::string v; fields >> v;) c.values.push_back(v);
    out.push_back(c);
  }
  REQUIRE(out.size() >= 10);
  return out;
}

template <class R>
bool same_real(R got, const std::string& text) {
  R want = static_cast<R>(std::strtod(text.c_str(), nullptr));
  if (std::isnan(want)) return std::isnan(got);
  return std::memcmp(&got, &want, sizeof got) == 0;  // bit for bit: -0.0 is not 0.0
}

template <class T>
bool same_value(T got, const std::vector<std::string>& values, size_t i) {
  if constexpr (std::is_same_v<T, kiln::float16> || std::is_same_v<T, kiln::bfloat16>) {
    return same_real(static_cast<float>(got), values[i]);  // the half's float value, exactly
  } else if constexpr (std::is_same_v<T, bool>) {
    return got == (values[i] == "1");
  } else if constexpr (std::is_unsigned_v<T>) {
    return got == static_cast<T>(std::stoull(values[i]));
  } else if constexpr (std::is_integral_v<T>) {
    return got == static_cast<T>(std::stoll(values[i]));
  } else if constexpr (std::is_floating_point_v<T>) {
    return same_real(got, values[i]);
  } else {
    return same_real(got.real(), values[2 * i]) && same_real(got.imag(), values[2 * i + 1]);
  }
}

// The array's elements match the NumPy values of the case, bit for bit.
void check_values(const kiln::Array& a, const Case& c) {
  kiln::visit_dtype(c.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> got = a.to_vector<T>();
    size_t per = kiln::is_complex(c.dtype) ? 2 : 1;
    REQUIRE(got.size() * per == c.values.size());
    for (size_t i = 0; i < got.size(); ++i)
      CHECK_MESSAGE(same_value<T>(got[i], c.values, i), c.name << " element " << i);
  });
}

void check_case(const kiln::Array& a, const Case& c) {
  CHECK(a.dtype() == c.dtype);
  CHECK(a.shape() == c.shape);
  check_values(a, c);
}

// A folder of its own for the files a test writes, removed afterwards.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kiln_test_npy_" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  REQUIRE(out.good());
}

// The message of the kiln::Error that loading path throws ("" when it loads).
template <class E>
std::string load_error(const std::string& path) {
  try {
    kiln::load_npy(path);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// A version 1.0 file from a header dict and data bytes, to make files NumPy would not write.
std::string npy_file(const std::string& dict, const std::string& data) {
  std::string header = dict + std::string(64 - (10 + dict.size() + 1) % 64, ' ') + "\n";
  std::string len = {static_cast<char>(header.size() & 0xff),
                     static_cast<char>(header.size() >> 8)};
  return std::string("\x93NUMPY\x01\x00", 8) + len + header + data;
}

// NumPy is the reference the round trip is checked against: without it that test would check
// nothing, so it fails, saying what to install.
void require_numpy() {
  REQUIRE_MESSAGE(fs::exists(KILN_PYTHON), KILN_PYTHON
                  " is missing: install python3 and "
                  "python3-numpy (scripts/install-deps does)");
  std::string cmd = std::string(KILN_PYTHON) + " -c 'import numpy' > /dev/null 2>&1";
  REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, KILN_PYTHON
                  " cannot import numpy: install python3-numpy (scripts/install-deps "
                  "does)");
}

}  // namespace

TEST_CASE("load_npy reads every dtype, 0-d, empty, Fortran order and format 2.0/3.0 files") {
  for (const Case& c : read_cases()) {
    CAPTURE(c.name);
    check_case(kiln::load_npy(kDir + c.name + ".npy"), c);
  }
}

TEST_CASE("save_npy then load_npy gives back the same array") {
  TempDir tmp;
  for (const Case& c : read_cases()) {
    CAPTURE(c.name);
    kiln::Array a = kiln::load_npy(kDir + c.name + ".npy");
    kiln::save_npy(tmp.file(c.name + ".npy"), a);
    check_case(kiln::load_npy(tmp.file(c.name + ".npy")), c);
  }
}

TEST_CASE("save_npy writes lazy views and expressions in C order") {
  TempDir tmp;
  kiln::Array x = kiln::arange(0, 24, 1, kiln::DType::Float32).reshape({2, 3, 4});
  kiln::Array views[] = {x.transpose(), x(1, kiln::Slice(std::nullopt, std::nullopt, -1)),
                         kiln::sin(x) * 2 + 1, kiln::sum(x, {1}) > 30};
  for (const kiln::Array& v : views) {
    kiln::save_npy(tmp.file("v.npy"), v);
    kiln::Array back = kiln::load_npy(tmp.file("v.npy"));
    CHECK(back.shape() == v.shape());
    CHECK(kiln::array_equal(back, v));
  }
}

TEST_CASE("save_npy writes a 1.0 header padded to 64 bytes, as NumPy does") {
  TempDir tmp;
  kiln::save_npy(tmp.file("a.npy"), kiln::ones({2, 3}, kiln::DType::Int32));
  std::string bytes = read_bytes(tmp.file("a.npy"));
  REQUIRE(bytes.size() == 128 + 6 * 4);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  std::string header = bytes.substr(10, 118);
  CHECK(header.starts_with("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(header.back() == '\n');
}

TEST_CASE("NumPy reads the files kiln writes") {
  require_numpy();
  TempDir tmp;
  std::vector<Case> cases = read_cases();
  REQUIRE_FALSE(cases.empty());
  for (const Case& c : cases)
    kiln::save_npy(tmp.file(c.name + ".npy"), kiln::load_npy(kDir + c.name + ".npy"));
  // Each kiln file must equal NumPy's own fixture in dtype, shape and value, in format 1.0.
  // argv: kiln's folder, NumPy's folder, then the case names.
  write_bytes(tmp.file("check.py"),
              "import sys, os, numpy as np\n"
              "bad = 0\n"
              "for n in sys.argv[3:]:\n"
              "    path = os.path.join(sys.argv[1], n + '.npy')\n"
              "    got, ref = np.load(path), np.load(os.path.join(sys.argv[2], n + '.npy'))\n"
              "    with open(path, 'rb') as f: version = np.lib.format.read_magic(f)\n"
              "    ok = (got.dtype == ref.dtype and got.shape == ref.shape and version == (1, 0)\n"
              "          and np.array_equal(got, ref, equal_nan=ref.dtype.kind in 'fc'))\n"
              "    if not ok: bad += 1; print('mismatch', n, got.dtype, got.shape, version)\n"
              "sys.exit(bad)\n");
  std::string cmd =
      std::string(KILN_PYTHON) + " " + tmp.file("check.py") + " " + tmp.path.string() + " " + kDir;
  for (const Case& c : cases) cmd += " " + c.name;
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("load_npy refuses files it cannot represent, saying what to do") {
  std::ifstream in(kDir + "errors.txt");
  REQUIRE(in.good());
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string name, kind, words;
    fields >> name >> kind >> std::ws;
    std::getline(fields, words);
    CAPTURE(line);
    std::string path = kDir + name + ".npy";
    std::string msg = kind == "ShapeError" ? load_error<kiln::ShapeError>(path)
                                           : load_error<kiln::DTypeError>(path);
    CHECK(msg.find(words) != std::string::npos);
    CHECK(msg.find(path) != std::string::npos);
    if (kind == "DTypeError") CHECK(msg.find("numpy.save") != std::string::npos);
  }
}

TEST_CASE("truncated files, bad magic, unknown versions and broken headers are clear errors") {
  TempDir tmp;
  std::string good = read_bytes(kDir + "float64_3d.npy");  // 128-byte header, 192 data bytes
  auto error_for = [&](const std::string& bytes) {
    write_bytes(tmp.file("bad.npy"), bytes);
    return load_error<kiln::Error>(tmp.file("bad.npy"));
  };
  CHECK(error_for(good.substr(0, 4)).find("too short") != std::string::npos);
  CHECK(error_for(good.substr(0, 9)).find("header length") != std::string::npos);
  CHECK(error_for(good.substr(0, 60)).find("ends inside its 118-byte header") != std::string::npos);
  std::string short_data = error_for(good.substr(0, good.size() - 1));
  CHECK(short_data.find("truncated") != std::string::npos);
  CHECK(short_data.find("(2, 3, 4)") != std::string::npos);
  CHECK(short_data.find("191 bytes follow") != std::string::npos);

  CHECK(error_for("hello, world\n").find("not a .npy file") != std::string::npos);
  std::string v4 = good;
  v4[6] = 4;
  CHECK(error_for(v4).find("format version 4.0") != std::string::npos);
  std::string garbled = good;
  garbled.replace(good.find("'shape'"), 7, "'shope'");
  CHECK(error_for(garbled).find("unexpected key 'shope'") != std::string::npos);
  std::string bad_bool = good;
  bad_bool.replace(good.find("False"), 5, "Maybe");
  CHECK(error_for(bad_bool).find("neither True nor False") != std::string::npos);

  std::string huge_header = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
  CHECK(error_for(huge_header).find("header claims 4294967295 bytes") != std::string::npos);
  // A shape of 8 TB with 8 bytes of data fails on the file size, before allocating anything.
  std::string huge_shape =
      error_for(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }",
                         std::string(8, '\0')));
  CHECK(huge_shape.find("but only 8 bytes follow") != std::string::npos);
  // Python 2's long integers and double quotes, which old writers used, are read.
  write_bytes(tmp.file("py2.npy"),
              npy_file("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2L,)}",
                       std::string("\x01\0\0\0\x02\0\0\0", 8)));
  CHECK(kiln::load_npy(tmp.file("py2.npy")).to_vector<int32_t>() == std::vector<int32_t>{1, 2});

  std::string missing = load_error<kiln::Error>(tmp.file("no_such_file.npy"));
  CHECK(missing.find("cannot open") != std::string::npos);
  CHECK(missing.find("no_such_file.npy") != std::string::npos);
}

TEST_CASE("bool bytes other than 0 and 1 load as true") {
  TempDir tmp;
  std::string bytes = read_bytes(kDir + "bool_1d.npy");
  bytes[bytes.size() - 5] = 7;  // the first element, already true, now the byte 7
  bytes[bytes.size() - 4] = 2;  // the second, false, now the byte 2
  write_bytes(tmp.file("b.npy"), bytes);
  kiln::Array a = kiln::load_npy(tmp.file("b.npy"));
  CHECK(a.to_vector<bool>() == std::vector<bool>{true, true, true, true, false});
  CHECK(kiln::sum(a).item<int64_t>() == 4);
}

TEST_CASE("save_npy refuses bfloat16, which has no standard .npy descr, and says what to do") {
  TempDir tmp;
  auto x = kiln::ones({2}, kiln::DType::BFloat16);
  CHECK_THROWS_WITH_AS(kiln::save_npy(tmp.file("b.npy"), x),
                       doctest::Contains("astype(kiln::DType::Float32)"), kiln::DTypeError);
}

TEST_CASE("save_npy reports a folder it cannot write to") {
  try {
    kiln::save_npy("/nonexistent-kiln-dir/a.npy", kiln::zeros({2}));
    FAIL("expected kiln::Error");
  } catch (const kiln::Error& e) {
    CHECK(std::string(e.what()).find("cannot create /nonexistent-kiln-dir/a.npy") !=
          std::string::npos);
  }
}

NO_GPU_TEST_CASE("load_npy onto a GPU without one is a DeviceError") {
  std::string path = kDir + "fortran_i32_3d.npy";
  CHECK_THROWS_AS(kiln::load_npy(path, kiln::Device{kiln::Device::Kind::Cuda, 0}),
                  kiln::DeviceError);
}

GPU_TEST_CASE("load_npy onto a GPU; save_npy of a device array") {
  std::string path = kDir + "fortran_i32_3d.npy";
  kiln::Array d = kiln::load_npy(path, kiln::cuda());
  CHECK(d.device() == kiln::cuda());
  CHECK(kiln::array_equal(d.get(), kiln::load_npy(path)));
  TempDir tmp;
  kiln::save_npy(tmp.file("d.npy"), d * 2);  // a device array is copied to the host to be saved
  CHECK(kiln::array_equal(kiln::load_npy(tmp.file("d.npy")), kiln::load_npy(path) * 2));
}
