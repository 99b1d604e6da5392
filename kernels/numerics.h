// The exact numerics of the DVE (spec/semantics.md §3 and §4.1): dtype conversions through the
// fp32 hub, the canonical-NaN rule, the Newton reciprocal/division/rsqrt paths and the IEEE
// 754-2019 maximumNumber/minimumNumber. Every function here is a pure function of its arguments
// (no global state, no dependence on the FPU's fp16/bf16 instructions or its FTZ/DAZ mode for the
// conversions, which are integer bit manipulation), so the interpreter and the JIT get the same
// bits from them.
//
// Raw element bits are passed as uint32_t holding the element in the low DtypeSize(d) bytes;
// values returned as raw bits are masked to that width (an INT8 −1 is 0xFF, not 0xFFFFFFFF).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "frontend/isa.h"

namespace dvejit::num {

// ---------------------------------------------------------------------------------------------
// Bits and the canonical NaN (semantics.md §3.2)

inline constexpr uint32_t kCanonicalNaNBits = 0x7FC00000u;  // fp32
inline constexpr uint16_t kBf16CanonicalNaN = 0x7FC0;
inline constexpr uint16_t kF16CanonicalNaN = 0x7E00;
inline constexpr uint8_t kE5M2CanonicalNaN = 0x7E;
inline constexpr uint8_t kE4M3CanonicalNaN = 0x7F;
inline constexpr uint8_t kE3M4CanonicalNaN = 0x78;

constexpr uint32_t F32Bits(float v) { return std::bit_cast<uint32_t>(v); }
constexpr float BitsToF32(uint32_t b) { return std::bit_cast<float>(b); }
constexpr bool IsNaNBits(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
constexpr bool IsNaN(float v) { return IsNaNBits(F32Bits(v)); }

// fp32 bits 0x7FC00000.
constexpr float CanonicalNaN() { return BitsToF32(kCanonicalNaNBits); }
// "A NaN produced by an arithmetic operation is the canonical positive quiet NaN from the moment it
// is produced": every arithmetic result goes through Canon. Non-NaN values pass unchanged.
constexpr float Canon(float v) { return IsNaN(v) ? CanonicalNaN() : v; }
// The fp32 store conversion: NaN → 0x7FC00000, everything else bit-exact.
constexpr uint32_t CanonBits(float v) { return IsNaN(v) ? kCanonicalNaNBits : F32Bits(v); }

// ---------------------------------------------------------------------------------------------
// Narrow float formats, generic over exponent/mantissa width.

namespace detail {

struct Fmt {
  int ebits;              // exponent field width
  int mbits;              // mantissa field width
  int bias;
  bool fn;                // "finite": no inf, NaN only at all-ones exponent+mantissa (E4M3fn)
  uint32_t canon_nan;     // stored for every NaN (positive)
  uint32_t overflow_enc;  // magnitude stored when the RNE result exceeds max finite
  uint32_t inf_enc;       // magnitude stored for ±inf
};

// Largest finite magnitude encoding.
constexpr uint32_t MaxFiniteEnc(Fmt f) {
  return f.fn ? (1u << (f.ebits + f.mbits)) - 2u : (((1u << f.ebits) - 1u) << f.mbits) - 1u;
}

inline constexpr Fmt kF16{5, 10, 15, false, kF16CanonicalNaN, 0x7C00, 0x7C00};
inline constexpr Fmt kE5M2{5, 2, 15, false, kE5M2CanonicalNaN, 0x7B, 0x7C};
inline constexpr Fmt kE4M3{4, 3, 7, true, kE4M3CanonicalNaN, 0x7E, 0x7E};
inline constexpr Fmt kE3M4{3, 4, 3, false, kE3M4CanonicalNaN, 0x6F, 0x70};

// Exact widening to fp32 bits. Inf/NaN (and E4M3's S.1111.111 NaN) keep sign and mantissa, the
// mantissa moved to the top of fp32's (E4M3 NaN → sign | 0x7FF00000). Subnormals are normalised.
template <Fmt F>
constexpr uint32_t WidenBits(uint32_t v) {
  constexpr uint32_t emask = (1u << F.ebits) - 1u;
  constexpr uint32_t mmask = (1u << F.mbits) - 1u;
  const uint32_t sign = ((v >> (F.ebits + F.mbits)) & 1u) << 31;
  const uint32_t e = (v >> F.mbits) & emask;
  const uint32_t m = v & mmask;
  if (e == emask && (!F.fn || m == mmask)) return sign | 0x7F800000u | (m << (23 - F.mbits));
  if (e == 0) {
    if (m == 0) return sign;
    const int p = std::bit_width(m) - 1;  // leading one; value = 1.f × 2^(p + 1 − bias − M)
    const uint32_t exp32 = static_cast<uint32_t>(p + 1 - F.bias - F.mbits + 127);
    return sign | (exp32 << 23) | ((m ^ (1u << p)) << (23 - p));
  }
  return sign | ((e - F.bias + 127) << 23) | (m << (23 - F.mbits));
}

// fp32 bits → narrow bits, round to nearest even, overflow per F, NaN → F.canon_nan.
template <Fmt F>
constexpr uint32_t NarrowBits(uint32_t b) {
  constexpr int M = F.mbits;
  const uint32_t sign = (b >> 31) << (F.ebits + F.mbits);
  const uint32_t abs = b & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return F.canon_nan;
  if (abs == 0x7F800000u) return sign | F.inf_enc;
  int e32 = static_cast<int>(abs >> 23);
  uint32_t sig = abs & 0x7FFFFFu;
  if (e32 != 0) {
    sig |= 0x800000u;
  } else {
    e32 = 1;  // fp32 subnormal: same scale as exponent field 1, no implicit bit
  }
  // value = sig × 2^(e32 − 150); the target's biased exponent if it were normal:
  const int E = e32 - 127 + F.bias;
  const int Eeff = E < 1 ? 1 : E;  // below the normal range: the subnormal scale (= field 1)
  int shift = 23 - M + (Eeff - E);
  if (shift > 31) shift = 31;  // sig < 2^24 < half: rounds to 0 either way
  uint32_t q = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  // Encodings are linear across the subnormal/normal boundary and across binades, so a carry out
  // of the mantissa lands on the next exponent correctly.
  const uint32_t enc = (static_cast<uint32_t>(Eeff - 1) << M) + q;
  if (enc > MaxFiniteEnc(F)) return sign | F.overflow_enc;
  return sign | enc;
}

template <Fmt F>
constexpr std::array<uint32_t, 256> MakeWidenTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) t[i] = WidenBits<F>(i);
  return t;
}
inline constexpr std::array<uint32_t, 256> kE5M2ToF32 = MakeWidenTable<kE5M2>();
inline constexpr std::array<uint32_t, 256> kE4M3ToF32 = MakeWidenTable<kE4M3>();
inline constexpr std::array<uint32_t, 256> kE3M4ToF32 = MakeWidenTable<kE3M4>();

}  // namespace detail

