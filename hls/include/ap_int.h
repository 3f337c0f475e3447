// C-simulation stand-in for Xilinx's ap_int.h: arbitrary-width ap_uint<W> / ap_int<W> (Vivado/Vitis HLS replace it).
#ifndef TESSERA_HLS_AP_INT_H
#define TESSERA_HLS_AP_INT_H

// Written from scratch for Tessera's C simulation of the HLS design; interface-compatible with the
// subset of Xilinx's header the design uses. Differences a reader should know:
//  - values start at zero (Xilinx leaves them undefined);
//  - there is no implicit conversion to built-in integers (it makes mixed expressions ambiguous);
//    use to_int(), to_uint(), to_int64(), to_uint64(), to_bool();
//  - widths up to 32768 bits. Values of W <= 32 occupy 4 bytes and wider ones W/64 64-bit words, so
//    ap_uint<BUS> has exactly the size of a bus word and a DRAM image can be read through
//    ap_uint<BUS>* as on an AXI master port.
// Result widths follow Xilinx: + and - grow by one bit, * to the sum of the widths, bitwise ops to
// the wider operand; a result is signed if either operand is. Built-in integers take their own
// width and signedness. Shifts keep the left operand's type.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

template <int W, bool S>
class ap_int_base;
template <int W, bool S>
class ap_range_ref;
template <int W, bool S>
class ap_bit_ref;

namespace ap_detail {

// Built-in integers and enumerations (as their underlying type) mix with ap values.
template <typename T>
struct is_int_like {
  static constexpr bool value = std::is_integral<T>::value || std::is_enum<T>::value;
};
template <typename T, bool E = std::is_enum<T>::value>
struct underlying {
  using type = T;
};
template <typename T>
struct underlying<T, true> {
  using type = typename std::underlying_type<T>::type;
};

// The built-in integer T as an ap type of its own width and signedness.
template <typename T>
struct int_traits {
  using U = typename underlying<T>::type;
  static constexpr int width = std::is_same<U, bool>::value ? 1 : int(sizeof(U) * 8);
  static constexpr bool is_signed = std::is_signed<U>::value;
};

constexpr int max_int(int a, int b) { return a > b ? a : b; }

// Width of a + b / a - b: enough for both operands with their signs, plus the carry.
constexpr int add_width(int w1, bool s1, int w2, bool s2) {
  return max_int(w1 + ((s2 && !s1) ? 1 : 0), w2 + ((s1 && !s2) ? 1 : 0)) + 1;
}

// Copies `len` bits starting at bit `lo` of the canonical 64-bit limbs `src` (n limbs) into `dst`
// (dn limbs, zero-filled first).
inline void extract_bits(uint64_t* dst, int dn, const uint64_t* src, int n, int lo, int len) {
  for (int i = 0; i < dn; ++i) dst[i] = 0;
  const int shift = lo % 64;
  const int first = lo / 64;
  const int words = (len + 63) / 64;
  for (int j = 0; j < words && j < dn; ++j) {
    const int s = first + j;
    uint64_t v = s < n ? src[s] >> shift : 0;
    if (shift && s + 1 < n) v |= src[s + 1] << (64 - shift);
    dst[j] = v;
  }
  const int rem = len % 64;
  if (words <= dn && rem) dst[words - 1] &= (uint64_t(1) << rem) - 1;
}

// Writes the low `len` bits of `src` (n limbs) into bits [lo, lo + len) of `dst` (dn limbs).
inline void insert_bits(uint64_t* dst, int dn, const uint64_t* src, int n, int lo, int len) {
  for (int b = 0; b < len;) {
    const int pos = lo + b;
    const int word = pos / 64, off = pos % 64;
    int chunk = 64 - off;
    if (chunk > len - b) chunk = len - b;
    const int sw = b / 64, so = b % 64;
    uint64_t v = sw < n ? src[sw] >> so : 0;
    if (so && sw + 1 < n) v |= src[sw + 1] << (64 - so);
    const uint64_t mask = chunk == 64 ? ~uint64_t(0) : ((uint64_t(1) << chunk) - 1);
    if (word < dn) dst[word] = (dst[word] & ~(mask << off)) | ((v & mask) << off);
    b += chunk;
  }
}

}  // namespace ap_detail

// The common implementation of ap_uint<W> (S false) and ap_int<W> (S true).
template <int W, bool S>
class ap_int_base {
  static_assert(W >= 1 && W <= 32768, "ap_int widths are 1..32768 bits");

