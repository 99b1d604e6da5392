// Compiled for AVX2 (see bench/CMakeLists.txt); callers check the CPU first (Isa()).
#include "bench/roof.h"

#include <cstring>
#include <xsimd/xsimd.hpp>

namespace dvejit::roof {
namespace {
using batch = xsimd::batch<float, xsimd::avx2>;
constexpr size_t kLanes = batch::size;
}  // namespace

const char* Isa() { return "avx2"; }

float ReadRows(const uint8_t* base, size_t pitch, int rows, size_t bytes) {
  batch acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
  const size_t n = bytes / sizeof(float);
  for (int r = 0; r < rows; ++r) {
    const float* p = reinterpret_cast<const float*>(base + r * pitch);
    size_t i = 0;
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      acc0 += batch::load_unaligned(p + i);
      acc1 += batch::load_unaligned(p + i + kLanes);
      acc2 += batch::load_unaligned(p + i + 2 * kLanes);
      acc3 += batch::load_unaligned(p + i + 3 * kLanes);
    }
    for (; i < n; ++i) acc0 += batch(p[i]);
  }
  return xsimd::hadd((acc0 + acc1) + (acc2 + acc3));
}

void ReadTwoWriteOne(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch, int rows,
                     size_t bytes) {
  const size_t n = bytes / sizeof(float);
  for (int r = 0; r < rows; ++r) {
    const float* x = reinterpret_cast<const float*>(a + r * pitch);
    const float* y = reinterpret_cast<const float*>(b + r * pitch);
    float* z = reinterpret_cast<float*>(out + r * pitch);
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      (batch::load_unaligned(x + i) + batch::load_unaligned(y + i)).store_unaligned(z + i);
    for (; i < n; ++i) z[i] = x[i] + y[i];
  }
}

void ReadOneWriteOne(const uint8_t* a, uint8_t* out, size_t pitch, int rows, size_t bytes) {
  const size_t n = bytes / sizeof(float);
  for (int r = 0; r < rows; ++r) {
    const float* x = reinterpret_cast<const float*>(a + r * pitch);
    float* z = reinterpret_cast<float*>(out + r * pitch);
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) (batch::load_unaligned(x + i) * batch(2.0f)).store_unaligned(z + i);
    for (; i < n; ++i) z[i] = x[i] * 2.0f;
  }
}

}  // namespace dvejit::roof
