// A generator of random valid DVE instructions (validation.md §2-§3), one opcode at a time.
// Used by the validator's property tests and by the JIT's differential fuzzing: every record it
// returns passes CheckInstruction(…, opts.gen), and (unless allow_unexecutable) also
// CheckExecutable. Values are constructed to satisfy each predicate, never found by rejecting
// whole records, so generation always terminates. Deterministic: the same rng state and options
// give the same record on every platform (no std:: distributions are used).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "frontend/instruction.h"
#include "frontend/isa.h"

namespace dvejit {

struct GeneratorOptions {
  Generation gen = Generation::Cayman;
  // num_active_channels is drawn from 1..max_channels (clamped to 1..128; ops that need a
  // multiple of 32 use 32 when max_channels < 32).
  int max_channels = 128;
  // Cap on per-operand element counts where the op allows more (clamped to 1..65535). Ops with
  // a fixed or minimum count (Max8's 8, TransposeStats2's 32, ...) still use it.
  int64_t max_elements = 4096;
  bool allow_psum = true;            // operands (and pointers) in PSUM, where the gen has one
  bool allow_negative_steps = true;  // negative tensor steps
  // Step-0 dimensions. Even when false, a pattern that cannot fit its window densely falls back
  // to step 0 on its outer dimensions (only possible with a small sbuf window).
  bool allow_broadcast = true;
  // Register-form ADDR4 tensor addresses and pointers, and register-pointer immediates
  // (IMM_SRC = 2): all need register state at run time.
  bool allow_register_addresses = false;
  bool allow_events = true;  // random wait/update modes; otherwise the EVENTS bytes are zero
  // Also generate records that are valid but not executable by dvejit (CheckExecutable fails):
  // shape-register / indirect tensor addresses, CRC32, MAVERICK's TensorScalar integer arm.
  bool allow_unexecutable = false;
  // SBUF operands and pointers lie inside this byte window of each partition: [lo, hi).
  // 0,0 = the whole active range; hi == 0 or beyond the active bytes = up to the active end.
  // A window narrower than 8 bytes is ignored (the whole range is used). PSUM operands use the
  // whole PSUM partition.
  uint32_t sbuf_lo = 0, sbuf_hi = 0;
};

// Whether `op` is a tier A/B opcode that exists on `gen` (validation.md opcode_in_generation).
bool IsGeneratable(Opcode op, Generation gen);
// Every tier A/B opcode that exists on `gen`, in opcode table order.
std::vector<Opcode> GeneratableOpcodes(Generation gen);

// A random instruction of `op` that passes CheckInstruction(…, opts.gen). Uses `rng` only.
// Precondition: IsGeneratable(op, opts.gen); otherwise it returns MakeInstruction(op) (which
// does not validate).
Instruction GenerateValid(Opcode op, std::mt19937_64& rng, const GeneratorOptions& opts);

// GenerateValid of an opcode drawn uniformly from GeneratableOpcodes(opts.gen).
Instruction GenerateRandomValid(std::mt19937_64& rng, const GeneratorOptions& opts);

}  // namespace dvejit
