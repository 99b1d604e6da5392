// The roof kernels of `dvejit bench`: move exactly the minimal bytes of a workload (read each
// input row once, write each output row once) over the same machine memory, as fast as the
// host allows. Workload times are reported as ratios to these, measured in the same run.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dvejit::roof {

// Sums `bytes` bytes of each of `rows` rows `pitch` apart (read once); returns the sum.
float ReadRows(const uint8_t* base, size_t pitch, int rows, size_t bytes);
// out[i] = a[i] + b[i] over `bytes` bytes of each row (read two inputs, write one output).
void ReadTwoWriteOne(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t pitch, int rows,
                     size_t bytes);
// out[i] = a[i] · 2 over each row (read one, write one).
void ReadOneWriteOne(const uint8_t* a, uint8_t* out, size_t pitch, int rows, size_t bytes);
const char* Isa();  // the instruction set the roof runs with

}  // namespace dvejit::roof
