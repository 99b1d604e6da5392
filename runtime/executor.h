// Running programs on a Machine: whole-program validation first (an invalid program changes
// nothing), then per instruction: event waits, register resolution, the kernel, event updates.
// Produces the run report (validation.md §1 atomicity, §4 profiles; semantics.md §9 events).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontend/instruction.h"
#include "kernels/interpreter.h"
#include "runtime/machine.h"

namespace dvejit {

struct RunOptions {
  Profile profile = Profile::Contract;
  bool strict_events = false;  // an unsatisfied wait is a runtime error
  // Opcodes enabled by the active microcode table set (device profile only); empty = all.
  std::vector<uint8_t> roster;
  std::string table_set = "default";
};

struct RunReport {
  absl::Status status;           // OK, or the error that stopped the run
  int64_t executed = 0;          // instructions completed
  std::map<std::string, int64_t> per_opcode;  // by opcode name
  std::vector<std::string> warnings;          // each distinct warning once
  int64_t device_noops = 0;      // ImmLd/PtrMulti skipped under the device profile
  std::string Summary() const;   // the short report `dvejit run` prints
};

// Largest element count of one operand in one channel that dvejit executes; patterns with
// step-0 broadcasts can name far more elements than memory holds.
inline constexpr int64_t kMaxElementsPerOperand = int64_t{1} << 24;

// The execution-time checks of one instruction that do not depend on machine state:
// validation (`CheckInstruction`), `CheckExecutable`, the device-profile roster, the element
// count limit. Located in the stream at `index`.
absl::Status CheckForExecution(const Instruction& inst, int64_t index, Generation gen,
                               const RunOptions& options);

RunReport Run(Machine& machine, std::span<const Instruction> program, const RunOptions& options);

}  // namespace dvejit
