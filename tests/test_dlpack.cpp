// kiln::to_dlpack / from_dlpack: the structs kiln hands out (dtype codes, shape, strides,
// device, the versioned tensor's version and flags), tensors a test builds by hand over its own
// memory with strides of every kind (each element checked against data[offset + sum i_k s_k]),
// who calls the deleter and when, and bad tensors refused with the caller still owning them.
// NumPy, PyTorch and CuPy as real consumers: tests/interop/dlpack_roundtrip.py.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <kiln/kiln.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "api/dlpack_abi.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;

// DLPack's codes for each kiln dtype, written out from the DLPack specification (not from
// kiln's table): code, bits.
struct Code {
  DType t;
  uint8_t code, bits;
};
const Code kCodes[] = {
    {DType::Bool, 6, 8},     {DType::Int8, 0, 8},       {DType::Int16, 0, 16},
    {DType::Int32, 0, 32},   {DType::Int64, 0, 64},     {DType::UInt8, 1, 8},
    {DType::UInt16, 1, 16},  {DType::UInt32, 1, 32},    {DType::UInt64, 1, 64},
    {DType::Float16, 2, 16}, {DType::BFloat16, 4, 16},  {DType::Float32, 2, 32},
    {DType::Float64, 2, 64}, {DType::Complex64, 5, 64}, {DType::Complex128, 5, 128}};

// A producer's tensor over a test's vector of doubles, counting its deleter's calls.
struct Producer {
  std::vector<double> data;
  std::vector<int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensor tensor{};

  DLManagedTensor* make(uint64_t byte_offset = 0) {
    DLTensor& t = tensor.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 64, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byte_offset;
    tensor.manager_ctx = this;
    tensor.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
    return &tensor;
  }
};

// The elements a strided tensor means, in C order: data[offset + sum_k i_k * s_k].
std::vector<double> expected_elements(const Producer& p, int64_t offset) {
  const auto& n = p.shape;
  int64_t count = 1;
  for (int64_t e : n) count *= e;
  std::vector<double> out;
  std::vector<int64_t> i(n.size(), 0);
  for (int64_t c = 0; c < count; ++c) {
    int64_t at = offset;
    for (size_t k = 0; k < n.size(); ++k) at += i[k] * p.strides[k];
    out.push_back(p.data[at]);
    for (size_t k = n.size(); k-- > 0;)
      if (++i[k] < n[k])
        break;
      else
        i[k] = 0;
  }
  return out;
}

std::vector<double> iota(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

}  // namespace

TEST_CASE("to_dlpack: every dtype with DLPack's code, C-order strides, kDLCPU, the values") {
  for (const Code& c : kCodes) {
    CAPTURE(kiln::dtype_name(c.t));
    Array a = kiln::arange(24).reshape({2, 3, 4}).astype(c.t);
    DLManagedTensor* m = kiln::to_dlpack(a);
    const DLTensor& t = m->dl_tensor;
    CHECK(t.dtype.code == c.code);
    CHECK(t.dtype.bits == c.bits);
    CHECK(t.dtype.lanes == 1);
    CHECK(t.device.device_type == kDLCPU);
    REQUIRE(t.ndim == 3);
    CHECK(std::vector<int64_t>(t.shape, t.shape + 3) == std::vector<int64_t>{2, 3, 4});
    CHECK(std::vector<int64_t>(t.strides, t.strides + 3) == std::vector<int64_t>{12, 4, 1});
    CHECK(t.byte_offset == 0);
    CHECK(t.data == a.data());
    // Back into kiln: the same values, read in place.
    Array b = kiln::from_dlpack(m);
    CHECK(b.dtype() == c.t);
    CHECK(b.data() == a.data());
    CHECK(kiln::array_equal(a, b));
  }
}

