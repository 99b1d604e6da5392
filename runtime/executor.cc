#include "runtime/executor.h"

#include <algorithm>

#include "frontend/address.h"
#include "frontend/diag.h"
#include "frontend/fields.h"
#include "frontend/operands.h"
#include "frontend/strcat.h"
#include "frontend/validate.h"
#include "runtime/block_threads.h"
#include "runtime/jit_tier.h"

namespace dvejit {
namespace {

void WriteU32(Instruction& inst, int off, uint32_t v) { std::memcpy(inst.bytes.data() + off, &v, 4); }

// Makes the IMM_SRC of an immediate field say "pointer" (1).
void SetPointerSource(Instruction& inst, const FieldInfo& f) {
  switch (f.src) {
    case ImmSrcAt::SrcByte35: inst.bytes[35] = 1; break;
    case ImmSrcAt::SrcByte39: inst.bytes[39] = 1; break;
    case ImmSrcAt::SrcByte48: inst.bytes[48] = 1; break;
    case ImmSrcAt::SrcByte49: inst.bytes[49] = 1; break;
    case ImmSrcAt::SrcByte62Low: inst.bytes[62] = (inst.bytes[62] & 0xF0) | 1; break;
    case ImmSrcAt::SrcByte62High: inst.bytes[62] = (inst.bytes[62] & 0x0F) | 0x10; break;
    default: break;
  }
}

absl::Status RuntimeError(std::string_view predicate, std::string_view field,
                          std::string_view value, std::string_view expected, int64_t index,
                          uint8_t opcode, int64_t completed) {
  Violation v = MakeViolation(ErrorKind::Runtime, predicate, field, value, expected);
  v.detail += Cat(" (", completed, " instruction", completed == 1 ? "" : "s", " completed)");
  return ToStatus(v, Location{index, opcode});
}

// Replaces every register-sourced address by the register's value (an immediate ADDR4), and
// re-validates the result: `register_address_valid` (validation.md §1, `runtime`).
absl::StatusOr<Instruction> ResolveRegisters(const Instruction& inst,
                                             std::span<const uint32_t, kRegisters> regs,
                                             Generation gen, int64_t index, int64_t completed) {
  const Operands ops = OperandsOf(inst);
  Instruction out = inst;
  bool changed = false;
  const StructKind strct = inst.info().strct;
  auto resolve = [&](std::string_view name, uint32_t reg) -> absl::Status {
    const uint32_t value = regs[reg];
    if (AddrModeOf(value) != AddrMode::Immediate)
      return RuntimeError("register_address_valid", Cat(name, " register r", reg), Hex(value, 8),
                          "an immediate-form ADDR4 (marker 0x00-0x1F)", index, inst.bytes[0],
                          completed);
    const FieldInfo* f = FindField(strct, name);
    WriteU32(out, f->offset, value);
    if (f->kind == FieldKind::ImmPointer || f->kind == FieldKind::ImmValue) SetPointerSource(out, *f);
    changed = true;
    return absl::OkStatus();
  };
  for (int i = 0; i < ops.num_tensors; ++i)
    if (AddrModeOf(ops.tensors[i].pattern.addr) == AddrMode::Register)
      if (auto s = resolve(ops.tensors[i].name, AddrRegister(ops.tensors[i].pattern.addr)); !s.ok())
        return s;
  for (int i = 0; i < ops.num_pointers; ++i) {
    const PointerOperand& p = ops.pointers[i];
    if (p.is_register) {
      if (auto s = resolve(p.name, p.word & 0xFF); !s.ok()) return s;
    } else if (AddrModeOf(p.word) == AddrMode::Register) {
      if (auto s = resolve(p.name, AddrRegister(p.word)); !s.ok()) return s;
    }
  }
  if (changed) {
    if (auto v = CheckInstruction(out, gen)) {
      return RuntimeError("register_address_valid", "resolved operand", v->predicate,
                          Cat("a valid address (", v->detail, ")"), index, inst.bytes[0],
                          completed);
    }
  }
  return out;
}

bool WaitSatisfied(const MachineState& m, const Events& e) {
  const uint8_t mode = e.wait_mode & 0x7F;
  const uint32_t sem = m.semaphores[e.wait_idx & 31];
  const uint32_t v = e.semaphore_value;
  switch (mode) {
    case 0: return true;
    case 1: return sem == v;
    case 2: return sem < v;
    case 3: return sem <= v;
    case 4: return sem > v;
    case 5: return sem >= v;
    case 6:
    case 7: return m.events[e.wait_idx & 31];
    case 14:
    case 15: return !m.events[e.wait_idx & 31];
    default: return true;
  }
}

void ApplyWaitSideEffect(MachineState& m, const Events& e) {
  const uint8_t mode = e.wait_mode & 0x7F;
  if (mode == 7) m.events[e.wait_idx & 31] = false;  // EVT_SET_THEN_CLEAR
  if (mode == 15) m.events[e.wait_idx & 31] = true;  // EVT_CLEAR_THEN_SET
}

void ApplyUpdate(MachineState& m, const Events& e) {
  const uint8_t mode = e.update_mode & 0x0F;  // the _COMPLETE forms (+16) act the same
  const int i = e.update_idx & 31;
  switch (mode) {
    case 1: m.events[i] = true; break;
    case 2: m.events[i] = false; break;
    case 3: m.semaphores[i] += 1; break;
    case 4: m.semaphores[i] -= 1; break;
    case 5: m.semaphores[i] += e.semaphore_value; break;
    case 7: m.semaphores[i] -= e.semaphore_value; break;
    case 9: m.semaphores[i] = e.semaphore_value; break;
    default: break;
  }
}

std::string DeprecationWarning(const OpcodeInfo& info) {
  std::string_view use;
  switch (info.opcode) {
    case Opcode::BatchNormParamLoad: use = "BatchNormParamLoad2"; break;
    case Opcode::BatchNormGradAccumulate: use = "BatchNormGradAccumulate2"; break;
    case Opcode::BatchNormStats: use = "BatchNormStats2"; break;
    case Opcode::TensorScalarPtrArith: use = "TensorScalarArith with pointer immediates"; break;
    case Opcode::TensorScalarPtrBitvec: use = "TensorScalarBitvec with pointer immediates"; break;
    default: use = "a documented replacement (the device worker is a stub)"; break;
  }
  return Cat("deprecated: ", info.name, " (", Hex(static_cast<uint8_t>(info.opcode), 2),
             ") is marked 'n'; use ", use);
}

}  // namespace

absl::Status CheckForExecution(const Instruction& inst, int64_t index, Generation gen,
                               const RunOptions& options) {
  const Location where{index, inst.bytes[0]};
  if (auto v = CheckInstruction(inst, gen)) return ToStatus(*v, where);
  if (auto v = CheckExecutable(inst, gen)) return ToStatus(*v, where);
  // The four firmware stubs (ImmLd, PtrMulti) are LOG-and-return workers under the device
  // profile whatever the roster says (docs/spec-notes.md); every other opcode needs its entry.
  const Opcode op = inst.opcode();
  const bool firmware_stub =
      op == Opcode::TensorScalarImmLdArith || op == Opcode::TensorScalarImmLdBitvec ||
      op == Opcode::TensorScalarPtrMultiArith || op == Opcode::TensorScalarPtrMultiBitvec;
  if (options.profile == Profile::Device && options.roster && !firmware_stub &&
      !options.roster->test(inst.bytes[0]))
    return ToStatus(MakeViolation(ErrorKind::Invalid, "opcode_in_table_set", "opcode",
                                  Cat(inst.info().name, " (", Hex(inst.bytes[0], 2), ")"),
                                  Cat("an opcode enabled in table set '", options.table_set, "'")),
                    where);
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i) {
    const uint64_t count = ops.tensors[i].pattern.Count();
    if (count > static_cast<uint64_t>(kMaxElementsPerOperand))
      return ToStatus(MakeViolation(ErrorKind::Unsupported, "element_count_supported",
                                    Cat(ops.tensors[i].name, " elements"), Cat(count),
                                    Cat("<= ", kMaxElementsPerOperand,
                                        " per channel (dvejit's execution limit)")),
                      where);
  }
  return absl::OkStatus();
}

