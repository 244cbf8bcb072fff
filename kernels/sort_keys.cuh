// Sort keys: NumPy's order of each kiln dtype as unsigned integers whose plain order is that
// order, so a radix sort (CUB's on a GPU) and a comparison sort (std::stable_sort on the host)
// agree bit for bit. g++ compiles this for the host executor, nvcc for src/cuda/sort_cub.cu, and
// NVRTC takes it as "kiln/sort_keys.cuh" (no CUDA or C++ library header here).
//
// NumPy's order (npy_sort's LT): -0.0 and +0.0 are equal, every NaN is equal to every other NaN
// and greater than everything else (NaNs last), whatever its sign and payload. Complex numbers
// order lexicographically, real part then imaginary part, with NaNs in four classes, each after
// the one before: both parts numbers; only the imaginary part NaN (then by the real part); only
// the real part NaN (then by the imaginary part); both NaN.
//
// A dtype has `keys` keys, listed least significant first (the order a stable LSD radix sort
// applies them); each is `key_bits(k)` bits wide, stored in `key_bytes(k)` bytes (1, 4 or 8).
// Equal keys mean equal under NumPy's order, so a stable sort on them is NumPy's stable sort.
#pragma once

#ifdef __CUDACC__
#define KILN_SORT_FN __host__ __device__ __forceinline__
#else
#define KILN_SORT_FN inline
#endif

namespace kiln::sort_keys {

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// The key of a float32's bits: the sign bit flipped for positives, every bit for negatives
// (so the unsigned order is the numeric one), -0.0 as +0.0, every NaN the largest key.
KILN_SORT_FN u32 float_key(u32 b) {
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
KILN_SORT_FN u64 double_key(u64 b) {
  if ((b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return 0xffffffffffffffffull;
  if (b == 0x8000000000000000ull) b = 0;
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
// float16 (infinity 0x7c00) and bfloat16 (0x7f80): 16-bit keys.
KILN_SORT_FN u32 half_key(u16 b, u16 inf) {
  u32 x = b;
  if ((x & 0x7fffu) > inf) return 0xffffu;
  if (x == 0x8000u) x = 0;
  return (x & 0x8000u) ? (~x & 0xffffu) : (x | 0x8000u);
}

// Storage of a complex value's parts as bits.
struct c64_bits {
  u32 re, im;
};
struct c128_bits {
  u64 re, im;
};

// Complex keys, least significant first: the imaginary part's key (class 0 only), the key
// that orders within the class (the real part for classes 0 and 1, the imaginary part for
// class 2), the class (2 bits).
template <class U>
KILN_SORT_FN u64 complex_key(U re_key, U im_key, U nan_key, int k) {
  const int cls = (re_key == nan_key ? 2 : 0) + (im_key == nan_key ? 1 : 0);
  if (k == 2) return (u64)cls;
  if (k == 1) return cls <= 1 ? (u64)re_key : cls == 2 ? (u64)im_key : 0;
  return cls == 0 ? (u64)im_key : 0;
}

// order<Tag>: bits (the stored type), keys, key_bits(k), key_bytes(k), key(bits, k); and for
// orders whose single key is the value itself (integers and bool), decode(key) -> bits.
struct U8 {};  // bool, uint8
struct I8 {};
struct U16 {};
struct I16 {};
struct U32 {};
struct I32 {};
struct U64 {};
struct I64 {};
struct F16 {};
struct BF16 {};
struct F32 {};
struct F64 {};
struct C64 {};
struct C128 {};

template <class Tag>
struct order;

// One key of `KeyBits` bits stored in KeyT, the value's bits with `flip` (the sign bit of a
// signed type) flipped.
template <class Bits, class KeyT, int KeyBits, unsigned long long Flip>
struct integer_order {
  typedef Bits bits;
  typedef KeyT key_type;
  static const int keys = 1;
  static KILN_SORT_FN int key_bits(int) { return KeyBits; }
  static KILN_SORT_FN int key_bytes(int) { return (int)sizeof(KeyT); }
  static KILN_SORT_FN u64 key(bits v, int) { return (u64)(KeyT)((KeyT)v ^ (KeyT)Flip); }
  static KILN_SORT_FN bits decode(KeyT k) { return (bits)(k ^ (KeyT)Flip); }
};
template <>
struct order<U8> : integer_order<u8, u8, 8, 0> {};
template <>
struct order<I8> : integer_order<u8, u8, 8, 0x80> {};
template <>
struct order<U16> : integer_order<u16, u32, 16, 0> {};
template <>
struct order<I16> : integer_order<u16, u32, 16, 0x8000> {};
template <>
struct order<U32> : integer_order<u32, u32, 32, 0> {};
template <>
struct order<I32> : integer_order<u32, u32, 32, 0x80000000u> {};
template <>
struct order<U64> : integer_order<u64, u64, 64, 0> {};
template <>
struct order<I64> : integer_order<u64, u64, 64, 0x8000000000000000ull> {};

template <class Bits, class KeyT, int KeyBits>
struct float_order {
  typedef Bits bits;
  typedef KeyT key_type;
  static const int keys = 1;
  static KILN_SORT_FN int key_bits(int) { return KeyBits; }
  static KILN_SORT_FN int key_bytes(int) { return (int)sizeof(KeyT); }
};
template <>
struct order<F16> : float_order<u16, u32, 16> {
  static KILN_SORT_FN u64 key(bits v, int) { return half_key(v, 0x7c00u); }
};
template <>
struct order<BF16> : float_order<u16, u32, 16> {
  static KILN_SORT_FN u64 key(bits v, int) { return half_key(v, 0x7f80u); }
};
template <>
struct order<F32> : float_order<u32, u32, 32> {
  static KILN_SORT_FN u64 key(bits v, int) { return float_key(v); }
};
template <>
struct order<F64> : float_order<u64, u64, 64> {
  static KILN_SORT_FN u64 key(bits v, int) { return double_key(v); }
};

template <>
struct order<C64> {
  typedef c64_bits bits;
  static const int keys = 3;
  static KILN_SORT_FN int key_bits(int k) { return k == 2 ? 2 : 32; }
  static KILN_SORT_FN int key_bytes(int k) { return k == 2 ? 1 : 4; }
  static KILN_SORT_FN u64 key(bits v, int k) {
    return complex_key<u32>(float_key(v.re), float_key(v.im), 0xffffffffu, k);
  }
};
template <>
struct order<C128> {
  typedef c128_bits bits;
  static const int keys = 3;
  static KILN_SORT_FN int key_bits(int k) { return k == 2 ? 2 : 64; }
  static KILN_SORT_FN int key_bytes(int k) { return k == 2 ? 1 : 8; }
  static KILN_SORT_FN u64 key(bits v, int k) {
    return complex_key<u64>(double_key(v.re), double_key(v.im), 0xffffffffffffffffull, k);
  }
};

}  // namespace kiln::sort_keys