// ---- widening (exact) ----
constexpr float Bf16ToF32(uint16_t v) { return BitsToF32(static_cast<uint32_t>(v) << 16); }
constexpr float F16ToF32(uint16_t v) { return BitsToF32(detail::WidenBits<detail::kF16>(v)); }
constexpr float E5M2ToF32(uint8_t v) { return BitsToF32(detail::kE5M2ToF32[v]); }
constexpr float E4M3ToF32(uint8_t v) { return BitsToF32(detail::kE4M3ToF32[v]); }
constexpr float E3M4ToF32(uint8_t v) { return BitsToF32(detail::kE3M4ToF32[v]); }

// ---- narrowing (round to nearest even) ----
// bf16, fp16: overflow → ±inf; NaN → 0x7FC0 / 0x7E00.
constexpr uint16_t F32ToBf16(float v) {
  const uint32_t b = F32Bits(v);
  if (IsNaNBits(b)) return kBf16CanonicalNaN;
  // Adding 0x7FFF + lsb rounds to nearest even; a carry into the exponent is the correct next
  // binade, and past the largest finite value it lands exactly on ±inf.
  return static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}
constexpr uint16_t F32ToF16(float v) {
  return static_cast<uint16_t>(detail::NarrowBits<detail::kF16>(F32Bits(v)));
}
// E5M2, E3M4: finite overflow → ±max finite (0x7B / 0x6F), ±inf → ±inf, NaN → 0x7E / 0x78.
constexpr uint8_t F32ToE5M2(float v) {
  return static_cast<uint8_t>(detail::NarrowBits<detail::kE5M2>(F32Bits(v)));
}
constexpr uint8_t F32ToE3M4(float v) {
  return static_cast<uint8_t>(detail::NarrowBits<detail::kE3M4>(F32Bits(v)));
}
// E4M3 (fn): overflow and ±inf → ±448 (0x7E / 0xFE), NaN → 0x7F.
constexpr uint8_t F32ToE4M3(float v) {
  return static_cast<uint8_t>(detail::NarrowBits<detail::kE4M3>(F32Bits(v)));
}

