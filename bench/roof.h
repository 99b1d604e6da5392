// The roof kernels of `dvejit bench`: move exactly the minimal bytes of a workload (read each
// input row once, write each output row once) over the same machine memory, as fast as the
// host allows. Workload times are reported as ratios to these, measured in the same run.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dvejit::roof {

// One instruction set's build of the kernels (bench/roof_kernels.h).
struct RoofKernels {
  const char* isa;
  float (*read_rows)(const uint8_t* base, size_t pitch, int rows, size_t bytes);
  void (*read_two_write_one)(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch,
                             int rows, size_t bytes);
  void (*read_one_write_one)(const uint8_t* a, uint8_t* out, size_t pitch, int rows,
                             size_t bytes);
};

// Sums `bytes` bytes of each of `rows` rows `pitch` apart (read once); returns the sum.
float ReadRows(const uint8_t* base, size_t pitch, int rows, size_t bytes);
// out[i] = a[i] + b[i] over `bytes` bytes of each row (read two inputs, write one output).
void ReadTwoWriteOne(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch, int rows,
                     size_t bytes);
// out[i] = a[i] · 2 over each row (read one, write one).
void ReadOneWriteOne(const uint8_t* a, uint8_t* out, size_t pitch, int rows, size_t bytes);
// Writes back and evicts `bytes` bytes of each of `rows` rows `pitch` apart from every cache
// level (`clflush`), then fences: `dvejit bench --cold` calls it before each timed run, of the
// roof and of the workloads alike, so that both read their rows from memory.
void EvictRows(const uint8_t* base, size_t pitch, int rows, size_t bytes);
// The instruction set the roof runs with: the widest of avx512bw, avx2 and sse2 that the host
// has (a narrower roof would flatter the ratios on a wider host).
const char* Isa();

// The per-ISA tables (bench/roof_<isa>.cc).
RoofKernels Avx512Kernels();
RoofKernels Avx2Kernels();
RoofKernels Sse2Kernels();

}  // namespace dvejit::roof