 public:
  static constexpr int width = W;
  static constexpr bool is_signed = S;
  static constexpr int limbs = (W + 63) / 64;
  // 32-bit storage for narrow values, so ap_uint<32> is a 4-byte bus word.
  using storage_t = typename std::conditional<(W <= 32), uint32_t, uint64_t>::type;

  ap_int_base() { std::memset(v_, 0, sizeof v_); }
  template <typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>
  ap_int_base(T x) {
    uint64_t l[limbs];
    using U = typename ap_detail::underlying<T>::type;
    const U u = static_cast<U>(x);
    const bool neg = ap_detail::int_traits<T>::is_signed && static_cast<long long>(u) < 0;
    l[0] = ap_detail::int_traits<T>::is_signed ? static_cast<uint64_t>(static_cast<long long>(u))
                                               : static_cast<uint64_t>(static_cast<unsigned long long>(u));
    for (int i = 1; i < limbs; ++i) l[i] = neg ? ~uint64_t(0) : 0;
    store(l);
  }
  template <int W2, bool S2>
  ap_int_base(const ap_int_base<W2, S2>& o) {
    uint64_t l[limbs];
    const uint64_t fill = o.negative() ? ~uint64_t(0) : 0;
    for (int i = 0; i < limbs; ++i) l[i] = i < ap_int_base<W2, S2>::limbs ? o.limb(i) : fill;
    store(l);
  }
  // A bit range of another value, zero-extended (as Xilinx's range reference converts).
  template <int W2, bool S2>
  ap_int_base(const ap_range_ref<W2, S2>& r) {
    uint64_t l[limbs];
    r.read_into(l, limbs);
    store(l);
  }

  // --- Canonical view: 64-bit limbs, bits past W equal to the sign (signed) or zero. ---
  uint64_t limb(int i) const {
    if (W <= 32) {
      uint64_t x = v_[0];
      if (S && W < 64 && ((x >> (W - 1)) & 1)) x |= ~uint64_t(0) << W;
      return x;
    }
    return static_cast<uint64_t>(v_[i]);
  }
  bool negative() const { return S && ((limb(limbs - 1) >> 63) & 1); }
  // Stores canonical limbs, normalizing the bits past W.
  void store(uint64_t* l) {
    const int rem = W % 64;
    if (rem) {
      uint64_t& top = l[limbs - 1];
      const uint64_t mask = (uint64_t(1) << rem) - 1;
      top &= mask;
      if (S && ((top >> (rem - 1)) & 1)) top |= ~mask;
    }
    for (int i = 0; i < limbs; ++i) v_[i] = static_cast<storage_t>(l[i]);
  }
  void load(uint64_t* l) const {
    for (int i = 0; i < limbs; ++i) l[i] = limb(i);
  }

  // --- Conversions ---
  int to_int() const { return static_cast<int>(static_cast<int64_t>(limb(0))); }
  unsigned to_uint() const { return static_cast<unsigned>(limb(0)); }
  int64_t to_int64() const { return static_cast<int64_t>(limb(0)); }
  uint64_t to_uint64() const { return limb(0); }
  bool to_bool() const {
    for (int i = 0; i < limbs; ++i)
      if (limb(i)) return true;
    return false;
  }
  int length() const { return W; }
  // Hexadecimal digits of the W-bit pattern, most significant first (for test messages).
  std::string to_hex() const {
    static const char kDigits[] = "0123456789abcdef";
    std::string s;
    for (int d = (W + 3) / 4 - 1; d >= 0; --d) {
      const int bit = 4 * d;
      s += kDigits[(limb(bit / 64) >> (bit % 64)) & 0xf];
    }
    return s;
  }