// ---------------------------------------------------------------------------------------------
// Integers

// fp32 → integer: round toward zero, saturate to [lo, hi], NaN → 0.
inline int64_t F32ToIntSat(float v, int64_t lo, int64_t hi) {
  if (IsNaN(v)) return 0;
  if (v <= static_cast<float>(lo)) return lo;  // lo, hi are exact in fp32 or compared
  if (static_cast<double>(v) >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);  // C conversion truncates toward zero
}
inline int8_t F32ToI8(float v) { return static_cast<int8_t>(F32ToIntSat(v, INT8_MIN, INT8_MAX)); }
inline uint8_t F32ToU8(float v) { return static_cast<uint8_t>(F32ToIntSat(v, 0, UINT8_MAX)); }
inline int16_t F32ToI16(float v) {
  return static_cast<int16_t>(F32ToIntSat(v, INT16_MIN, INT16_MAX));
}
inline uint16_t F32ToU16(float v) { return static_cast<uint16_t>(F32ToIntSat(v, 0, UINT16_MAX)); }
inline int32_t F32ToI32(float v) {
  return static_cast<int32_t>(F32ToIntSat(v, INT32_MIN, INT32_MAX));
}
inline uint32_t F32ToU32(float v) { return static_cast<uint32_t>(F32ToIntSat(v, 0, UINT32_MAX)); }

// int32/uint32 → fp32 round to nearest even (the C conversion in the default rounding mode).
inline float I32ToF32(int32_t v) { return static_cast<float>(v); }
inline float U32ToF32(uint32_t v) { return static_cast<float>(v); }

constexpr int64_t SaturateI64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ---------------------------------------------------------------------------------------------
// Dtype-generic loads, stores and casts.

constexpr bool IsIntD(Dtype d) {
  switch (d) {
    case Dtype::INT8: case Dtype::UINT8: case Dtype::INT16: case Dtype::UINT16:
    case Dtype::INT32: case Dtype::UINT32:
      return true;
    default:
      return false;
  }
}

// Size mask of a data dtype's raw bits (0 for unsupported dtypes).
constexpr uint32_t RawMask(Dtype d) {
  switch (d) {
    case Dtype::INT8: case Dtype::UINT8:
    case Dtype::FP8_EXP3: case Dtype::FP8_EXP4: case Dtype::FP8_EXP5:
      return 0xFFu;
    case Dtype::INT16: case Dtype::UINT16: case Dtype::BFLOAT16: case Dtype::FP16:
      return 0xFFFFu;
    case Dtype::INT32: case Dtype::UINT32: case Dtype::FP32: case Dtype::FP32R:
      return 0xFFFFFFFFu;
    default:
      return 0;
  }
}

// Integer value of an element: sign extension (INT8/16/32) or zero extension (UINT8/16/32).
// Float dtypes: the raw bits, zero-extended (as bits, not as a number). Unsupported dtypes: 0.
constexpr int64_t LoadAsInt(Dtype d, uint32_t raw) {
  switch (d) {
    case Dtype::INT8: return static_cast<int8_t>(raw & 0xFFu);
    case Dtype::INT16: return static_cast<int16_t>(raw & 0xFFFFu);
    case Dtype::INT32: return static_cast<int32_t>(raw);
    default: return raw & RawMask(d);
  }
}

