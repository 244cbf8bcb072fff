// DLPack export and import (kiln/dlpack.hpp). Export hands out kiln's evaluated buffer, held
// by the tensor until its deleter runs; import wraps the tensor's memory with kiln::wrap and
// rebuilds its strides as kiln views (reshape, slice, transpose, broadcast, flip), so nothing is
// copied and the views fold into the kernels that read them.
#include "kiln/dlpack.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "api/build.hpp"
#include "api/dlpack_abi.hpp"
#include "kiln/errors.hpp"
#include "kiln/interop.hpp"
#include "kiln/joining.hpp"

namespace kiln {
namespace {

DLDataType dl_dtype(DType t) {
  const auto bits = static_cast<uint8_t>(8 * itemsize(t));
  uint8_t code = kDLFloat;
  if (t == DType::Bool)
    code = dlpack_abi::kBool;
  else if (t == DType::BFloat16)
    code = kDLBfloat;
  else if (is_complex(t))
    code = kDLComplex;
  else if (is_unsigned(t))
    code = kDLUInt;
  else if (is_integer(t))
    code = kDLInt;
  return {code, bits, 1};
}

DType kiln_dtype(DLDataType d) {
  for (DType t : kAllDTypes) {
    DLDataType k = dl_dtype(t);
    if (k.code == d.code && k.bits == d.bits && d.lanes == 1) return t;
  }
  throw DTypeError("kiln::from_dlpack: kiln has no dtype for DLPack's (code " +
                   std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits, " +
                   std::to_string(d.lanes) + " lanes); convert the tensor to one of kiln's " +
                   "dtypes (bool, integers, float16/bfloat16/32/64, complex64/128) first");
}

Device kiln_device(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return host();
    case kDLCUDA:
    case kDLCUDAManaged:
      return cuda(d.device_id);  // DeviceError when there is no such GPU
    default:
      throw DeviceError("kiln::from_dlpack: the tensor lives on DLPack device type " +
                        std::to_string(static_cast<int>(d.device_type)) +
                        "; kiln reads host memory (kDLCPU, kDLCUDAHost) and CUDA memory " +
                        "(kDLCUDA, kDLCUDAManaged): copy the tensor to one of those first");
  }
}

// ---- export ----------------------------------------------------------------------------------

// What an exported tensor owns: kiln's buffer (so the memory outlives every Array) and the
// shape and strides its DLTensor points at. The tensor is the first member, so the deleter
// finds the whole from the pointer it is given.
template <class Managed>
struct Exported {
  Managed tensor{};
  graph::BufferRef storage;
  std::vector<int64_t> shape, strides;
  static void release(Managed* self) { delete static_cast<Exported*>(self->manager_ctx); }
};

template <class Managed>
Managed* export_tensor(const Array& a) {
  const void* data = a.data();  // evaluates and finishes kiln's device work
  auto* e = new Exported<Managed>;
  e->storage = api::node_of(a).storage();
  e->shape = a.shape();
  e->strides.assign(a.shape().size(), 1);
  for (size_t i = e->shape.size(); i-- > 1;) e->strides[i - 1] = e->strides[i] * e->shape[i];
  e->shape.push_back(0);  // so data() is never null, also for a 0-d array
  e->strides.push_back(0);
  DLTensor& t = e->tensor.dl_tensor;
  t.data = const_cast<void*>(data);
  t.device = a.device().is_cuda() ? DLDevice{kDLCUDA, a.device().index} : DLDevice{kDLCPU, 0};
  t.ndim = a.ndim();
  t.dtype = dl_dtype(a.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = &Exported<Managed>::release;
  return &e->tensor;
}

// ---- import ----------------------------------------------------------------------------------

// Holds the producer's tensor while kiln reads its memory; calls its deleter once armed (on
// success only: until then the caller owns the tensor).
template <class Managed>
struct Imported {
  Managed* tensor;
  bool armed = false;
  ~Imported() {
    if (armed && tensor->deleter) tensor->deleter(tensor);
  }
};

// The axes of extent above 1 whose elements are apart (stride not 0), outermost (largest
// stride) first, when they nest as a dense array's axes do (each stride a multiple of the next
// and at least its whole extent); nothing when they do not.
std::optional<std::vector<int>> nesting_order(const std::vector<int64_t>& n,
                                              const std::vector<int64_t>& s) {
  std::vector<int> axes;
  for (int i = 0; i < static_cast<int>(n.size()); ++i)
    if (n[i] > 1 && s[i] != 0) axes.push_back(i);
  std::stable_sort(axes.begin(), axes.end(),
                   [&](int a, int b) { return std::abs(s[a]) > std::abs(s[b]); });
  for (size_t k = 0; k + 1 < axes.size(); ++k) {
    const int64_t outer = std::abs(s[axes[k]]), inner = std::abs(s[axes[k + 1]]);
    if (outer % inner || outer < inner * n[axes[k + 1]]) return std::nullopt;
  }
  return axes;
}

// The tensor's elements as views over the memory they span (`base`, which starts at the
// element with the lowest address), for axes that nest in `order`: the span, padded to a whole
// number of outermost steps, reshapes to (n[o0], s[o0] / s[o1], ..., s[o_last]); taking the
// first n of each and element 0 of the last gives the axes in memory order, which a transpose,
// a broadcast (stride-0 and length-1 axes) and flips (negative strides) put in the tensor's.
Array nested_view(Array base, const std::vector<int>& order, const std::vector<int64_t>& n,
                  const std::vector<int64_t>& s) {
  if (order.empty()) return base.reshape(Shape(n.size(), 1)).broadcast_to(n);
  const int64_t whole = n[order[0]] * std::abs(s[order[0]]);
  if (whole > base.size()) base = pad(base, {{0, whole - base.size()}});
  Shape dense{n[order[0]]};
  std::vector<Index> first{Slice(0, n[order[0]])};
  for (size_t k = 1; k < order.size(); ++k) {
    dense.push_back(std::abs(s[order[k - 1]]) / std::abs(s[order[k]]));
    first.push_back(Slice(0, n[order[k]]));
  }
  dense.push_back(std::abs(s[order.back()]));
  first.push_back(int64_t{0});
  Array v = base.reshape(dense).index(first);
  // Memory order to the tensor's: the axes in increasing order, each at its rank in `order`.
  std::vector<int> by_axis(order.begin(), order.end()), perm;
  std::sort(by_axis.begin(), by_axis.end());
  for (int a : by_axis)
    perm.push_back(static_cast<int>(std::find(order.begin(), order.end(), a) - order.begin()));
  Shape kept(n.size(), 1);
  Axes flipped;
  for (int a : order) {
    kept[a] = n[a];
    if (s[a] < 0) flipped.push_back(a);
  }
  v = v.transpose(perm).reshape(kept).broadcast_to(n);
  return flipped.empty() ? v : flip(v, flipped);
}

// Any other strides (rows that interleave, as a[:, ::2] of rows of odd length, or overlap): a
// gather from the span at start + sum_k i_k s_k, an index expression that fuses into the
// kernel reading the result as the views do. Clip, not Raise: the positions are in range by
// construction, and Raise would evaluate them now.
Array gathered_view(const Array& base, int64_t start, const std::vector<int64_t>& n,
                    const std::vector<int64_t>& s) {
  // The positions live where the tensor does: take() refuses operands on two devices.
  Array at = full(Shape(n.size(), 1), start, DType::Int64, base.device());
  for (size_t k = 0; k < n.size(); ++k) {
    Shape along(n.size(), 1);
    along[k] = n[k];
    at = at + (arange(0, n[k], 1, DType::Int64, base.device()) * s[k]).reshape(along);
  }
  return take(base, at.broadcast_to(n), 0, TakeMode::Clip);
}

// The tensor's elements over the memory they span, from `low`, the element with the lowest
// address (`first` is element 0).
Array strided_view(const char* low, const char* first, DType t, const std::vector<int64_t>& n,
                   const std::vector<int64_t>& s, Device d, std::shared_ptr<void> keep) {
  int64_t span = 1;
  for (size_t k = 0; k < n.size(); ++k) span += (n[k] - 1) * std::abs(s[k]);
  Array base = wrap(low, t, {span}, d, std::move(keep));
  if (auto order = nesting_order(n, s)) return nested_view(std::move(base), *order, n, s);
  return gathered_view(base, (first - low) / itemsize(t), n, s);
}

bool c_contiguous(const std::vector<int64_t>& n, const std::vector<int64_t>& s) {
  int64_t expect = 1;
  for (size_t i = n.size(); i-- > 0;) {
    if (n[i] != 1 && s[i] != expect) return false;
    expect *= n[i];
  }
  return true;
}

template <class Managed>
Array import_tensor(Managed* tensor) {
  if (!tensor) throw Error("kiln::from_dlpack: the tensor is null");
  const DLTensor& t = tensor->dl_tensor;
  const DType dtype = kiln_dtype(t.dtype);
  const Device device = kiln_device(t.device);
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    throw Error("kiln::from_dlpack: the tensor has ndim " + std::to_string(t.ndim) +
                " and no shape; the producer broke DLPack's contract");
  const std::vector<int64_t> n(t.shape, t.shape + t.ndim);
  std::vector<int64_t> s(n.size(), 1);
  for (size_t i = n.size(); i-- > 1;) s[i - 1] = s[i] * n[i];
  if (t.strides) s.assign(t.strides, t.strides + t.ndim);
  const char* first = static_cast<const char*>(t.data) + t.byte_offset;
  auto owner = std::make_shared<Imported<Managed>>(Imported<Managed>{tensor});
  Array a;
  if (shape_size(n) == 0 || c_contiguous(n, s)) {
    a = wrap(shape_size(n) ? first : nullptr, dtype, n, device, owner);
  } else {
    const char* low = first;
    for (size_t i = 0; i < n.size(); ++i)
      if (n[i] > 1 && s[i] < 0) low += (n[i] - 1) * s[i] * itemsize(dtype);
    a = strided_view(low, first, dtype, n, s, device, owner);
  }
  owner->armed = true;
  return a;
}

}  // namespace

DLManagedTensor* to_dlpack(const Array& a) { return export_tensor<DLManagedTensor>(a); }

DLManagedTensorVersioned* to_dlpack_versioned(const Array& a) {
  DLManagedTensorVersioned* t = export_tensor<DLManagedTensorVersioned>(a);
  t->version = {dlpack_abi::kMajor, dlpack_abi::kMinor};
  t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  return t;
}

Array from_dlpack(DLManagedTensor* tensor) { return import_tensor(tensor); }

Array from_dlpack(DLManagedTensorVersioned* tensor) {
  if (tensor && tensor->version.major != dlpack_abi::kMajor)
    throw Error("kiln::from_dlpack: the tensor is DLPack " + std::to_string(tensor->version.major) +
                "." + std::to_string(tensor->version.minor) + ", whose layout kiln does not know " +
                "(it reads 0.x and 1.x); ask the producer for a 1.x or unversioned tensor");
  return import_tensor(tensor);
}

}  // namespace kiln
