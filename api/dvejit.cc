#include "api/dvejit.h"

#include <algorithm>
#include <exception>
#include <new>

#include "frontend/assembler.h"
#include "frontend/diag.h"
#include "frontend/disassembler.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"
#include "frontend/microcode.h"
#include "frontend/strcat.h"
#include "runtime/executor.h"
#include "runtime/machine.h"

#ifndef DVEJIT_VERSION
#error "DVEJIT_VERSION is set by api/CMakeLists.txt"
#endif

namespace dvejit {

struct Program::Impl {
  std::vector<Instruction> instructions;
  std::optional<Generation> gen;  // set when assembled from text
};

struct Session::Impl {
  explicit Impl(Generation g) : machine(g) {}
  Machine machine;
};

namespace {

absl::Status UsageError(std::string_view field, std::string_view value, std::string_view expected) {
  return ToStatus(MakeViolation(ErrorKind::Usage, "", field, value, expected), Location{});
}

absl::StatusOr<Generation> GenerationOf(std::string_view name) {
  if (auto g = ParseGeneration(name)) return *g;
  return UsageError("generation", Cat("'", name, "'"), "sunda, cayman, mariana or maverick");
}

absl::StatusOr<Space> SpaceOf(MemorySpace s) {
  switch (s) {
    case MemorySpace::Sbuf: return Space::Sbuf;
    case MemorySpace::Psum: return Space::Psum;
  }
  return UsageError("space", Cat(static_cast<int>(s)), "sbuf (0) or psum (1)");
}

// The execution options a RunConfig stands for, with the machine's saturate flag.
struct Resolved {
  RunOptions options;
  bool saturate = false;
};
absl::StatusOr<Resolved> Resolve(Generation gen, const RunConfig& config) {
  Resolved r;
  switch (config.profile) {
    case RunProfile::Contract: r.options.profile = Profile::Contract; break;
    case RunProfile::Device: r.options.profile = Profile::Device; break;
    default:
      return UsageError("profile", Cat(static_cast<int>(config.profile)),
                        "contract (0) or device (1)");
  }
  switch (config.tier) {
    case RunTier::Interp: r.options.tier = ExecutionTier::Interp; break;
    case RunTier::Jit: r.options.tier = ExecutionTier::Jit; break;
    case RunTier::Auto: r.options.tier = ExecutionTier::Auto; break;
    default:
      return UsageError("tier", Cat(static_cast<int>(config.tier)),
                        "interp (0), jit (1) or auto (2)");
  }
  r.options.strict_events = config.strict_events;
  r.options.trace = config.trace;
  r.options.table_set = config.table_set;
  if (!ThreadCountInRange(config.threads))
    return UsageError("threads", Cat(config.threads), Cat("1 to ", kMaxThreads));
  r.options.threads = config.threads;
  auto roster = ucode::ResolveRoster(ucode::UcodeGenOf(gen), config.table_set);
  if (!roster.ok()) {
    if (ErrorKindOf(roster.status())) return roster.status();
    return UsageError("table_set", Cat("'", config.table_set, "'"),
                      Cat("a built-in table set (", roster.status().message(), ")"));
  }
  if (r.options.profile == Profile::Device) r.options.roster = roster->enabled;
  r.saturate = roster->saturate;
  return r;
}

// A program assembled for another generation would address other bytes.
absl::Status CheckProgramGeneration(const Program::Impl* p, Generation gen) {
  if (p != nullptr && p->gen && *p->gen != gen)
    return UsageError("program generation", GenerationName(*p->gen),
                      Cat(GenerationName(gen), " (the session's; assemble the text for it)"));
  return absl::OkStatus();
}

const std::vector<Instruction>& InstructionsOf(const Program::Impl* p) {
  static const std::vector<Instruction> kEmpty;
  return p != nullptr ? p->instructions : kEmpty;
}

}  // namespace

std::string_view Version() { return DVEJIT_VERSION; }

int ElementSize(ElementType t) {
  const uint8_t code = static_cast<uint8_t>(t);
  if (!IsValidDtype(code, /*allow_fp32r=*/false)) return 0;
  return DtypeSize(static_cast<Dtype>(code));
}

ErrorCode ErrorCodeOf(const absl::Status& status) {
  if (status.ok()) return ErrorCode::Ok;
  const std::optional<ErrorKind> kind = ErrorKindOf(status);
  if (!kind) return ErrorCode::Internal;
  switch (*kind) {
    case ErrorKind::Decode: return ErrorCode::Decode;
    case ErrorKind::Invalid: return ErrorCode::Invalid;
    case ErrorKind::Unsupported: return ErrorCode::Unsupported;
    case ErrorKind::Runtime: return ErrorCode::Runtime;
    case ErrorKind::Syntax: return ErrorCode::Syntax;
    case ErrorKind::Usage: return ErrorCode::Usage;
  }
  return ErrorCode::Internal;
}

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::Ok: return "ok";
    case ErrorCode::Decode: return "decode";
    case ErrorCode::Invalid: return "invalid";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::Runtime: return "runtime";
    case ErrorCode::Syntax: return "syntax";
    case ErrorCode::Usage: return "usage";
    case ErrorCode::Internal: return "internal";
  }
  return "internal";
}

