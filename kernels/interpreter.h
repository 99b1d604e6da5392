// The reference interpreter (tier 0): executes one validated instruction whose register
// addresses have been resolved, following semantics.md line by line.
#pragma once

#include "frontend/instruction.h"
#include "kernels/state.h"

namespace dvejit {

// Executes `inst` on `m`. Preconditions: CheckInstruction and CheckExecutable passed for
// m.gen, every address is in immediate form. Returns false for an instruction that the
// `device` profile turns into a logged no-op (ImmLd, PtrMulti).
bool ExecuteInstruction(const Instruction& inst, MachineState& m, Profile profile);

}  // namespace dvejit
