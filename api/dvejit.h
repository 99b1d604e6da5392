// dvejit's C++ embedding API: a Session is one emulated DVE (SBUF, PSUM, registers, Parameter
// RAM) that runs Programs (decoded or assembled instruction streams) and exchanges tensors with
// the host. Self-contained (pimpl): it needs only abseil's Status; every error is an absl::Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dvejit {

// "0.1.0": the version of the library (and of its CMake package).
std::string_view Version();

// Which engine runs a program. Interp: the reference interpreter. Jit: the stream compiled with
// LLVM (instructions the JIT does not compile run through the interpreter inside it; a stream it
// cannot take at all runs interpreted, with a warning). Auto (`dvejit run`'s default): a stream
// runs interpreted the first time and compiled when it repeats. RunResult says what ran, and why.
enum class RunTier : uint8_t { Interp = 0, Jit = 1, Auto = 2 };
// validation.md §4: `contract` (the spec's semantics) or `device` (firmware stubs, rosters).
enum class RunProfile : uint8_t { Contract = 0, Device = 1 };
enum class MemorySpace : uint8_t { Sbuf = 0, Psum = 1 };
// Data types of host tensors, numbered as the ISA's dtype codes (encoding.md §5). bf16 and the
// fp8 formats travel as their raw bits (uint16_t / uint8_t).
enum class ElementType : uint8_t {
  Int8 = 0x2, UInt8 = 0x3, Int16 = 0x4, UInt16 = 0x5, BFloat16 = 0x6, Float16 = 0x7,
  Int32 = 0x8, UInt32 = 0x9, Float32 = 0xA, Fp8E3 = 0xD, Fp8E4 = 0xE, Fp8E5 = 0xF,
};
int ElementSize(ElementType t);  // bytes; 0 for a value not listed above

// The kind of an error (validation.md §1), numbered as the C API's dvejit_status.
// Internal: a status that did not come from dvejit's error model (or an escaped exception).
enum class ErrorCode : uint8_t {
  Ok = 0, Decode = 1, Invalid = 2, Unsupported = 3, Runtime = 4, Syntax = 5, Usage = 6,
  Internal = 7,
};
ErrorCode ErrorCodeOf(const absl::Status& status);
std::string_view ErrorCodeName(ErrorCode code);  // "ok", "decode", ..., "internal"
// The validation.md predicate a status names ("check_active_channels"), empty when none.
std::string ViolatedPredicate(const absl::Status& status);

// A rectangle of memory: `partitions` partitions from `first_partition`, each holding `elements`
// consecutive values of `dtype` from byte `offset` of the partition.
struct TensorRegion {
  MemorySpace space = MemorySpace::Sbuf;
  uint32_t first_partition = 0;
  uint32_t partitions = 1;
  uint32_t offset = 0;
  ElementType dtype = ElementType::Float32;
  uint32_t elements = 0;  // per partition
};
// partitions * elements * ElementSize(dtype).
uint64_t ByteSize(const TensorRegion& region);

// An immutable, cheaply copyable instruction stream.
class Program {
 public:
  // Assembly text (docs/asm.md); addresses are resolved with `generation`'s geometry, and the
  // program then runs only on a Session of that generation. Errors: Syntax, Usage (generation).
  static absl::StatusOr<Program> FromText(std::string_view text,
                                          std::string_view generation = "cayman");
  // 64-byte records back to back (encoding.md §1). Errors: Decode.
  static absl::StatusOr<Program> FromBytes(std::span<const uint8_t> records);

  size_t size() const;  // instructions
  bool empty() const { return size() == 0; }
  std::vector<uint8_t> Encode() const;  // the 64-byte records
  // One canonical line per instruction; `generation` empty: the program's own, else cayman.
  absl::StatusOr<std::string> Disassemble(std::string_view generation = {}) const;
  // The generation the text was assembled for; nullopt for a program made from bytes.
  std::optional<std::string> generation() const;

  struct Impl;  // opaque

