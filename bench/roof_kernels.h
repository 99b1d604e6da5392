// The roof kernels' bodies, one template over the xsimd architecture. Each bench/roof_<isa>.cc
// compiles it with its own instruction-set flags and fills a RoofKernels table; bench/roof.cc
// picks the widest table the host runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "bench/roof.h"

namespace dvejit::roof {

template <class Arch>
struct RoofKernelsFor {
  using batch = xsimd::batch<float, Arch>;
  static constexpr size_t kLanes = batch::size;

  static float ReadRows(const uint8_t* base, size_t pitch, int rows, size_t bytes) {
    // Four accumulators: one add chain would bound the loop by the add's latency, not by loads.
    batch acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
    float tail = 0.0f;  // elements past the last whole vectors
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
      for (; i < n; ++i) tail += p[i];
    }
    return xsimd::hadd((acc0 + acc1) + (acc2 + acc3)) + tail;
  }

  static void ReadTwoWriteOne(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch,
                              int rows, size_t bytes) {
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

  static void ReadOneWriteOne(const uint8_t* a, uint8_t* out, size_t pitch, int rows,
                              size_t bytes) {
    const size_t n = bytes / sizeof(float);
    for (int r = 0; r < rows; ++r) {
      const float* x = reinterpret_cast<const float*>(a + r * pitch);
      float* z = reinterpret_cast<float*>(out + r * pitch);
      size_t i = 0;
      for (; i + kLanes <= n; i += kLanes)
        (batch::load_unaligned(x + i) * batch(2.0f)).store_unaligned(z + i);
      for (; i < n; ++i) z[i] = x[i] * 2.0f;
    }
  }

  static constexpr RoofKernels Table(const char* isa) {
    return RoofKernels{isa, &ReadRows, &ReadTwoWriteOne, &ReadOneWriteOne};
  }
};

}  // namespace dvejit::roof