std::string ViolatedPredicate(const absl::Status& status) { return PredicateOf(status); }

uint64_t ByteSize(const TensorRegion& region) {
  return uint64_t{region.partitions} * region.elements *
         static_cast<uint64_t>(ElementSize(region.dtype));
}

// ---- Program ----

absl::StatusOr<Program> Program::FromText(std::string_view text, std::string_view generation) {
  auto gen = GenerationOf(generation);
  if (!gen.ok()) return gen.status();
  auto insts = Assemble(text, *gen);
  if (!insts.ok()) return insts.status();
  auto impl = std::make_shared<Impl>();
  impl->instructions = std::move(*insts);
  impl->gen = *gen;
  return Program(std::move(impl));
}

absl::StatusOr<Program> Program::FromBytes(std::span<const uint8_t> records) {
  auto insts = DecodeStream(records);
  if (!insts.ok()) return insts.status();
  auto impl = std::make_shared<Impl>();
  impl->instructions = std::move(*insts);
  return Program(std::move(impl));
}

size_t Program::size() const { return InstructionsOf(impl_.get()).size(); }

std::vector<uint8_t> Program::Encode() const { return EncodeStream(InstructionsOf(impl_.get())); }

absl::StatusOr<std::string> Program::Disassemble(std::string_view generation) const {
  Generation gen = impl_ && impl_->gen ? *impl_->gen : Generation::Cayman;
  if (!generation.empty()) {
    auto g = GenerationOf(generation);
    if (!g.ok()) return g.status();
    gen = *g;
  }
  return DisassembleStream(InstructionsOf(impl_.get()), gen);
}

std::optional<std::string> Program::generation() const {
  if (!impl_ || !impl_->gen) return std::nullopt;
  return std::string(GenerationName(*impl_->gen));
}

// ---- Session ----

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

absl::StatusOr<Session> Session::Create(std::string_view generation) {
  auto gen = GenerationOf(generation);
  if (!gen.ok()) return gen.status();
  try {
    return Session(std::make_unique<Impl>(*gen));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        Cat("cannot allocate the memory of a ", GenerationName(*gen), " machine"));
  }
}

std::string Session::generation() const {
  return std::string(GenerationName(impl_->machine.gen()));
}

uint32_t Session::ActiveBytes(MemorySpace space) const {
  auto s = SpaceOf(space);
  if (!s.ok()) return 0;
  if (*s == Space::Psum && impl_->machine.state().psum == nullptr) return 0;
  return impl_->machine.ActiveBytes(*s);
}

absl::StatusOr<Program> Session::LoadProgram(std::string_view assembly_text) const {
  return Program::FromText(assembly_text, GenerationName(impl_->machine.gen()));
}

absl::StatusOr<Program> Session::LoadProgram(std::span<const uint8_t> records) const {
  return Program::FromBytes(records);
}

absl::Status Session::Validate(const Program& program, const RunConfig& config) const {
  const Generation gen = impl_->machine.gen();
  if (auto s = CheckProgramGeneration(program.impl_.get(), gen); !s.ok()) return s;
  auto resolved = Resolve(gen, config);
  if (!resolved.ok()) return resolved.status();
  const std::vector<Instruction>& insts = InstructionsOf(program.impl_.get());
  for (size_t i = 0; i < insts.size(); ++i)
    if (auto s = CheckForExecution(insts[i], static_cast<int64_t>(i), gen, resolved->options);
        !s.ok())
      return s;
  return absl::OkStatus();
}

RunResult Session::Run(const Program& program, const RunConfig& config) {
  RunResult result;
  result.tier_requested = config.tier;
  Machine& machine = impl_->machine;
  auto resolved = Resolve(machine.gen(), config);
  absl::Status pre = resolved.ok() ? CheckProgramGeneration(program.impl_.get(), machine.gen())
                                   : resolved.status();
  if (!pre.ok()) {
    RunReport nothing;
    nothing.status = pre;
    result.status = pre;
    result.summary = nothing.Summary();
    return result;
  }
  machine.state().saturate = resolved->saturate;
  RunReport report = RunProgram(machine, InstructionsOf(program.impl_.get()), resolved->options);
  result.tier_used = report.tier == "jit" ? RunTier::Jit : RunTier::Interp;
  // Asked for the JIT by name and did not get it: a warning, with the executor's reasons.
  if (config.tier == RunTier::Jit && result.tier_used != RunTier::Jit && report.status.ok()) {
    std::string w = "jit tier not used: ran interpreted";
    for (size_t i = 0; i < report.tier_notes.size(); ++i)
      w += Cat(i == 0 ? " (" : "; ", report.tier_notes[i]);
    if (!report.tier_notes.empty()) w += ")";
    report.warnings.insert(report.warnings.begin(), std::move(w));
  }
  result.status = report.status;
  result.executed = report.executed;
  result.per_opcode = report.per_opcode;
  result.warnings = report.warnings;
  result.tier_notes = report.tier_notes;
  result.device_noops = report.device_noops;
  result.summary = report.Summary();
  result.trace = report.TraceText();
  return result;
}

