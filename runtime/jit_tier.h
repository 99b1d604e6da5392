// Tier 1: streams compiled by the JIT (ir/ → jit/), cached by the stream's shape, and run with
// their tile-varying values (addresses, immediates) as arguments. Thread-safe; one per process.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/instruction.h"
#include "ir/ir.h"
#include "jit/codegen.h"

namespace dvejit {

namespace jit {
class CompiledCode;
class Engine;
}

struct CompiledStream {
  jit::StreamFn fn = nullptr;
  std::shared_ptr<jit::CompiledCode> code;  // owns fn's code: freed with the last reference
  std::vector<ir::Function::ArgSource> args;
  std::vector<std::string> fallback_reasons;  // instructions that run interpreted, and why
  std::vector<int> device_noops;  // instructions the device profile skipped (ir::Function)
  int compiled_instructions = 0;
  double compile_ms = 0;
  bool from_object_cache = false;  // its object came from the on-disk cache (not generated)
};

// Besides a stream's records and generation, what a cached fact about it depends on (the run
// options that decide validation or the compiled code), packed into words.
using StreamOptions = std::array<uint64_t, 5>;

// The exact identity of a stream in the caches keyed by StreamKey: each cached fact keeps it,
// so a key collision is a miss and never another stream's fact. Streams of more than
// kMaxBytes of records keep none (empty()), and their facts are not cached.
class StreamIdentity {
 public:
  static constexpr size_t kMaxBytes = size_t{64} << 10;
  StreamIdentity() = default;
  StreamIdentity(std::span<const Instruction> program, Generation gen, const StreamOptions& options);
  bool Matches(std::span<const Instruction> program, Generation gen, const StreamOptions& options) const;
  bool empty() const { return records_.empty(); }
  size_t bytes() const { return records_.size(); }

 private:
  Generation gen_ = Generation::Cayman;
  StreamOptions options_{};
  std::vector<uint8_t> records_;
};

class JitTier {
 public:
  static JitTier& Global();

  // The compiled form of a register-resolved stream, compiling it on a miss. `hit` tells whether
  // it came from the cache. Errors: the JIT is unavailable, or compilation failed (remembered
  // per shape: a shape that failed once is not compiled again).
  // `fuse` false compiles every instruction as its own region (the unfused baseline); `profile`
  // is the run's (it decides what ImmLd/PtrMulti compile to).
  absl::StatusOr<std::shared_ptr<const CompiledStream>> Get(std::span<const Instruction> resolved,
                                                            Generation gen, bool* hit,
                                                            bool fuse = true,
                                                            Profile profile = Profile::Contract) {
    return Get(resolved, gen, StreamKey(resolved, gen), hit, fuse, profile);
  }
  // The same with the stream's key already computed (StreamKey of `resolved`): a run hashes
  // its stream once for the validated check, the run count and the lookup.
  absl::StatusOr<std::shared_ptr<const CompiledStream>> Get(std::span<const Instruction> resolved,
                                                            Generation gen, uint64_t key, bool* hit,
                                                            bool fuse = true,
                                                            Profile profile = Profile::Contract);
  // A 64-bit hash of a stream's records and generation: the caches' key, not its identity
  // (see StreamIdentity).
  static uint64_t StreamKey(std::span<const Instruction> program, Generation gen);
  // Compiles without consulting or filling the cache (cold compile-time measurements).
  absl::StatusOr<std::shared_ptr<const CompiledStream>> CompileUncached(
      std::span<const Instruction> resolved, Generation gen, bool fuse = true);
  // Streams already validated for execution (a pure function of the records, the generation
  // and `options`): repeated runs of the same stream skip re-validation. `key` is the StreamKey
  // of the (unresolved) program folded with the options; the identity decides. The fact keeps
  // whether any instruction takes an address from a register (`uses_registers`, also a pure
  // function of the records): a run of a stream without any skips looking for them.
  bool WasValidated(uint64_t key, std::span<const Instruction> program, Generation gen,
                    const StreamOptions& options, bool* uses_registers = nullptr);
  void MarkValidated(uint64_t key, std::span<const Instruction> program, Generation gen,
                     const StreamOptions& options, bool uses_registers = true);
  // How many times the stream with this StreamKey was seen before (for the `auto` tier), and
  // count this one.
  int64_t CountRun(uint64_t key);
  // The IR of a stream before and after the passes (`dvejit ir`), as a run with `profile`
  // compiles it (fused).
  static absl::StatusOr<std::pair<std::string, std::string>> IrText(
      std::span<const Instruction> resolved, Generation gen, Profile profile = Profile::Contract);
  bool available();
  std::string unavailable_reason();
  // The CPU LLVM compiles for (its name, possibly "generic") and the vector width used, e.g.
  // "generic, 16 f32 lanes"; "" when the JIT is unavailable.
  std::string target_description();
  // The cache keeps at most this many compiled shapes (least recently used go first; their code
  // is freed once no run holds them). Default 512, or DVEJIT_JIT_CACHE_STREAMS.
  void set_capacity(size_t shapes);
  size_t cached_shapes();

