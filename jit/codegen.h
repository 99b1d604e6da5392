// Code generation: one IR function (a whole stream) → one LLVM function, explicitly vectorised
// across channels (W channels per vector, W = 16 with AVX-512), recurrences in their exact
// per-channel order, conversions by integer operations, NaNs canonicalised as the interpreter does.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"
#include "kernels/state.h"

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}

namespace dvejit::jit {

struct RtTable;
// A channel-major region of several channel blocks, compiled as a function of a range of them:
// runs blocks [block_begin, block_end). Blocks are independent (see EmitStream).
using RegionFn = void (*)(const uint64_t* args, MachineState* m, const RtTable* rt, int64_t block_begin,
                          int64_t block_end);

// Runtime services compiled code calls through a table passed as an argument (no symbol
// resolution needed): the interpreter, for statements the JIT does not compile, and the scalar
// routines every tier shares (POW is one runtime routine by definition; MOD is fmodf). The
// Newton paths (nrecip, ndiv, nrsqrt) are emitted inline, checked bit for bit against
// kernels/numerics.h.
struct RtTable {
  void (*interp)(void* ctx, int32_t instruction);
  float (*pow)(float a, float b);
  float (*fmod)(float a, float b);
  // Runs blocks [0, blocks) of a region, on this thread or split across threads, and returns
  // when all have run. `bytes` is what the whole region moves (a hint for whether splitting
  // pays).
  void (*run_blocks)(const RtTable* rt, RegionFn region, const uint64_t* args, MachineState* m, int64_t blocks,
                     int64_t bytes);
  // For the runtime's run_blocks: how many threads it may use, and the smallest `bytes` it
  // splits.
  int threads;
  int64_t min_split_bytes;
};
// interp, the scalar routines, and run_blocks running every region on the calling thread.
const RtTable& DefaultRtTable(void (*interp)(void*, int32_t));
// RtTable::run_blocks on the calling thread.
void RunBlocksInline(const RtTable* rt, RegionFn region, const uint64_t* args, MachineState* m, int64_t blocks,
                     int64_t bytes);

// The compiled stream: args[i] holds argument slot i (a host address or a 32-bit immediate).
using StreamFn = void (*)(const uint64_t* args, MachineState* m, const RtTable* rt, void* ctx);

// What the code generator may use on the host.
struct CodegenTarget {
  int width = 16;             // f32 lanes per hardware vector: 16 (AVX-512F), 8 (AVX2), else 4
  bool byte_permute = false;  // AVX512-VBMI vpermi2b: 128-byte table lookups in registers
  bool fma = true;            // FMA3 or FMA4; without either, every fma is EmitFmaWithoutFmaUnit's
};

// fma(a, b, c) on float scalars or vectors, rounded once, from double arithmetic alone: for a
// host without FMA instructions, where LLVM would call libm's fmaf once per lane.
llvm::Value* EmitFmaWithoutFmaUnit(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z);

// Emits `symbol` into `module` for `f`. A channel-major region of more than one channel block
// becomes an internal function over a range of blocks (RegionFn), which the stream runs through
// RtTable::run_blocks: within a region every byte written is touched by one channel only
// (ir::ChannelIndependence), so its blocks may run in any order or at once.
absl::Status EmitStream(const ir::Function& f, llvm::Module& module, const std::string& symbol,
                        const CodegenTarget& target);

}  // namespace dvejit::jit