// The fp32 hub (§3.1/§3.2): an element widened to fp32. Exact for every dtype except INT32/UINT32
// (round to nearest even). NaNs keep sign and payload (not quieted). Unsupported dtypes: +0.
inline float LoadAsF32(Dtype d, uint32_t raw) {
  switch (d) {
    case Dtype::INT8: return static_cast<float>(static_cast<int8_t>(raw & 0xFFu));
    case Dtype::UINT8: return static_cast<float>(raw & 0xFFu);
    case Dtype::INT16: return static_cast<float>(static_cast<int16_t>(raw & 0xFFFFu));
    case Dtype::UINT16: return static_cast<float>(raw & 0xFFFFu);
    case Dtype::INT32: return I32ToF32(static_cast<int32_t>(raw));
    case Dtype::UINT32: return U32ToF32(raw);
    case Dtype::BFLOAT16: return Bf16ToF32(static_cast<uint16_t>(raw));
    case Dtype::FP16: return F16ToF32(static_cast<uint16_t>(raw));
    case Dtype::FP32: case Dtype::FP32R: return BitsToF32(raw);
    case Dtype::FP8_EXP3: return E3M4ToF32(static_cast<uint8_t>(raw));
    case Dtype::FP8_EXP4: return E4M3ToF32(static_cast<uint8_t>(raw));
    case Dtype::FP8_EXP5: return E5M2ToF32(static_cast<uint8_t>(raw));
    default: return 0.0f;
  }
}

// The store conversion of an arithmetic result to d's raw bits: fp32/fp32r with canonical NaN,
// narrow floats rounded to nearest even (NaN canonical), integers truncated and saturated
// (NaN → 0). Unsupported dtypes: 0.
inline uint32_t StoreFromF32(Dtype d, float v) {
  switch (d) {
    case Dtype::INT8: return static_cast<uint8_t>(F32ToI8(v));
    case Dtype::UINT8: return F32ToU8(v);
    case Dtype::INT16: return static_cast<uint16_t>(F32ToI16(v));
    case Dtype::UINT16: return F32ToU16(v);
    case Dtype::INT32: return static_cast<uint32_t>(F32ToI32(v));
    case Dtype::UINT32: return F32ToU32(v);
    case Dtype::BFLOAT16: return F32ToBf16(v);
    case Dtype::FP16: return F32ToF16(v);
    case Dtype::FP32: case Dtype::FP32R: return CanonBits(v);
    case Dtype::FP8_EXP3: return F32ToE3M4(v);
    case Dtype::FP8_EXP4: return F32ToE4M3(v);
    case Dtype::FP8_EXP5: return F32ToE5M2(v);
    default: return 0;
  }
}

// An exact integer value stored into d: integer dtypes saturate directly (never through fp32);
// float dtypes go through fp32 (one rounding to nearest even from the exact value), then the
// fp32 → d store (a second rounding).
inline uint32_t StoreFromInt(Dtype d, int64_t v) {
  switch (d) {
    case Dtype::INT8: return static_cast<uint8_t>(SaturateI64(v, INT8_MIN, INT8_MAX));
    case Dtype::UINT8: return static_cast<uint8_t>(SaturateI64(v, 0, UINT8_MAX));
    case Dtype::INT16: return static_cast<uint16_t>(SaturateI64(v, INT16_MIN, INT16_MAX));
    case Dtype::UINT16: return static_cast<uint16_t>(SaturateI64(v, 0, UINT16_MAX));
    case Dtype::INT32: return static_cast<uint32_t>(SaturateI64(v, INT32_MIN, INT32_MAX));
    case Dtype::UINT32: return static_cast<uint32_t>(SaturateI64(v, 0, UINT32_MAX));
    default: return StoreFromF32(d, static_cast<float>(v));
  }
}