namespace {
// Bytes per partition of a region that lies inside memory, or the Usage error saying why not.
absl::StatusOr<uint32_t> CheckRegion(const Machine& machine, const TensorRegion& r) {
  auto space = SpaceOf(r.space);
  if (!space.ok()) return space.status();
  const int esize = ElementSize(r.dtype);
  if (esize == 0)
    return UsageError("dtype", Hex(static_cast<uint8_t>(r.dtype), 2),
                      "one of int8 uint8 int16 uint16 bf16 fp16 int32 uint32 fp32 fp8e3 fp8e4 "
                      "fp8e5");
  if (*space == Space::Psum && machine.state().psum == nullptr)
    return UsageError("space", "psum", Cat("sbuf (", GenerationName(machine.gen()), " has no PSUM)"));
  if (r.partitions == 0 || uint64_t{r.first_partition} + r.partitions > kPartitions)
    return UsageError("partitions",
                      Cat(r.first_partition, "..", uint64_t{r.first_partition} + r.partitions),
                      "a non-empty range inside 0..128");
  const uint64_t bytes = uint64_t{r.elements} * static_cast<uint64_t>(esize);
  const uint32_t active = machine.ActiveBytes(*space);
  if (uint64_t{r.offset} + bytes > active)
    return UsageError("bytes", Cat("[", r.offset, ", ", uint64_t{r.offset} + bytes, ")"),
                      Cat("inside the ", active, " active bytes of a ", SpaceName(*space),
                          " partition (", r.elements, " x ", esize, "-byte elements from offset ",
                          r.offset, ")"));
  return static_cast<uint32_t>(bytes);
}
}  // namespace

absl::Status Session::CheckTypedRegion(const TensorRegion& region, size_t element_size) const {
  auto bytes = CheckRegion(impl_->machine, region);
  if (!bytes.ok()) return bytes.status();
  const size_t want = static_cast<size_t>(ElementSize(region.dtype));
  if (element_size != want)
    return UsageError("element size", Cat(element_size, " bytes"),
                      Cat(want, " bytes (the size of ",
                          DtypeName(static_cast<uint8_t>(region.dtype)), ")"));
  return absl::OkStatus();
}

absl::Status Session::Write(const TensorRegion& region, const void* data, size_t size) {
  auto bpp = CheckRegion(impl_->machine, region);
  if (!bpp.ok()) return bpp.status();
  const uint64_t total = uint64_t{*bpp} * region.partitions;
  if (size != total)
    return UsageError("data size", Cat(size, " bytes"),
                      Cat(region.partitions, " x ", *bpp, " = ", total, " bytes"));
  if (data == nullptr && size != 0) return UsageError("data", "null", "a buffer");
  return impl_->machine.Write(*SpaceOf(region.space), region.first_partition, region.partitions,
                              region.offset,
                              std::span<const uint8_t>(static_cast<const uint8_t*>(data), size),
                              *bpp);
}

absl::Status Session::Read(const TensorRegion& region, void* out, size_t size) const {
  auto bpp = CheckRegion(impl_->machine, region);
  if (!bpp.ok()) return bpp.status();
  const uint64_t total = uint64_t{*bpp} * region.partitions;
  if (size != total)
    return UsageError("output size", Cat(size, " bytes"),
                      Cat(region.partitions, " x ", *bpp, " = ", total, " bytes"));
  if (out == nullptr && size != 0) return UsageError("output", "null", "a buffer");
  return impl_->machine.Read(*SpaceOf(region.space), region.first_partition, region.partitions,
                             region.offset, *bpp,
                             std::span<uint8_t>(static_cast<uint8_t*>(out), size));
}

absl::StatusOr<std::vector<uint8_t>> Session::ReadBytes(const TensorRegion& region) const {
  auto bpp = CheckRegion(impl_->machine, region);
  if (!bpp.ok()) return bpp.status();
  std::vector<uint8_t> out(static_cast<size_t>(*bpp) * region.partitions);
  if (auto s = Read(region, out.data(), out.size()); !s.ok()) return s;
  return out;
}

absl::Status Session::SetRegister(int index, uint32_t value) {
  return impl_->machine.SetRegister(index, value);
}
absl::StatusOr<uint32_t> Session::GetRegister(int index) const {
  return impl_->machine.GetRegister(index);
}
absl::Status Session::SetParamRam(int index, float value) {
  return impl_->machine.SetParamRam(index, value);
}
absl::StatusOr<float> Session::GetParamRam(int index) const {
  return impl_->machine.GetParamRam(index);
}
void Session::PreloadReciprocals() { impl_->machine.PreloadReciprocals(); }
void Session::Reset() {
  impl_->machine.Reset();
  impl_->machine.state().saturate = false;
}

}  // namespace dvejit