  // --- Bit and range access ---
  ap_bit_ref<W, S> operator[](int i) { return ap_bit_ref<W, S>(*this, i); }
  bool operator[](int i) const { return test(i); }
  bool test(int i) const { return (limb(i / 64) >> (i % 64)) & 1; }
  void set_bit(int i, bool b) {
    uint64_t l[limbs];
    load(l);
    l[i / 64] = b ? (l[i / 64] | (uint64_t(1) << (i % 64))) : (l[i / 64] & ~(uint64_t(1) << (i % 64)));
    store(l);
  }
  ap_range_ref<W, S> range(int hi, int lo) { return ap_range_ref<W, S>(this, hi, lo); }
  ap_int_base<W, false> range(int hi, int lo) const {
    uint64_t l[limbs], r[limbs];
    load(l);
    ap_detail::extract_bits(r, limbs, l, limbs, lo, hi - lo + 1);
    ap_int_base<W, false> out;
    out.store(r);
    return out;
  }
  ap_range_ref<W, S> operator()(int hi, int lo) { return range(hi, lo); }
  // {this, o}: this value in the high bits (Xilinx's concat).
  template <int W2, bool S2>
  ap_int_base<W + W2, false> concat(const ap_int_base<W2, S2>& o) const {
    ap_int_base<W + W2, false> r{ap_int_base<W2, false>(o)};
    r.range(W + W2 - 1, W2) = *this;
    return r;
  }

  // --- Shifts (the result keeps this type, as in Xilinx's ap_int) ---
  ap_int_base operator<<(int n) const {
    if (n < 0) return *this >> -n;
    uint64_t l[limbs], r[limbs];
    load(l);
    const int ws = n / 64, bs = n % 64;
    for (int i = limbs - 1; i >= 0; --i) {
      const int s = i - ws;
      uint64_t x = s >= 0 ? l[s] << bs : 0;
      if (bs && s - 1 >= 0) x |= l[s - 1] >> (64 - bs);
      r[i] = x;
    }
    ap_int_base out;
    out.store(r);
    return out;
  }
  ap_int_base operator>>(int n) const {
    if (n < 0) return *this << -n;
    uint64_t l[limbs], r[limbs];
    load(l);
    const uint64_t fill = negative() ? ~uint64_t(0) : 0;
    const int ws = n / 64, bs = n % 64;
    for (int i = 0; i < limbs; ++i) {
      const int s = i + ws;
      const uint64_t lo = s < limbs ? l[s] : fill;
      const uint64_t hi = s + 1 < limbs ? l[s + 1] : fill;
      r[i] = bs ? (lo >> bs) | (hi << (64 - bs)) : lo;
    }
    ap_int_base out;
    out.store(r);
    return out;
  }
  template <int W2, bool S2>
  ap_int_base operator<<(const ap_int_base<W2, S2>& n) const { return *this << n.to_int(); }
  template <int W2, bool S2>
  ap_int_base operator>>(const ap_int_base<W2, S2>& n) const { return *this >> n.to_int(); }

  ap_int_base operator~() const {
    uint64_t l[limbs];
    load(l);
    for (auto& x : l) x = ~x;
    ap_int_base out;
    out.store(l);
    return out;
  }
  ap_int_base<W + 1, true> operator-() const { return ap_int_base<W + 1, true>(0) - *this; }
  ap_int_base operator+() const { return *this; }
  bool operator!() const { return !to_bool(); }

  // --- Compound assignment: the full-width result, truncated back to W bits ---
  template <typename T>
  ap_int_base& operator+=(const T& o) { return *this = ap_int_base(*this + o); }
  template <typename T>
  ap_int_base& operator-=(const T& o) { return *this = ap_int_base(*this - o); }
  template <typename T>
  ap_int_base& operator*=(const T& o) { return *this = ap_int_base(*this * o); }
  template <typename T>
  ap_int_base& operator&=(const T& o) { return *this = ap_int_base(*this & o); }
  template <typename T>
  ap_int_base& operator|=(const T& o) { return *this = ap_int_base(*this | o); }
  template <typename T>
  ap_int_base& operator^=(const T& o) { return *this = ap_int_base(*this ^ o); }
  ap_int_base& operator<<=(int n) { return *this = *this << n; }
  ap_int_base& operator>>=(int n) { return *this = *this >> n; }
  ap_int_base& operator++() { return *this += 1; }
  ap_int_base& operator--() { return *this -= 1; }
  ap_int_base operator++(int) { ap_int_base t = *this; *this += 1; return t; }
  ap_int_base operator--(int) { ap_int_base t = *this; *this -= 1; return t; }

 private:
  storage_t v_[limbs];
};

