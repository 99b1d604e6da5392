// Validation of instructions and programs (validation.md): every predicate, in the spec's
// order, with the first failure reported as a Violation / absl::Status.
#pragma once

#include <optional>
#include <span>

#include "absl/status/status.h"
#include "frontend/diag.h"
#include "frontend/instruction.h"

namespace dvejit {

// The first failing check of validation.md §2-§3 for `inst` on generation `gen` (nullopt:
// valid). Does not include the execution-only checks.
std::optional<Violation> CheckInstruction(const Instruction& inst, Generation gen);

// The checks that only apply when an instruction is about to execute (validation.md §1):
// address_mode_supported (shape-register and indirect addresses), alu_op_supported (CRC32,
// MAVERICK's TensorScalar integer arm).
std::optional<Violation> CheckExecutable(const Instruction& inst, Generation gen);

// Status forms with the location filled in; `index` < 0 when not part of a stream.
absl::Status Validate(const Instruction& inst, Generation gen, int64_t index = -1);
// Validates every record, stopping at the first failure. With `for_execution`, also runs
// CheckExecutable on each record.
absl::Status ValidateProgram(std::span<const Instruction> program, Generation gen,
                             bool for_execution = false);

}  // namespace dvejit