// The Cast opcode's conversion (semantics.md §3.2 table, §7): int → int directly, saturating;
// int → float through fp32 (two roundings); float → float through fp32 (NaN canonical);
// float → int truncating and saturating (NaN → 0). `negate` negates the value before the
// conversion: floats the fp32 value, integers the exact value (then saturated into `to`).
inline uint32_t CastRaw(Dtype from, Dtype to, uint32_t raw, bool negate = false) {
  if (IsIntD(from)) {
    int64_t v = LoadAsInt(from, raw);
    if (negate) v = -v;
    return StoreFromInt(to, v);
  }
  float f = LoadAsF32(from, raw);
  if (negate) f = -f;
  return StoreFromF32(to, f);
}

// ---------------------------------------------------------------------------------------------
// The Newton paths (semantics.md §3.3).

namespace detail {

// round(sqrt(n / d)) for positive integers, exactly (no tie can occur for the tables below).
constexpr uint32_t RoundSqrtRatio(uint64_t n, uint64_t d) {
  // k = round(sqrt(r)) ⇔ (2k − 1)² d ≤ 4n < (2k + 1)² d
  uint32_t k = 0;
  while ((2ull * k + 1) * (2ull * k + 1) * d <= 4ull * n) ++k;
  return k;
}

constexpr std::array<uint8_t, 128> MakeRecip8() {
  std::array<uint8_t, 128> t{};
  // 256 / (1 + (i + 0.5)/128) = 65536 / (257 + 2i), rounded (never a tie: odd denominator).
  for (uint32_t i = 0; i < 127; ++i) {
    const uint32_t den = 257 + 2 * i;
    t[i] = static_cast<uint8_t>((2 * 65536 + den) / (2 * den));
  }
  t[127] = 0x81;
  return t;
}
// RSQ_EVEN[j] = round(256 / sqrt(1 + (j + 0.5)/64)) = round(sqrt(65536·128 / (129 + 2j))).
// RSQ_ODD[j]  = round(256 / sqrt(2(1 + (j + 0.5)/64))) = round(sqrt(65536·64 / (129 + 2j))).
constexpr std::array<uint8_t, 64> MakeRsq(bool odd) {
  std::array<uint8_t, 64> t{};
  for (uint32_t j = 0; j < 64; ++j) {
    t[j] = static_cast<uint8_t>(RoundSqrtRatio(65536ull * (odd ? 64 : 128), 129 + 2 * j));
  }
  return t;
}

template <size_t N>
constexpr bool AllInBinade7(const std::array<uint8_t, N>& t) {
  for (uint8_t v : t) {
    if (v < 128) return false;
  }
  return true;
}

}  // namespace detail

inline constexpr std::array<uint8_t, 128> RECIP8 = detail::MakeRecip8();
inline constexpr std::array<uint8_t, 64> RSQ_EVEN = detail::MakeRsq(false);
inline constexpr std::array<uint8_t, 64> RSQ_ODD = detail::MakeRsq(true);
// The seeds below build fp32 bits assuming every entry is 1.xxxxxxx × 2^7.
static_assert(detail::AllInBinade7(RECIP8) && detail::AllInBinade7(RSQ_EVEN) &&
              detail::AllInBinade7(RSQ_ODD));
static_assert(RECIP8[0] == 0xFF && RECIP8[1] == 0xFD && RECIP8[6] == 0xF4 && RECIP8[7] == 0xF2);

// |x| ∈ [2^−125, 2^125] (fp32 magnitude bits 0x01000000..0x7E000000): the Newton range.
constexpr bool InNewtonRange(uint32_t abs_bits) {
  return abs_bits >= 0x01000000u && abs_bits <= 0x7E000000u;
}

// seed(d) = ±RECIP8[i] × 2^(−8−e) for d = ±1.m × 2^e in the Newton range, i = top 7 mantissa bits.
constexpr float RecipSeed(float d) {
  const uint32_t b = F32Bits(d);
  const uint32_t biased = (b >> 23) & 0xFFu;  // 127 + e
  const uint32_t r = RECIP8[(b >> 16) & 0x7Fu];
  // RECIP8[i] = 1.f × 2^7, so the seed's biased exponent is 127 + 7 − 8 − e = 253 − biased.
  return BitsToF32((b & 0x80000000u) | ((253u - biased) << 23) | ((r - 128u) << 16));
}