// A writable view of bits [lo, hi] of a value (x.range(hi, lo)).
template <int W, bool S>
class ap_range_ref {
 public:
  ap_range_ref(ap_int_base<W, S>* ref, int hi, int lo) : ref_(ref), hi_(hi), lo_(lo) {}
  int length() const { return hi_ - lo_ + 1; }
  void read_into(uint64_t* dst, int dn) const {
    uint64_t l[ap_int_base<W, S>::limbs];
    ref_->load(l);
    ap_detail::extract_bits(dst, dn, l, ap_int_base<W, S>::limbs, lo_, length());
  }
  ap_int_base<W, false> get() const { return ap_int_base<W, false>(*this); }
  uint64_t to_uint64() const {
    uint64_t r;
    read_into(&r, 1);
    return r;
  }
  unsigned to_uint() const { return static_cast<unsigned>(to_uint64()); }
  int to_int() const { return static_cast<int>(to_uint64()); }
  int64_t to_int64() const { return static_cast<int64_t>(to_uint64()); }
  template <int W2, bool S2>
  ap_range_ref& operator=(const ap_int_base<W2, S2>& v) {
    uint64_t l[ap_int_base<W, S>::limbs], s[ap_int_base<W2, S2>::limbs];
    ref_->load(l);
    v.load(s);
    ap_detail::insert_bits(l, ap_int_base<W, S>::limbs, s, ap_int_base<W2, S2>::limbs, lo_, length());
    ref_->store(l);
    return *this;
  }
  template <typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>
  ap_range_ref& operator=(T v) {
    return *this = ap_int_base<ap_detail::int_traits<T>::width, ap_detail::int_traits<T>::is_signed>(v);
  }
  ap_range_ref& operator=(const ap_range_ref& o) { return *this = o.get(); }
  template <int W2, bool S2>
  ap_range_ref& operator=(const ap_range_ref<W2, S2>& o) { return *this = o.get(); }

 private:
  ap_int_base<W, S>* ref_;
  int hi_, lo_;
};

// A writable view of one bit (x[i]).
template <int W, bool S>
class ap_bit_ref {
 public:
  ap_bit_ref(ap_int_base<W, S>& ref, int i) : ref_(ref), i_(i) {}
  operator bool() const { return ref_.test(i_); }
  ap_bit_ref& operator=(bool b) { ref_.set_bit(i_, b); return *this; }
  ap_bit_ref& operator=(const ap_bit_ref& o) { return *this = bool(o); }

 private:
  ap_int_base<W, S>& ref_;
  int i_;
};

template <int W>
class ap_uint : public ap_int_base<W, false> {
 public:
  using base = ap_int_base<W, false>;
  ap_uint() = default;
  template <typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>
  ap_uint(T x) : base(x) {}
  template <int W2, bool S2>
  ap_uint(const ap_int_base<W2, S2>& o) : base(o) {}
  template <int W2, bool S2>
  ap_uint(const ap_range_ref<W2, S2>& r) : base(r) {}
};

template <int W>
class ap_int : public ap_int_base<W, true> {
 public:
  using base = ap_int_base<W, true>;
  ap_int() = default;
  template <typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>
  ap_int(T x) : base(x) {}
  template <int W2, bool S2>
  ap_int(const ap_int_base<W2, S2>& o) : base(o) {}
  template <int W2, bool S2>
  ap_int(const ap_range_ref<W2, S2>& r) : base(r) {}
};

namespace ap_detail {

template <int W, bool S>
using base_t = ap_int_base<W, S>;

// a + b (sub false) or a - b (sub true) over n canonical limbs.
inline void add_limbs(uint64_t* r, const uint64_t* a, const uint64_t* b, int n, bool sub) {
  uint64_t carry = sub ? 1 : 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t y = sub ? ~b[i] : b[i];
    const uint64_t s = a[i] + y;
    const uint64_t c1 = s < a[i];
    r[i] = s + carry;
    carry = c1 | (r[i] < s);
  }
}

// Low n limbs of a * b (two's complement: correct for signed operands given canonical limbs).
inline void mul_limbs(uint64_t* r, const uint64_t* a, const uint64_t* b, int n) {
  for (int i = 0; i < n; ++i) r[i] = 0;
  for (int i = 0; i < n; ++i) {
    if (!a[i]) continue;
    unsigned __int128 carry = 0;
    for (int j = 0; i + j < n; ++j) {
      const unsigned __int128 t = (unsigned __int128)a[i] * b[j] + r[i + j] + carry;
      r[i + j] = static_cast<uint64_t>(t);
      carry = t >> 64;
    }
  }
}

