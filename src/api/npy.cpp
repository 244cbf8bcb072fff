// NumPy's .npy format (numpy/lib/format.py): the magic "\x93NUMPY", a version, a header
// length, a Python dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a 64-byte boundary and ended by '\n', then the raw elements.
#include "kiln/npy.hpp"

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

#include "graph/node.hpp"
#include "graph/shape.hpp"
#include "runtime/backends.hpp"

namespace kiln {
namespace {

static_assert(std::endian::native == std::endian::little,
              "kiln's .npy reader and writer assume a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy aligns the data to 64 bytes so it can be memory-mapped with aligned loads.
constexpr size_t kAlign = 64;
constexpr uint32_t kMaxHeaderBytes = 1 << 20;
constexpr const char* kConvertHint =
    "kiln reads bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, "
    "float32, float64, complex64 and complex128; convert in NumPy first, e.g. "
    "numpy.save(path, a.astype('<f8'))";

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& todo) {
  throw Error("load_npy: " + path + ": " + what + "; " + todo);
}

struct Header {
  DType dtype = DType::Float64;
  bool fortran = false;
  Shape shape;
};

struct DescrName {
  const char* code;  // NumPy's kind and size, without the byte order
  DType dtype;
};
constexpr DescrName kDescrs[] = {
    {"b1", DType::Bool},      {"i1", DType::Int8},       {"i2", DType::Int16},
    {"i4", DType::Int32},     {"i8", DType::Int64},      {"u1", DType::UInt8},
    {"u2", DType::UInt16},    {"u4", DType::UInt32},     {"u8", DType::UInt64},
    {"f2", DType::Float16},   {"f4", DType::Float32},    {"f8", DType::Float64},
    {"c8", DType::Complex64}, {"c16", DType::Complex128}};

// The dtype of a descr string such as '<f8' or '|b1'; each kind of refusal says how to fix it.
DType dtype_of_descr(const std::string& descr, const std::string& path) {
  if (descr.empty()) fail(path, "the header's descr is empty", "re-save the file with numpy.save");
  char order = descr[0];
  std::string code = descr.substr(order == '<' || order == '>' || order == '|' || order == '=');
  if (code == "O" || code == "O8" || code == "O4")
    throw DTypeError("load_npy: " + path +
                     ": it holds a NumPy object array (Python objects, not numbers); " +
                     kConvertHint);
  for (const auto& d : kDescrs) {
    if (code != d.code) continue;
    if (order == '>' && itemsize(d.dtype) > 1)
      throw DTypeError("load_npy: " + path + ": its dtype '" + descr +
                       "' is big-endian; convert in NumPy with "
                       "numpy.save(path, a.astype(a.dtype.newbyteorder('<')))");
    return d.dtype;
  }
  throw DTypeError("load_npy: " + path + ": dtype '" + descr + "' is not supported; " +
                   kConvertHint);
}

// Reads the header's Python dict literal. NumPy writes it with single quotes, a trailing comma
// and any key order; files from Python 2 may carry long integers such as 3L in the shape.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (!accept('}')) {
      std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        if (peek() == '[')
          throw DTypeError("load_npy: " + path_ + ": it holds a structured (record) array; " +
                           kConvertHint);
        h.dtype = dtype_of_descr(parse_string(), path_);
        seen[0] = true;
      } else if (key == "fortran_order") {
        h.fortran = parse_bool();
        seen[1] = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        seen[2] = true;
      } else {
        bad("an unexpected key '" + key + "'");
      }
      // Entries are separated by commas; the last one may or may not have its own.
      if (!accept(',') && peek() != '}') bad("no ',' between entries");
    }
    if (!seen[0] || !seen[1] || !seen[2]) bad("a missing 'descr', 'fortran_order' or 'shape'");
    // numpy.load refuses text after the dict too; it would mean a corrupt or foreign header.
    if (peek() != '\0') bad("text after the closing '}'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) {
    fail(path_, "the header has " + what + " (header: " + std::string(text_) + ")",
         "re-save the file with numpy.save");
  }
  char peek() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) pos_++;
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c) return false;
    pos_++;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) bad(std::string("no '") + c + "' where one was expected");
  }
  bool accept_word(std::string_view w) {
    peek();
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  std::string parse_string() {
    char quote = peek();
    if (quote != '\'' && quote != '"') bad("a key or value that is not a quoted string");
    size_t end = text_.find(quote, ++pos_);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    if (accept_word("True")) return true;
    if (accept_word("False")) return false;
    bad("a fortran_order that is neither True nor False");
  }
  int64_t parse_dim() {
    peek();
    int64_t v = 0;
    size_t start = pos_;
    for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; pos_++) {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) bad("a dimension too large");
      v = v * 10 + (text_[pos_] - '0');
    }
    if (pos_ == start) bad("a shape entry that is not a non-negative integer");
    accept('L');
    return v;
  }
  Shape parse_shape() {
    Shape s;
    expect('(');
    while (!accept(')')) {
      s.push_back(parse_dim());
      if (!accept(',') && peek() != ')') bad("no ',' between shape entries");
    }
    return s;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads the preamble and header; leaves `in` at the first data byte.
Header read_header(std::ifstream& in, const std::string& path) {
  unsigned char pre[kMagicLen + 2];
  if (!in.read(reinterpret_cast<char*>(pre), sizeof pre))
    fail(path,
         "the file is too short to be a .npy file (" + std::to_string(in.gcount()) + " bytes)",
         "check that it was written completely by numpy.save");
  if (std::memcmp(pre, "PK", 2) == 0)
    fail(path, "it is a zip archive, as numpy.savez writes (.npz), not a .npy file",
         "in NumPy, load the archive and numpy.save each array you need to its own .npy file");
  if (std::memcmp(pre, kMagic, kMagicLen) != 0)
    fail(path, "it does not start with the .npy magic \"\\x93NUMPY\", so it is not a .npy file",
         "write it with numpy.save");
  int major = pre[kMagicLen], minor = pre[kMagicLen + 1];
  if (major < 1 || major > 3 || minor != 0)
    fail(path,
         "format version " + std::to_string(major) + "." + std::to_string(minor) +
             " is not supported (kiln reads 1.0, 2.0 and 3.0)",
         "re-save it with numpy.save");
  int len_bytes = major == 1 ? 2 : 4;
  unsigned char len_raw[4];
  if (!in.read(reinterpret_cast<char*>(len_raw), len_bytes))
    fail(path, "the file ends inside the header length", "the file is truncated; save it again");
  uint32_t len = read_le(len_raw, len_bytes);
  // Headers of kiln's dtypes and ranks are under 200 bytes; a huge length means a corrupt file,
  // and must not turn into a huge allocation.
  if (len > kMaxHeaderBytes)
    fail(path, "its header claims " + std::to_string(len) + " bytes, so the file is corrupt",
         "save it again with numpy.save");
  std::string text(len, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    fail(path, "the file ends inside its " + std::to_string(text.size()) + "-byte header",
         "the file is truncated; save it again");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return HeaderParser(text, path).parse();
}

size_t data_bytes(const Header& h, const std::string& path) {
  // The rank, and an element count that fits even when a zero dimension makes the array empty
  // (numpy.load refuses such shapes too): otherwise the array would load, then fail on every
  // use with an error that does not name the file.
  graph::check_rank(h.shape, ("load_npy: " + path).c_str());
  return static_cast<size_t>(shape_size(h.shape)) * static_cast<size_t>(itemsize(h.dtype));
}

// The bytes from the stream's position to the end of the file.
uint64_t bytes_left(std::ifstream& in) {
  std::streamoff here = in.tellg();
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  in.seekg(here);
  return end > here ? static_cast<uint64_t>(end - here) : 0;
}

// The elements, into a kiln host buffer. The file size is checked first, so a truncated file
// or a corrupt shape fails before any large allocation.
std::shared_ptr<graph::Buffer> read_data(std::ifstream& in, const Header& h,
                                         const std::string& path) {
  size_t nbytes = data_bytes(h, path);
  uint64_t left = bytes_left(in);
  if (left < nbytes)
    fail(path,
         "the header promises " + std::string(dtype_name(h.dtype)) + " shape " +
             shape_str(h.shape) + " (" + std::to_string(nbytes) + " bytes of data) but only " +
             std::to_string(left) + " bytes follow",
         "the file is truncated; save it again");
  auto buf = runtime::allocate(host(), nbytes);
  if (nbytes && !in.read(static_cast<char*>(buf->data()), static_cast<std::streamsize>(nbytes)))
    fail(path, "reading " + std::to_string(nbytes) + " bytes of data failed",
         "check that the file is readable");
  return buf;
}

// NumPy's bools are bytes 0 and 1; kiln's kernels rely on that, so other bytes become 1.
void normalise_bools(graph::Buffer& b) {
  auto* p = static_cast<unsigned char*>(b.data());
  for (size_t i = 0; i < b.nbytes; ++i) p[i] = p[i] != 0;
}

std::string descr_of(DType t) {
  for (const auto& d : kDescrs)
    if (d.dtype == t) return (itemsize(t) == 1 ? "|" : "<") + std::string(d.code);  // as NumPy
  // NumPy has no bfloat16; ml_dtypes' arrays reach .npy as 2-byte voids, which carry no dtype
  // and read back as bytes, so kiln writes none rather than a file nobody reads as bfloat16.
  if (t == DType::BFloat16)
    throw DTypeError(
        "save_npy: .npy has no standard descr for bfloat16 (NumPy has no such dtype); save "
        "x.astype(kiln::DType::Float32), which holds every bfloat16 value exactly");
  throw DTypeError("save_npy: no .npy descr for dtype " + std::string(dtype_name(t)));
}

// The preamble and padded header for a C-ordered array: version 1.0 unless the header is
// longer than 1.0's 16-bit length field allows.
std::string header_bytes(DType t, const Shape& shape) {
  std::string dict = "{'descr': '" + descr_of(t) +
                     "', 'fortran_order': False, 'shape': " + shape_str(shape) + ", }";
  for (int len_bytes : {2, 4}) {
    size_t pre = kMagicLen + 2 + static_cast<size_t>(len_bytes);
    size_t total = (pre + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    size_t header_len = total - pre;
    if (len_bytes == 2 && header_len > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(len_bytes == 2 ? 1 : 2);
    out += '\0';
    for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
    out += dict + std::string(header_len - dict.size() - 1, ' ') + '\n';
    return out;
  }
  throw Error("save_npy: the header does not fit a .npy file");  // 4 GB of shape text
}

}  // namespace

Array load_npy(const std::string& path, Device d) {
  if (d.is_cuda()) cuda(d.index);  // DeviceError before any reading when there is no such GPU
  // A directory opens as a stream on Linux and then reads as zero bytes: say what it is.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("load_npy: " + path + " is a directory, not a .npy file; pass the file's path");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("load_npy: cannot open " + path + ": " + std::strerror(errno) +
                "; check the path and its permissions");
  Header h = read_header(in, path);
  auto buf = read_data(in, h, path);
  if (h.dtype == DType::Bool) normalise_bools(*buf);
  // Fortran order is C order of the reversed shape; a transpose gives the logical array and
  // eval() lays it out in C order, as numpy.load would hand it over.
  Shape stored(h.shape.rbegin(), h.shape.rend());
  Array a(graph::buffer_node(std::move(buf), h.dtype, h.fortran ? stored : h.shape));
  if (h.fortran && h.shape.size() > 1) a = a.transpose().eval();
  return a.to(d);
}

void save_npy(const std::string& path, const Array& a) {
  Array h = a.get().eval();
  std::string header = header_bytes(h.dtype(), h.shape());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error("save_npy: cannot create " + path + ": " + std::strerror(errno) +
                "; check that the folder exists and is writable");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (h.nbytes()) out.write(static_cast<const char*>(h.data()), h.nbytes());
  out.close();
  if (!out) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // no half-written file that looks like data
    throw Error("save_npy: writing " + path + " failed (disk full?); nothing was kept");
  }
}

}  // namespace kiln