void RunReport::FinishCounts() {
  // Only the opcodes the run saw: a scan of all 256 counts was the largest cost of a short
  // stream's run outside its compiled code.
  for (int w = 0; w < 4; ++w)
    for (uint64_t bits = opcodes_seen[w]; bits != 0; bits &= bits - 1) {
      const auto op = static_cast<uint8_t>(64 * w + __builtin_ctzll(bits));
      per_opcode[std::string(LookupOpcode(op)->name)] += opcode_counts[op];
    }
}

std::string RunReport::Summary() const {
  std::string s = Cat("executed ", executed, " instruction", executed == 1 ? "" : "s", " (", tier);
  if (tier == "jit")
    s += Cat(", ", jit_compiled_instructions, " compiled, ",
             jit_cache_hit ? "cache hit"
                           : Cat(jit_object_cache_hit ? "loaded from the object cache in " : "compiled in ",
                                 static_cast<int64_t>(jit_compile_ms), " ms"),
             jit_threads > 1 ? Cat(", ", jit_threads, " threads") : "");
  s += ")";
  if (!per_opcode.empty()) {
    s += ":";
    for (const auto& [name, n] : per_opcode) s += Cat(" ", name, "=", n);
  }
  s += "\n";
  if (device_noops > 0) s += Cat("device profile: ", device_noops, " stub instruction(s) skipped\n");
  if (issued_steps > 0) s += Cat("microcode: ", issued_steps, " micro-steps issued\n");
  for (const std::string& w : warnings) s += Cat("warning: ", w, "\n");
  for (const std::string& n : tier_notes) s += Cat("tier: ", n, "\n");
  return s;
}

