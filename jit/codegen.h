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
// resolution needed): the interpreter for statements the JIT does not compile, and the Newton
// paths (one routine shared with the interpreter, so the bits agree).
struct RtTable {
  void (*interp)(void* ctx, int32_t instruction);
  float (*nrecip)(float);
  float (*ndiv)(float, float, const float* pram);
  float (*nrsqrt)(float);
};
const RtTable& DefaultRtTable(void (*interp)(void*, int32_t));

// The compiled stream: args[i] holds argument slot i (a host address or a 32-bit immediate).
using StreamFn = void (*)(const uint64_t* args, MachineState* m, const RtTable* rt, void* ctx);

// Emits `symbol` into `module` for `f`, with `width` channels per vector.
absl::Status EmitStream(const ir::Function& f, llvm::Module& module, const std::string& symbol,
                        int width);

}  // namespace dvejit::jit