// nrecip(d). A NaN result is canonical.
inline float NRecip(float d) {
  if (!InNewtonRange(F32Bits(d) & 0x7FFFFFFFu)) return Canon(1.0f / d);
  float x = RecipSeed(d);
  for (int k = 0; k < 2; ++k) {
    const float e = std::fma(-d, x, 1.0f);
    x = std::fma(x, e, x);
  }
  return x;
}

// ndiv(a, b): `pram` is the 256-entry Parameter RAM; recip(n) = pram[n − 1]. A NaN result is
// canonical.
inline float NDiv(float a, float b, const float* pram) {
  if (b >= 1.0f && b <= 256.0f) {
    const int n = static_cast<int>(b);
    if (static_cast<float>(n) == b) return Canon(a * pram[n - 1]);
  }
  const uint32_t aa = F32Bits(a) & 0x7FFFFFFFu;
  if (aa == 0 || aa >= 0x7F800000u || !InNewtonRange(F32Bits(b) & 0x7FFFFFFFu)) {
    return Canon(a / b);
  }
  const float x = NRecip(b);
  const float q0 = a * x;
  // An overflowing quotient: §3.3 as written would compute inf − inf = NaN here; dvejit returns
  // the overflowed q0 (±inf, the IEEE result) instead (docs/spec-notes.md).
  if (!std::isfinite(q0)) return q0;
  const float r = std::fma(-b, q0, a);
  return Canon(std::fma(r, x, q0));
}

// nrsqrt(a) (TensorScalar RSQRT). NaN results are canonical.
inline float NRsqrt(float a) {
  const uint32_t b = F32Bits(a);
  if (IsNaNBits(b) || a < 0.0f) return CanonicalNaN();
  if (a == 0.0f) return BitsToF32((b & 0x80000000u) | 0x7F800000u);  // ±0 → ±inf
  if (b == 0x7F800000u) return 0.0f;
  if (!InNewtonRange(b)) return 1.0f / std::sqrt(a);  // two roundings
  const int e = static_cast<int>(b >> 23) - 127;
  const uint32_t j = (b >> 17) & 0x3Fu;
  // Table entries are 1.f × 2^7: y = T[j] × 2^(−8 − k) has biased exponent 126 − k.
  const bool odd = (e & 1) != 0;
  const int k = odd ? (e - 1) / 2 : e / 2;
  const uint32_t t = odd ? RSQ_ODD[j] : RSQ_EVEN[j];
  float y = BitsToF32((static_cast<uint32_t>(126 - k) << 23) | ((t - 128u) << 16));
  for (int it = 0; it < 2; ++it) {
    const float h = 0.5f * a;
    const float tt = y * y;
    const float g = std::fma(-h, tt, 0.5f);
    y = std::fma(y, g, y);
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// ALU helpers (semantics.md §4.1)

// IEEE 754-2019 maximumNumber / minimumNumber: a NaN loses to a number, −0 < +0, two NaNs give
// the canonical NaN.
constexpr float MaxNum(float a, float b) {
  const bool an = IsNaN(a), bn = IsNaN(b);
  if (an) return bn ? CanonicalNaN() : b;
  if (bn) return a;
  if (a == b) return (F32Bits(a) >> 31) ? b : a;  // equal: prefer +0 over −0
  return a > b ? a : b;
}
constexpr float MinNum(float a, float b) {
  const bool an = IsNaN(a), bn = IsNaN(b);
  if (an) return bn ? CanonicalNaN() : b;
  if (bn) return a;
  if (a == b) return (F32Bits(a) >> 31) ? a : b;  // equal: prefer −0 over +0
  return a < b ? a : b;
}

// POW = (float) pow((double) a, (double) b), NaN canonical. One out-of-line routine that every
// tier calls, so that all tiers share one libm pow.
float PowF(float a, float b);

}  // namespace dvejit::num