 private:
  JitTier() = default;
  absl::Status EnsureEngine();
  // Compiles `f` as a module of that name and identity (jit::SetModuleIdentity; mu_ held).
  absl::StatusOr<std::shared_ptr<CompiledStream>> CompileLocked(const ir::Function& f,
                                                                const std::string& module_name,
                                                                const std::string& shape_text,
                                                                int instructions);

  std::mutex mu_;
  std::unique_ptr<jit::Engine> engine_;
  // Engines disabled by an LLVM fatal error, replaced by a new one; kept because streams they
  // compiled stay in the caches below.
  std::vector<std::unique_ptr<jit::Engine>> retired_engines_;
  std::string engine_error_;
  bool engine_tried_ = false;
  // Compiled shapes, most recently used first in lru_; each remembers the byte keys that led
  // to it (at most kBytesPerShape, oldest dropped first), so an evicted shape takes them along.
  // A byte key's entry keeps the stream's identity, checked on every hit.
  struct CacheEntry {
    std::shared_ptr<const CompiledStream> stream;
    std::string text;  // the shape (printed IR and version key), compared on every hit
    std::list<uint64_t>::iterator lru;
    std::deque<uint64_t> bytes_keys;
  };
  static constexpr size_t kBytesPerShape = 64;
  // The per-stream facts below are small but one per distinct stream: they are forgotten
  // wholesale past this many (a forgotten fact is recomputed).
  static constexpr size_t kMaxFacts = size_t{1} << 16;
  // The identities and shape texts the maps below keep are forgotten wholesale past this many
  // bytes (each map its own).
  static constexpr size_t kMaxIdentityBytes = size_t{64} << 20;
  void Touch(CacheEntry& e, uint64_t shape_key);
  void AddBytesKey(CacheEntry& e, uint64_t bytes_key, uint64_t shape_key, StreamIdentity id);
  void ForgetBytesKeys();
  void EvictBeyondCapacity();
  size_t capacity_ = 0;  // 0: not read from the environment yet
  std::unordered_map<uint64_t, CacheEntry> by_shape_;
  struct BytesEntry {
    uint64_t shape_key;
    StreamIdentity id;
  };
  std::unordered_map<uint64_t, BytesEntry> by_bytes_;
  size_t by_bytes_identity_bytes_ = 0;
  std::list<uint64_t> lru_;
  // Shapes that failed to compile, with their text (compared on every hit, like by_shape_'s).
  struct FailedShape {
    std::string text;
    absl::Status status;
  };
  std::unordered_map<uint64_t, FailedShape> failed_by_shape_;
  size_t failed_text_bytes_ = 0;
  // Runs per stream key for the auto tier. A collision only moves a compile to an earlier run.
  std::unordered_map<uint64_t, int64_t> runs_;
  struct ValidatedStream {
    StreamIdentity identity;
    bool uses_registers = true;
  };
  std::unordered_map<uint64_t, ValidatedStream> validated_;
  size_t validated_identity_bytes_ = 0;
};

}  // namespace dvejit
