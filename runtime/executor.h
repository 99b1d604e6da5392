// Running programs on a Machine: whole-program validation first (an invalid program changes
// nothing), then per instruction: event waits, register resolution, the kernel, event updates.
// Produces the run report (validation.md §1 atomicity, §4 profiles; semantics.md §9 events).
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/instruction.h"
#include "frontend/microcode.h"
#include "kernels/interpreter.h"
#include "runtime/machine.h"

namespace dvejit {

// The most threads a run may ask for (RunOptions::threads); every front end checks a count with
// ThreadCountInRange.
inline constexpr int kMaxThreads = 256;
inline constexpr bool ThreadCountInRange(int threads) { return threads >= 1 && threads <= kMaxThreads; }
// The smallest region, in bytes moved over all its channels, whose channel blocks are split
// across threads by default: waking the workers costs microseconds, which a smaller region does
// not win back.
inline constexpr int64_t kMinSplitBytes = int64_t{1} << 20;

// Tier 0 interprets; tier 1 runs the stream compiled by the JIT; `auto` interprets a stream the
// first time and compiles it when it repeats. A stream (or instruction) the JIT cannot compile
// runs interpreted, with the reason in the report.
enum class ExecutionTier : uint8_t { Interp, Jit, Auto };

struct RunOptions {
  ExecutionTier tier = ExecutionTier::Interp;
  bool jit_fuse = true;  // false: every instruction compiled on its own (benchmark baseline)
  // Threads the JIT tier may split a compiled region's channel blocks across (1 to kMaxThreads
  // of runtime/block_threads.h; the calling thread is one of them). Results do not depend on it.
  int threads = 1;
  // Regions that move fewer bytes (all channels) stay on the calling thread (tests split every
  // region with 0).
  int64_t min_split_bytes = kMinSplitBytes;
  Profile profile = Profile::Contract;
  bool strict_events = false;  // an unsatisfied wait is a runtime error
  // The active microcode table set (microcode.md §4): its roster is enforced under the device
  // profile (`opcode_in_table_set`); `tables`, when a directory was read, gives each executed
  // instruction's fast row, slow row and issued micro-steps in the trace.
  std::optional<std::bitset<256>> roster;
  std::string table_set = "default";
  const ucode::TableSet* tables = nullptr;
  bool trace = false;
};

// One executed instruction, as the trace reports it.
struct TraceEntry {
  int64_t index = 0;
  uint8_t opcode = 0;
  bool skipped = false;     // a device-profile stub
  int64_t fast_row = -1;    // -1: no table directory
  int64_t slow_row = -1;
  int64_t issued_steps = -1;
};

struct RunReport {
  absl::Status status;           // OK, or the error that stopped the run
  int64_t executed = 0;          // instructions completed
  std::map<std::string, int64_t> per_opcode;  // by opcode name
  int64_t opcode_counts[256] = {};            // by opcode byte
  uint64_t opcodes_seen[4] = {};              // bit b: opcode_counts[b] != 0
  void CountOpcode(uint8_t op) {
    if (opcode_counts[op]++ == 0) opcodes_seen[op / 64] |= uint64_t{1} << (op % 64);
  }
  void FinishCounts();                        // per_opcode from opcode_counts
  std::vector<std::string> warnings;          // each distinct warning once
  int64_t device_noops = 0;      // ImmLd/PtrMulti skipped under the device profile
  int64_t issued_steps = 0;      // micro-steps issued, when a table directory is active
  std::vector<TraceEntry> trace; // with RunOptions::trace
  std::string tier = "interp";   // the tier that ran the stream: interp or jit
  std::vector<std::string> tier_notes;  // why the JIT did not run (parts of) the stream
  // Why the JIT could not compile the stream (it then ran interpreted); "" when it compiled or
  // was not asked to. The differential tests count any such failure as a defect.
  std::string jit_failure;
  bool jit_cache_hit = false;
  double jit_compile_ms = 0;
  bool jit_object_cache_hit = false;  // compiled by loading its object from the disk cache
  int jit_compiled_instructions = 0;
  int jit_threads = 1;  // the threads its regions could be split across (RunOptions::threads)
  std::string Summary() const;   // the short report `dvejit run` prints
  std::string TraceText() const; // one line per executed instruction
};

// Largest element count of one operand in one channel that dvejit executes; patterns with
// step-0 broadcasts can name far more elements than memory holds.
inline constexpr int64_t kMaxElementsPerOperand = int64_t{1} << 24;

// The execution-time checks of one instruction that do not depend on machine state:
// validation (`CheckInstruction`), `CheckExecutable`, the device-profile roster, the element
// count limit. Located in the stream at `index`.
absl::Status CheckForExecution(const Instruction& inst, int64_t index, Generation gen,
                               const RunOptions& options);

RunReport RunProgram(Machine& machine, std::span<const Instruction> program,
                     const RunOptions& options);

// The program with every register-sourced address replaced by the register's value, as a run
// resolves it before compiling (`dvejit ir --reg`). A register that does not hold a valid
// address is the run's `register_address_valid` error, at that instruction.
absl::StatusOr<std::vector<Instruction>> ResolveRegisterAddresses(
    std::span<const Instruction> program, std::span<const uint32_t, kRegisters> regs,
    Generation gen);

}  // namespace dvejit
