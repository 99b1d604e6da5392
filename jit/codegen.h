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
class Module;
}

namespace dvejit::jit {

// Runtime services compiled code calls through a table passed as an argument (no symbol
// resolution needed): the interpreter, for statements the JIT does not compile, and the scalar
// routines every tier shares (POW is one runtime routine by definition; MOD is fmodf). The
// Newton paths (nrecip, ndiv, nrsqrt) are emitted inline, checked bit for bit against
// kernels/numerics.h.
struct RtTable {
  void (*interp)(void* ctx, int32_t instruction);
  float (*pow)(float a, float b);
  float (*fmod)(float a, float b);
};
const RtTable& DefaultRtTable(void (*interp)(void*, int32_t));

// The compiled stream: args[i] holds argument slot i (a host address or a 32-bit immediate).
using StreamFn = void (*)(const uint64_t* args, MachineState* m, const RtTable* rt, void* ctx);

// What the code generator may use on the host.
struct CodegenTarget {
  int width = 16;             // f32 lanes per hardware vector: 16 (AVX-512F), 8 (AVX2), else 4
  bool byte_permute = false;  // AVX512-VBMI vpermi2b: 128-byte table lookups in registers
};

// Emits `symbol` into `module` for `f`.
absl::Status EmitStream(const ir::Function& f, llvm::Module& module, const std::string& symbol,
                        const CodegenTarget& target);

}  // namespace dvejit::jit
