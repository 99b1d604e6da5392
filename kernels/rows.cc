#include "kernels/rows.h"

#include <cstring>
#include <xsimd/xsimd.hpp>

#include "kernels/numerics.h"

namespace dvejit::rows {
namespace {
using fbatch = xsimd::batch<float>;
using ubatch = xsimd::batch<uint32_t>;
constexpr int64_t kLanes = static_cast<int64_t>(fbatch::size);
}  // namespace

void Widen(Dtype d, const uint8_t* src, float* out, int64_t n) {
  if (d == Dtype::BFLOAT16) {
    for (int64_t k = 0; k < n; ++k) {
      uint16_t h;
      std::memcpy(&h, src + 2 * k, 2);
      out[k] = num::Bf16ToF32(h);
    }
    return;
  }
  std::memcpy(out, src, static_cast<size_t>(n) * 4);  // FP32, FP32R: the bits as they are
}

void Narrow(Dtype d, const float* in, uint8_t* dst, int64_t n) {
  int64_t k = 0;
  if (d == Dtype::BFLOAT16) {
    const ubatch nan16(num::kBf16CanonicalNaN);
    for (; k + kLanes <= n; k += kLanes) {
      const fbatch v = fbatch::load_unaligned(in + k);
      const ubatch b = xsimd::bitwise_cast<ubatch>(v);
      // Round to nearest even by integer arithmetic (numerics F32ToBf16).
      const ubatch r = (b + ubatch(0x7FFFu) + ((b >> 16) & ubatch(1u))) >> 16;
      const auto is_nan = (b & ubatch(0x7FFFFFFFu)) > ubatch(0x7F800000u);
      const ubatch h = xsimd::select(is_nan, nan16, r);
      alignas(64) uint32_t tmp[kLanes];
      h.store_aligned(tmp);
      for (int64_t l = 0; l < kLanes; ++l) {
        const uint16_t v16 = static_cast<uint16_t>(tmp[l]);
        std::memcpy(dst + 2 * (k + l), &v16, 2);
      }
    }
    for (; k < n; ++k) {
      const uint16_t h = num::F32ToBf16(in[k]);
      std::memcpy(dst + 2 * k, &h, 2);
    }
    return;
  }
  const fbatch canonical(num::CanonicalNaN());
  for (; k + kLanes <= n; k += kLanes) {
    const fbatch v = fbatch::load_unaligned(in + k);
    xsimd::select(v != v, canonical, v).store_unaligned(reinterpret_cast<float*>(dst) + k);
  }
  for (; k < n; ++k) {
    const uint32_t bits = num::CanonBits(in[k]);
    std::memcpy(dst + 4 * k, &bits, 4);
  }
}

}  // namespace dvejit::rows
