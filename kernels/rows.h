// Conversions of whole contiguous rows between memory and the fp32 hub: the interpreter's fast
// path for the common case (element k at offset k), vectorised with xsimd where it cannot change
// a bit (bit selects, integer shifts; no floating-point arithmetic).
#pragma once

#include <cstdint>

#include "frontend/isa.h"

namespace dvejit::rows {

// True when `d` has a row fast path.
inline bool Supported(Dtype d) {
  return d == Dtype::FP32 || d == Dtype::FP32R || d == Dtype::BFLOAT16;
}
// out[k] = LoadAsF32(d, element k), k < n.
void Widen(Dtype d, const uint8_t* src, float* out, int64_t n);
// element k = StoreFromF32(d, in[k]), k < n.
void Narrow(Dtype d, const float* in, uint8_t* dst, int64_t n);

}  // namespace dvejit::rows