TEST_CASE("to_dlpack of a lazy view evaluates it; of a 0-d array has ndim 0") {
  Array x = kiln::arange(12.0).reshape({3, 4});
  DLManagedTensor* m = kiln::to_dlpack(x.T() * 2);
  const double* p = static_cast<const double*>(m->dl_tensor.data);
  CHECK(std::vector<int64_t>(m->dl_tensor.shape, m->dl_tensor.shape + 2) ==
        std::vector<int64_t>{4, 3});
  CHECK(p[1] == 8.0);  // (x.T * 2)[0, 1] = 2 * x[1, 0]
  CHECK(p[3] == 2.0);  // [1, 0] = 2 * x[0, 1]
  m->deleter(m);
  DLManagedTensor* s = kiln::to_dlpack(kiln::full({}, 7.5));
  CHECK(s->dl_tensor.ndim == 0);
  CHECK(*static_cast<const double*>(s->dl_tensor.data) == 7.5);
  s->deleter(s);
}

TEST_CASE("an exported tensor keeps kiln's memory after every Array is gone") {
  DLManagedTensor* m = nullptr;
  {
    Array a = kiln::arange(1000.0) * 3 + 1;
    m = kiln::to_dlpack(a);
  }
  const double* p = static_cast<const double*>(m->dl_tensor.data);
  for (int i = 0; i < 1000; i += 111) CHECK(p[i] == 3.0 * i + 1);
  m->deleter(m);  // under ASan, a leak or a double free here fails the test
}

