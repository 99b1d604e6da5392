// Built-in DVE programs used by the main job (`dvejit train-step`), the end-to-end tests, the
// examples and the benchmarks: a batch-norm training step laid out in SBUF, and the helpers
// that build records for it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "frontend/instruction.h"
#include "runtime/machine.h"

namespace dvejit::workloads {

inline constexpr int kStatsTile = 512;  // Stats2 reads at most 512 elements

// Where the batch-norm step keeps its tensors: byte offsets inside each SBUF partition
// (channel c lives in partition c).
struct BnLayout {
  int channels = 128;
  int elements = 4096;  // per channel; a multiple of kStatsTile
  Dtype dtype = Dtype::FP32;  // of x, dy and dx
  uint32_t x = 0, dy = 0, dx = 0;
  uint32_t stats = 0;   // tiles × 6 fp32 (Stats2 outputs)
  uint32_t mean = 0;    // fp32 mean, var (Aggregate output): mean at `mean`, var at mean + 4
  uint32_t var_eps = 0; // fp32 var + eps
  uint32_t vf = 0;      // fp32 1/sqrt(var + eps)
  uint32_t gamma = 0;   // fp32 γ (host-provided)
  uint32_t gamma_vf = 0;  // fp32 γ·vf
  uint32_t a = 0;       // fp32 A = γ·vf/N
  uint32_t sums = 0;    // tiles × 3 fp32 GradAccum2 sums; tile 0's slot ends up holding the totals
  uint32_t end = 0;     // first byte past the layout
  int tiles() const { return elements / kStatsTile; }
};
BnLayout MakeBnLayout(int channels, int elements, Dtype dtype);

// The 32 LoadParameterRam records that set entry k = fp32(1/(k+1)).
std::vector<Instruction> ReciprocalTable();
// Forward statistics: Stats2 per tile, then Aggregate into [mean, var].
std::vector<Instruction> BnForward(const BnLayout& l, Generation gen);
// Backward chain: vf = rsqrt(var + eps), GradAccum2 per tile, TensorTensor adds of the tile
// sums, A = γ·vf/N, ParamLoad2, BackProp per tile.
std::vector<Instruction> BnBackward(const BnLayout& l, Generation gen, float eps);
// A whole training step: ReciprocalTable, BnForward, then BnBackward.
std::vector<Instruction> BnTrainingStep(const BnLayout& l, Generation gen, float eps);

// One op over `channels` × `elements` in tiles (Stats2: 512, others: up to 4096 elements per
// instruction): op is Stats2, GradAccum2, BackProp, TensorScalar (x·1.5 − 0.25), TensorTensor
// (x + dy) or Reciprocal. x at 0, dy at kDy, results at kOut, scalars at kScalars.
inline constexpr uint32_t kX = 0, kDy = 64 << 10, kOut = 128 << 10, kScalars = 192 << 10;
std::vector<Instruction> TiledOpProgram(std::string_view op, int channels, int elements, Dtype dt,
                                        Generation gen);

// Record builders (immediate SBUF addresses; channel c in partition first_partition + c).
uint32_t Sbuf(uint32_t partition, uint32_t offset, Generation gen);

// Host side of the batch-norm step: random inputs and the float64 reference.
struct BnInputs {
  std::vector<double> x, dy;  // channels × elements, the values as stored (after rounding)
  std::vector<double> gamma;  // per channel
};
// Writes x, dy (in the layout's dtype) and γ for every channel from a fixed seed.
BnInputs LoadBnInputs(Machine& m, const BnLayout& l, uint64_t seed);
// Relative errors against float64 batch norm, each the maximum over channels: mean (relative
// to |mean| + std), var, dβ = s0 and dγ = s1 (relative to Σ|terms|), dx (relative to max |dx|).
struct BnErrors {
  double mean = 0, var = 0, dbeta = 0, dgamma = 0, dx = 0;
};
BnErrors CompareBnStep(const Machine& m, const BnLayout& l, const BnInputs& in, double eps);
BnErrors BnErrorBounds(Dtype dtype);

}  // namespace dvejit::workloads