std::string RunReport::TraceText() const {
  std::string s;
  for (const TraceEntry& t : trace) {
    const OpcodeInfo* info = LookupOpcode(t.opcode);
    s += Cat("#", t.index, " ", info ? info->name : "?", " (", Hex(t.opcode, 2), ")");
    if (t.fast_row >= 0)
      s += Cat(" fast_row=", t.fast_row, " slow_row=", t.slow_row, " issued_steps=", t.issued_steps);
    if (t.skipped) s += " skipped (device stub)";
    s += "\n";
  }
  return s;
}

namespace {

// The report's view of one completed instruction (both tiers).
void Account(RunReport& report, const Instruction& inst, int64_t index, bool executed,
             const RunOptions& options) {
  const OpcodeInfo& info = inst.info();
  if (info.deprecated) {
    std::string w = DeprecationWarning(info);
    if (std::find(report.warnings.begin(), report.warnings.end(), w) == report.warnings.end())
      report.warnings.push_back(std::move(w));
  }
  if (!executed) ++report.device_noops;
  ++report.executed;
  report.CountOpcode(inst.bytes[0]);
  TraceEntry t{index, inst.bytes[0], !executed};
  if (options.tables != nullptr) {
    if (auto steps = ucode::MicrostepsOf(*options.tables, inst.bytes[0]); steps.ok()) {
      t.fast_row = steps->fast_row;
      t.slow_row = static_cast<int64_t>(steps->slow_row);
      t.issued_steps = steps->issued_steps;
      report.issued_steps += steps->issued_steps;
    }
  }
  if (options.trace) report.trace.push_back(t);
}

// What compiled code needs to run an instruction through the interpreter.
struct InterpContext {
  MachineState* m;
  std::span<const Instruction> program;
  Profile profile;
  std::vector<uint8_t>& skipped;  // device-profile stubs
};
void InterpCallback(void* c, int32_t k) {
  auto* ctx = static_cast<InterpContext*>(c);
  const Instruction& inst = ctx->program[static_cast<size_t>(k)];
  if (!ExecuteInstruction(inst, *ctx->m, ctx->profile)) ctx->skipped[k] = 1;
  ApplyUpdate(*ctx->m, inst.events());
}

// Tier 1. Returns false (with a note) when the stream must run interpreted instead.
// `program_key` is the program's JitTier::StreamKey; `uses_registers` false says that no
// instruction takes an address from a register (then none is looked for).
bool RunCompiled(Machine& machine, std::span<const Instruction> program, uint64_t program_key,
                 bool uses_registers, const RunOptions& options, RunReport& report) {
  MachineState& m = machine.state();
  if (options.strict_events) {
    report.tier_notes.push_back("strict events: interpreted");
    return false;
  }
  // Registers are only written by the host, so every address resolves up front; any failure is
  // reported by the interpreter at its exact position. Without registers the stream is its own
  // resolved form (no copy, no second hash).
  std::vector<Instruction> resolved_copy;
  std::span<const Instruction> resolved = program;
  uint64_t key = program_key;
  if (uses_registers) {
    auto r = ResolveRegisterAddresses(program, m.regs, m.gen);
    if (!r.ok()) return false;
    resolved_copy = *std::move(r);
    resolved = resolved_copy;
    key = JitTier::StreamKey(resolved, m.gen);
  }
  JitTier& tier = JitTier::Global();
  if (options.tier == ExecutionTier::Auto && tier.CountRun(key) == 0) {
    report.tier_notes.push_back("auto: first run interpreted; compiled when the stream repeats");
    return false;
  }
  bool hit = false;
  auto compiled = tier.Get(resolved, m.gen, key, &hit, options.jit_fuse, options.profile);
  if (!compiled.ok()) {
    report.jit_failure = std::string(compiled.status().message());
    report.tier_notes.push_back(Cat("jit failed, interpreted: ", report.jit_failure));
    return false;
  }
  const CompiledStream& cs = **compiled;
  // Per-thread buffers, reused run after run: no allocation per run (RunCompiled is never
  // re-entered on a thread; the interpreter callback does not run programs).
  thread_local std::vector<uint64_t> args;
  thread_local std::vector<uint8_t> skipped;
  args.resize(cs.args.size());
  skipped.assign(resolved.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Function::ArgSource& a = cs.args[i];
    uint32_t word;
    std::memcpy(&word, resolved[a.instruction].bytes.data() + a.byte_offset, 4);
    args[i] = a.is_address ? reinterpret_cast<uint64_t>(m.At(word, 0)) : word;
  }
  InterpContext ctx{&m, resolved, options.profile, skipped};
  jit::RtTable rt = jit::DefaultRtTable(&InterpCallback);
  if (options.threads > 1) {
    rt.run_blocks = RunBlocksThreaded;
    rt.threads = std::min(options.threads, kMaxThreads);
    rt.min_split_bytes = options.min_split_bytes;
  }
  cs.fn(args.data(), &m, &rt, &ctx);
  for (int k : cs.device_noops) ctx.skipped[static_cast<size_t>(k)] = 1;
  for (size_t i = 0; i < resolved.size(); ++i)
    Account(report, program[i], static_cast<int64_t>(i), ctx.skipped[i] == 0, options);
  report.tier = "jit";
  report.jit_cache_hit = hit;
  report.jit_compile_ms = hit ? 0 : cs.compile_ms;
  report.jit_object_cache_hit = !hit && cs.from_object_cache;
  report.jit_compiled_instructions = cs.compiled_instructions;
  report.jit_threads = rt.threads;
  for (const std::string& r : cs.fallback_reasons) report.tier_notes.push_back(Cat("interpreted ", r));
  return true;
}

// What validation depends on besides the records (for the compiled tiers' validated facts):
// the profile, whether a roster applies, and the roster's 256 bits.
StreamOptions ValidationOptions(const RunOptions& options) {
  StreamOptions o{static_cast<uint64_t>(options.profile) | (options.roster ? 0x100u : 0u)};
  if (options.roster) {
    const std::bitset<256> word_mask(~uint64_t{0});
    for (int w = 0; w < 4; ++w) o[1 + w] = ((*options.roster >> (64 * w)) & word_mask).to_ullong();
  }
  return o;
}

}  // namespace