TEST_CASE("to_dlpack_versioned: DLPack 1.0, read-only, and from_dlpack takes it back") {
  Array a = kiln::arange(0, 6, 1, DType::Int32).reshape({2, 3});
  DLManagedTensorVersioned* v = kiln::to_dlpack_versioned(a);
  CHECK(v->version.major == 1);
  CHECK(v->version.minor == 0);
  CHECK((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(v->dl_tensor.dtype.code == kDLInt);
  Array b = kiln::from_dlpack(v);
  CHECK(b.to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("from_dlpack reads any strides in place: transposes, steps, flips, broadcasts, gathers") {
  struct Case {
    const char* what;
    std::vector<int64_t> shape, strides;
    int64_t offset;  // elements
  };
  // Over 60 doubles 0..59. Each is what NumPy, PyTorch or a hand-made tensor may hand over.
  const Case cases[] = {
      {"C order with strides given", {3, 4}, {4, 1}, 0},
      {"Fortran order (a transpose)", {4, 3}, {1, 4}, 0},
      {"every other column", {3, 2}, {4, 2}, 0},
      {"a column", {5}, {6}, 1},
      {"rows reversed", {3, 4}, {-4, 1}, 8},
      {"both axes reversed", {3, 4}, {-4, -1}, 11},
      {"a broadcast row (stride 0)", {5, 4}, {0, 1}, 3},
      {"length-1 axes with odd strides", {1, 3, 1, 4}, {999, 4, -7, 1}, 0},
      {"3-d permuted with a step", {2, 5, 3}, {1, 6, 2}, 0},
      {"a single element broadcast", {2, 3}, {0, 0}, 5},
      {"a sub-block with byte_offset", {2, 2}, {10, 1}, 23},
      {"every other column of rows of 5 (interleaved)", {4, 2}, {5, 2}, 1},
      {"overlapping windows", {6, 4}, {2, 1}, 0},
      {"interleaved and reversed", {3, 3}, {-5, 3}, 10},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Producer p{iota(60), c.shape, c.strides};
    std::vector<double> want = expected_elements(p, c.offset);
    {
      Array a = kiln::from_dlpack(p.make(c.offset * sizeof(double)));
      CHECK(a.shape() == kiln::Shape(c.shape));
      CHECK(p.deleted == 0);  // kiln reads it when a is evaluated
      CHECK(a.to_vector<double>() == want);
    }
    CHECK(p.deleted == 1);  // the last Array gone: the producer's deleter, once
  }
}

TEST_CASE("from_dlpack: an expression built over the tensor keeps it until evaluated") {
  Producer p{iota(12), {3, 4}, {}};
  Array sum;
  {
    Array a = kiln::from_dlpack(p.make());
    sum = kiln::sum(a * 2, 1);
  }
  CHECK(p.deleted == 0);
  CHECK(sum.to_vector<double>() == std::vector<double>{12, 44, 76});
  sum = Array();
  CHECK(p.deleted == 1);
}

TEST_CASE("from_dlpack refuses what it cannot read, and the caller keeps the tensor") {
  auto refused = [](Producer& p, auto&& edit) {
    DLManagedTensor* m = p.make();
    edit(m->dl_tensor);
    return m;
  };
  Producer q{iota(12), {3, 4}, {}};
  CHECK_THROWS_WITH_AS(kiln::from_dlpack(refused(q, [](DLTensor& t) { t.dtype.lanes = 4; })),
                       doctest::Contains("4 lanes"), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::from_dlpack(refused(q,
                                            [](DLTensor& t) {
                                              t.dtype = {kDLFloat, 8, 1};
                                            })),
                  kiln::DTypeError);
  CHECK_THROWS_WITH_AS(
      kiln::from_dlpack(refused(q, [](DLTensor& t) { t.device.device_type = kDLVulkan; })),
      doctest::Contains("device type 7"), kiln::DeviceError);
  CHECK_THROWS_AS(kiln::from_dlpack(static_cast<DLManagedTensor*>(nullptr)), kiln::Error);
  CHECK(q.deleted == 0);

  DLManagedTensorVersioned* v = kiln::to_dlpack_versioned(kiln::arange(3.0));
  v->version.major = 2;
  CHECK_THROWS_WITH_AS(kiln::from_dlpack(v), doctest::Contains("DLPack 2.0"), kiln::Error);
  v->version.major = 1;
  CHECK(kiln::from_dlpack(v).to_vector<double>() == std::vector<double>{0, 1, 2});
}

NO_GPU_TEST_CASE("without a GPU, a CUDA tensor is a DeviceError and stays the caller's") {
  Producer p{iota(4), {4}, {}};
  DLManagedTensor* m = p.make();
  m->dl_tensor.device = {kDLCUDA, 0};
  CHECK_THROWS_AS(kiln::from_dlpack(m), kiln::DeviceError);
  CHECK(p.deleted == 0);
}

GPU_TEST_CASE("to_dlpack of a device array: kDLCUDA, device memory, the values") {
  Array a = (kiln::arange(0, 4096, 1, DType::Float32, kiln::cuda()) * 0.5f).reshape({64, 64});
  DLManagedTensor* m = kiln::to_dlpack(a);
  CHECK(m->dl_tensor.device.device_type == kDLCUDA);
  CHECK(m->dl_tensor.device.device_id == 0);
  cudaPointerAttributes attr{};
  REQUIRE(cudaPointerGetAttributes(&attr, m->dl_tensor.data) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  std::vector<float> back(4096);
  a = Array();  // the tensor alone keeps the memory now
  REQUIRE(cudaMemcpy(back.data(), m->dl_tensor.data, 4096 * 4, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  for (int i = 0; i < 4096; i += 97) CHECK(back[i] == 0.5f * i);
  m->deleter(m);
}

GPU_TEST_CASE("from_dlpack of device memory with strides, against the same tensor on the host") {
  std::vector<double> host = iota(60);
  void* dev = nullptr;
  REQUIRE(cudaMalloc(&dev, 60 * sizeof(double)) == cudaSuccess);
  REQUIRE(cudaMemcpy(dev, host.data(), 60 * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess);
  // The last two no view expresses (rows that interleave, rows that overlap): a gather, whose
  // positions must live on the GPU too.
  const std::vector<std::vector<int64_t>> strides = {{1, 4}, {-4, 2}, {0, 1}, {5, 2}, {1, 1}};
  const std::vector<int64_t> offsets = {0, 8, 3, 1, 2};
  for (size_t k = 0; k < strides.size(); ++k) {
    Producer on_host{host, {3, 2}, strides[k]}, on_gpu{{}, {3, 2}, strides[k]};
    DLManagedTensor* m = on_gpu.make(offsets[k] * sizeof(double));
    m->dl_tensor.data = dev;
    m->dl_tensor.device = {kDLCUDA, 0};
    Array g = kiln::from_dlpack(m);
    CHECK(g.device() == kiln::cuda());
    Array h = kiln::from_dlpack(on_host.make(offsets[k] * sizeof(double)));
    CHECK(kiln::array_equal(g.get(), h));
    CHECK(g.to_vector<double>() == expected_elements(on_host, offsets[k]));
    g = Array();
    CHECK(on_gpu.deleted == 1);
  }
  cudaFree(dev);
}
