// Picks the widest roof build the host runs, once; and the eviction of `dvejit bench --cold`.
#include "bench/roof.h"

#include <immintrin.h>

namespace dvejit::roof {
namespace {

const RoofKernels& Kernels() {
  static const RoofKernels kernels = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd")) {
      return Avx512Kernels();
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Avx2Kernels();
    return Sse2Kernels();
  }();
  return kernels;
}

}  // namespace

float ReadRows(const uint8_t* base, size_t pitch, int rows, size_t bytes) {
  return Kernels().read_rows(base, pitch, rows, bytes);
}
void ReadTwoWriteOne(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch, int rows,
                     size_t bytes) {
  Kernels().read_two_write_one(a, b, out, pitch, rows, bytes);
}
void ReadOneWriteOne(const uint8_t* a, uint8_t* out, size_t pitch, int rows, size_t bytes) {
  Kernels().read_one_write_one(a, out, pitch, rows, bytes);
}
void EvictRows(const uint8_t* base, size_t pitch, int rows, size_t bytes) {
  constexpr size_t kLine = 64;  // x86's cache line; clflush evicts the line holding its address
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = base + r * pitch;
    for (size_t i = 0; i < bytes; i += kLine) _mm_clflush(row + i);
    if (bytes > 0) _mm_clflush(row + bytes - 1);  // a row that ends inside a further line
  }
  _mm_mfence();  // the evictions are done before the timed run reads anything
}
const char* Isa() { return Kernels().isa; }

}  // namespace dvejit::roof