RunReport RunProgramImpl(Machine& machine, std::span<const Instruction> program,
                         const RunOptions& options) {
  RunReport report;
  MachineState& m = machine.state();
  // Atomicity: the whole program is checked before anything runs. A stream the compiled tiers
  // already validated under the same options is not checked again.
  const bool compiled_tier = options.tier != ExecutionTier::Interp;
  const uint64_t program_key = compiled_tier ? JitTier::StreamKey(program, m.gen) : 0;
  const StreamOptions validation_options = compiled_tier ? ValidationOptions(options) : StreamOptions{};
  const uint64_t validated_key =
      program_key ^ (validation_options[0] * 0x100000001B3ull) ^
      ((validation_options[1] ^ validation_options[2] * 3 ^ validation_options[3] * 5 ^ validation_options[4] * 7) *
       0x9E3779B97F4A7C15ull);
  // Decoding every instruction's operands to look for register addresses cost about 45 ns per
  // instruction of a run: the answer is kept with the validated fact.
  bool uses_registers = true;
  if (!compiled_tier ||
      !JitTier::Global().WasValidated(validated_key, program, m.gen, validation_options, &uses_registers)) {
    uses_registers = false;
    for (size_t i = 0; i < program.size(); ++i) {
      if (auto s = CheckForExecution(program[i], static_cast<int64_t>(i), m.gen, options); !s.ok()) {
        report.status = s;
        return report;
      }
      if (compiled_tier && !uses_registers) uses_registers = UsesRegisters(program[i]);
    }
    if (compiled_tier)
      JitTier::Global().MarkValidated(validated_key, program, m.gen, validation_options, uses_registers);
  }
  if (compiled_tier && RunCompiled(machine, program, program_key, uses_registers, options, report))
    return report;
  for (size_t i = 0; i < program.size(); ++i) {
    const Instruction& inst = program[i];
    const int64_t index = static_cast<int64_t>(i);
    const Events ev = inst.events();
    const bool satisfied = WaitSatisfied(m, ev);
    if (!satisfied && options.strict_events) {
      report.status = RuntimeError("event_wait_satisfiable", "wait",
                                   Cat(WaitModeName(ev.wait_mode), ":", ev.wait_idx),
                                   "a satisfied condition (strict events)", index, inst.bytes[0],
                                   report.executed);
      return report;
    }
    auto resolved = ResolveRegisters(inst, m.regs, m.gen, index, report.executed);
    if (!resolved.ok()) {
      report.status = resolved.status();
      return report;
    }
    // Nothing can fail past this point: the wait's own side effect may now happen.
    if (satisfied && options.strict_events) ApplyWaitSideEffect(m, ev);
    const bool executed = ExecuteInstruction(*resolved, m, options.profile);
    ApplyUpdate(m, ev);
    Account(report, inst, index, executed, options);
  }
  return report;
}

RunReport RunProgram(Machine& machine, std::span<const Instruction> program,
                     const RunOptions& options) {
  RunReport report = RunProgramImpl(machine, program, options);
  report.FinishCounts();
  return report;
}

absl::StatusOr<std::vector<Instruction>> ResolveRegisterAddresses(
    std::span<const Instruction> program, std::span<const uint32_t, kRegisters> regs,
    Generation gen) {
  std::vector<Instruction> resolved(program.begin(), program.end());
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (!UsesRegisters(resolved[i])) continue;
    auto r = ResolveRegisters(resolved[i], regs, gen, static_cast<int64_t>(i), 0);
    if (!r.ok()) return r.status();
    resolved[i] = *r;
  }
  return resolved;
}

}  // namespace dvejit