 private:
  friend class Session;
  explicit Program(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

struct RunConfig {
  RunTier tier = RunTier::Auto;
  RunProfile profile = RunProfile::Contract;
  bool strict_events = false;  // an unsatisfied event wait is a Runtime error
  bool trace = false;          // fill RunResult::trace
  // The microcode table set, with the built-in rosters (microcode.md §4): "default", or
  // "saturate" (maverick: integer ALU arithmetic clamps). Under the device profile an opcode
  // the set disables is rejected.
  std::string table_set = "default";
  // Threads (1-256) the JIT tier may split each compiled region's channel blocks across, the
  // calling thread one of them; regions that move under 1 MiB stay on it. The results are the
  // same for every count.
  int threads = 1;
};

struct RunResult {
  absl::Status status;  // OK, or the error that stopped the run (an invalid program runs nothing)
  RunTier tier_requested = RunTier::Interp;
  RunTier tier_used = RunTier::Interp;  // Interp or Jit
  std::vector<std::string> tier_notes;  // why (parts of) the stream ran interpreted
  int64_t executed = 0;  // instructions completed
  std::map<std::string, int64_t> per_opcode;
  std::vector<std::string> warnings;  // each distinct warning once
  int64_t device_noops = 0;           // firmware stubs skipped under the device profile
  std::string summary;                // the report `dvejit run` prints
  std::string trace;                  // one line per executed instruction (RunConfig::trace)
  bool ok() const { return status.ok(); }
};

// One emulated DVE. Movable, not copyable; not thread-safe (one thread at a time).
class Session {
 public:
  // `generation`: sunda, cayman, mariana or maverick. Errors: Usage, Internal (no memory).
  static absl::StatusOr<Session> Create(std::string_view generation = "cayman");
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  std::string generation() const;
  uint32_t ActiveBytes(MemorySpace space) const;  // per partition; 0 when the space is absent

  // Programs for this session's generation.
  absl::StatusOr<Program> LoadProgram(std::string_view assembly_text) const;
  absl::StatusOr<Program> LoadProgram(std::span<const uint8_t> records) const;
  // The checks Run makes before executing anything (validation, executability, roster).
  absl::Status Validate(const Program& program, const RunConfig& config = {}) const;
  // Validates the whole program, then executes it. A failed validation changes nothing; a
  // runtime error stops the run with the state the completed instructions left.
  RunResult Run(const Program& program, const RunConfig& config = {});

  // Host tensors. The byte size must equal ByteSize(region); a region outside the partitions'
  // active bytes is a Usage error and nothing is read or written.
  absl::Status Write(const TensorRegion& region, const void* data, size_t size);
  absl::Status Read(const TensorRegion& region, void* out, size_t size) const;
  absl::Status WriteBytes(const TensorRegion& region, std::span<const uint8_t> data) {
    return Write(region, data.data(), data.size());
  }
  absl::StatusOr<std::vector<uint8_t>> ReadBytes(const TensorRegion& region) const;
  // Typed forms: sizeof(T) must equal ElementSize(region.dtype).
  template <typename T>
  absl::Status WriteValues(const TensorRegion& region, std::span<const T> values);
  template <typename T>
  absl::Status WriteValues(const TensorRegion& region, const std::vector<T>& values) {
    return WriteValues(region, std::span<const T>(values));
  }
  template <typename T>
  absl::StatusOr<std::vector<T>> ReadValues(const TensorRegion& region) const;

  absl::Status SetRegister(int index, uint32_t value);  // 0..63
  absl::StatusOr<uint32_t> GetRegister(int index) const;
  absl::Status SetParamRam(int index, float value);  // 0..255
  absl::StatusOr<float> GetParamRam(int index) const;
  // Parameter RAM entry k = fp32(1/(k+1)) (semantics.md §1), as `.recip_table` does.
  void PreloadReciprocals();
  // Memory, registers, Parameter RAM, lane state and events back to their initial values.
  void Reset();

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  // sizeof(T) matches the dtype and the region lies in memory (before anything is allocated).
  absl::Status CheckTypedRegion(const TensorRegion& region, size_t element_size) const;
  std::unique_ptr<Impl> impl_;
};

template <typename T>
absl::Status Session::WriteValues(const TensorRegion& region, std::span<const T> values) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (absl::Status s = CheckTypedRegion(region, sizeof(T)); !s.ok()) return s;
  return Write(region, values.data(), values.size_bytes());
}

template <typename T>
absl::StatusOr<std::vector<T>> Session::ReadValues(const TensorRegion& region) const {
  static_assert(std::is_trivially_copyable_v<T>);
  if (absl::Status s = CheckTypedRegion(region, sizeof(T)); !s.ok()) return s;
  std::vector<T> out(static_cast<size_t>(ByteSize(region) / sizeof(T)));
  if (absl::Status s = Read(region, out.data(), out.size() * sizeof(T)); !s.ok()) return s;
  return out;
}

}  // namespace dvejit