template <int R, bool RS, int W1, bool S1, int W2, bool S2>
base_t<R, RS> arith(const base_t<W1, S1>& a, const base_t<W2, S2>& b, char op) {
  const base_t<R, RS> x(a), y(b);
  constexpr int n = base_t<R, RS>::limbs;
  uint64_t la[n], lb[n], lr[n];
  x.load(la);
  y.load(lb);
  switch (op) {
    case '+': add_limbs(lr, la, lb, n, false); break;
    case '-': add_limbs(lr, la, lb, n, true); break;
    case '*': mul_limbs(lr, la, lb, n); break;
    case '&': for (int i = 0; i < n; ++i) lr[i] = la[i] & lb[i]; break;
    case '|': for (int i = 0; i < n; ++i) lr[i] = la[i] | lb[i]; break;
    default: for (int i = 0; i < n; ++i) lr[i] = la[i] ^ lb[i]; break;
  }
  base_t<R, RS> out;
  out.store(lr);
  return out;
}

// Three-way comparison of the mathematical values: -1, 0 or 1.
template <int W1, bool S1, int W2, bool S2>
int compare(const base_t<W1, S1>& a, const base_t<W2, S2>& b) {
  constexpr int R = max_int(W1, W2) + 1;  // signed and one bit wider: both values fit exactly
  const base_t<R, true> x(a), y(b);
  constexpr int n = base_t<R, true>::limbs;
  if (x.negative() != y.negative()) return x.negative() ? -1 : 1;
  for (int i = n - 1; i >= 0; --i)
    if (x.limb(i) != y.limb(i)) return x.limb(i) < y.limb(i) ? -1 : 1;
  return 0;
}

template <typename T>
using as_ap = base_t<int_traits<T>::width, int_traits<T>::is_signed>;

}  // namespace ap_detail

// Arithmetic and bitwise operators between ap values, and between an ap value and a built-in integer.
#define TESSERA_AP_BINARY(OP, RW)                                                                                    \
  template <int W1, bool S1, int W2, bool S2>                                                                        \
  ap_int_base<RW, S1 || S2> operator OP(const ap_int_base<W1, S1>& a, const ap_int_base<W2, S2>& b) {                \
    return ap_detail::arith<RW, S1 || S2>(a, b, (#OP)[0]);                                                           \
  }                                                                                                                  \
  template <int W1, bool S1, typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>        \
  auto operator OP(const ap_int_base<W1, S1>& a, T b) { return a OP ap_detail::as_ap<T>(b); }                        \
  template <int W2, bool S2, typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>        \
  auto operator OP(T a, const ap_int_base<W2, S2>& b) { return ap_detail::as_ap<T>(a) OP b; }

TESSERA_AP_BINARY(+, (ap_detail::add_width(W1, S1, W2, S2)))
TESSERA_AP_BINARY(-, (ap_detail::add_width(W1, S1, W2, S2)))
TESSERA_AP_BINARY(*, (W1 + W2))
TESSERA_AP_BINARY(&, (ap_detail::max_int(W1, W2)))
TESSERA_AP_BINARY(|, (ap_detail::max_int(W1, W2)))
TESSERA_AP_BINARY(^, (ap_detail::max_int(W1, W2)))
#undef TESSERA_AP_BINARY

#define TESSERA_AP_COMPARE(OP)                                                                                       \
  template <int W1, bool S1, int W2, bool S2>                                                                        \
  bool operator OP(const ap_int_base<W1, S1>& a, const ap_int_base<W2, S2>& b) {                                     \
    return ap_detail::compare(a, b) OP 0;                                                                            \
  }                                                                                                                  \
  template <int W1, bool S1, typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>        \
  bool operator OP(const ap_int_base<W1, S1>& a, T b) { return ap_detail::compare(a, ap_detail::as_ap<T>(b)) OP 0; } \
  template <int W2, bool S2, typename T, typename std::enable_if<ap_detail::is_int_like<T>::value, int>::type = 0>        \
  bool operator OP(T a, const ap_int_base<W2, S2>& b) { return ap_detail::compare(ap_detail::as_ap<T>(a), b) OP 0; }

TESSERA_AP_COMPARE(==)
TESSERA_AP_COMPARE(!=)
TESSERA_AP_COMPARE(<)
TESSERA_AP_COMPARE(<=)
TESSERA_AP_COMPARE(>)
TESSERA_AP_COMPARE(>=)
#undef TESSERA_AP_COMPARE

#endif  // TESSERA_HLS_AP_INT_H
