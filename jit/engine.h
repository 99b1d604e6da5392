// The JIT engine layer (tier 1, docs: /work/shared/design.md "Execution tiers").
//
// The code generator (IR -> LLVM IR) hands finished llvm::Modules to an Engine, which verifies,
// optimises (a small explicit pass pipeline, never -O3, no fast-math, no fp contraction),
// compiles them for the host (explicit CPU features, AVX-512 where the host has it) and returns
// function addresses. An optional on-disk object cache lets a second process skip codegen.
//
// Lifetime: every address returned by Engine::Compile stays valid until the Engine is destroyed;
// CompileOwned's until its CompiledCode is destroyed.
// Threading: Engine::Compile may be called from several threads. (The compiled-stream cache
// keyed by stream shape is runtime/jit_tier.h's JitTier.)
#ifndef DVEJIT_JIT_ENGINE_H_
#define DVEJIT_JIT_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/codegen.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace llvm {
class DataLayout;
class LLVMContext;
class Module;
class Triple;
namespace orc {
class JITDylib;
class JITTargetMachineBuilder;
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace dvejit::jit {

// A text that determines the module's contents (the code generator's input, say), kept in the
// module as named metadata; the on-disk object cache stores it with the object and compares
// it on load, so two modules that share a name but not an identity never share an object.
void SetModuleIdentity(llvm::Module& m, const std::string& identity);

struct EngineOptions {
  // Optional on-disk object cache ("" = none). Created if missing.
  std::string object_cache_dir;
  // Run the small explicit pass pipeline (Engine::OptimizeModule) before codegen.
  bool optimize = true;
  // Install (once per process) an LLVM fatal-error handler. A fatal error (for example "Cannot
  // select" in instruction selection) raised while Compile or CompileToAssembly runs becomes
  // their error instead of ending the process; see Engine::Compile. Elsewhere the handler
  // prints the message, with the module being compiled, and LLVM ends the process as usual.
  // Without the handler, a fatal error ends the process. Ordinary errors are always Statuses.
  bool install_fatal_error_handler = true;
  // Reject (InvalidArgument) modules with fast-math flags on any instruction: they would let
  // LLVM reassociate, contract or drop signed zeros, and JIT results must match tier 0 bit for bit.
  bool reject_fast_math = true;
  // Generate code as a narrower host would: 8 drops every AVX-512 feature (AVX2 code, 8 lanes),
  // 4 also AVX/AVX2/FMA/F16C (SSE code). 0: the host's own width. Tests use it to run the
  // AVX2 and SSE code paths on an AVX-512 machine.
  int max_vector_width = 0;
};

// Counters of an on-disk object cache (one per Engine).
struct ObjectCacheStats {
  uint64_t hits = 0;    // objects loaded from disk (codegen skipped)
  uint64_t misses = 0;  // lookups that found no (valid) object
  uint64_t writes = 0;  // objects written
  uint64_t errors = 0;  // unreadable/corrupt/unwritable files (treated as misses)
};

struct EngineStats {
  uint64_t compiles = 0;        // successful Compile calls
  uint64_t released = 0;        // CompileOwned modules whose code was freed
  uint64_t failures = 0;        // Compile calls that returned an error
  absl::Duration compile_time;  // wall time spent in successful Compile calls
  ObjectCacheStats object_cache;
};

class DiskObjectCache;
class TargetMachinePool;
class Engine;

// One compiled module's code (Engine::CompileOwned): its address stays valid until this is
// destroyed, which frees the code. Destroy it before its Engine.
class CompiledCode {
 public:
  ~CompiledCode();
  CompiledCode(const CompiledCode&) = delete;
  CompiledCode& operator=(const CompiledCode&) = delete;
  void* address() const { return address_; }

 private:
  friend class Engine;
  CompiledCode(Engine* engine, llvm::orc::JITDylib* dylib, void* address)
      : engine_(engine), dylib_(dylib), address_(address) {}
  Engine* engine_;
  llvm::orc::JITDylib* dylib_;  // nullptr: never freed (Engine::Compile's code)
  void* address_;
};

class Engine {
 public:
  static absl::StatusOr<std::unique_ptr<Engine>> Create(const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Host CPU name (as LLVM names it, may be "generic") and the explicit feature string given to
  // the JIT: every feature LLVM knows, sorted, "+x" when the host has it, "-x" otherwise;
  // avx512bf16 and avxneconvert are always disabled (vcvtneps2bf16 flushes subnormals).
  const std::string& cpu() const { return cpu_; }
  const std::string& features() const { return features_; }
  bool HasFeature(const std::string& name) const;  // e.g. HasFeature("avx512f")
  int vector_width_f32() const { return vector_width_f32_; }  // 16 (AVX-512F), 8 (AVX2), else 4
  // What the code generator may use on this host (vector width, byte permutes, FMA).
  CodegenTarget codegen_target() const {
    return CodegenTarget{vector_width_f32_, vector_width_f32_ == 16 && HasFeature("avx512vbmi"),
                         HasFeature("fma") || HasFeature("fma4")};
  }
  const llvm::DataLayout& data_layout() const;
  const llvm::Triple& triple() const;
  const EngineOptions& options() const { return options_; }

  // An empty module configured for this engine (triple, data layout) in a fresh context.
  std::pair<std::unique_ptr<llvm::LLVMContext>, std::unique_ptr<llvm::Module>> NewModule(
      const std::string& name);

  // Takes ownership of `ctx` and `m` whatever the outcome (`m` must live in `ctx`).
  // Verifies (llvm::verifyModule; failures are InvalidArgument with the verifier's text),
  // optimises (if options().optimize), compiles and returns the address of `symbol` (NotFound if
  // the module does not define it). Thread-safe. Each call gets its own symbol namespace, so two
  // modules may define the same symbol name. The module's name, with VersionKey() and its
  // identity (SetModuleIdentity), is its object-cache key, compared in full: modules with the
  // same name and identity must have the same contents.
  //
  // An LLVM fatal error while compiling is Internal ("LLVM fatal error while compiling module
  // ..."), and the process goes on. LLVM's state is then unknown, so the module is leaked and
  // the engine is disabled(): later Compile calls fail (FailedPrecondition); addresses it
  // returned before stay valid, and its JIT session is never torn down. Make a new engine to
  // compile more. (Only fatal errors are caught; LLVM's unreachable/assertion paths are not.)
  absl::StatusOr<void*> Compile(std::unique_ptr<llvm::LLVMContext> ctx,
                                std::unique_ptr<llvm::Module> m, const std::string& symbol);
  // Compile, with the code owned by the result: destroying it frees the code (a long-lived
  // process with a bounded cache of compiled streams does not grow without end).
  absl::StatusOr<std::unique_ptr<CompiledCode>> CompileOwned(std::unique_ptr<llvm::LLVMContext> ctx,
                                                             std::unique_ptr<llvm::Module> m,
                                                             const std::string& symbol);

  // True after an LLVM fatal error in Compile (see there).
  bool disabled() const { return disabled_.load(); }

  // Verifies, optimises (if options().optimize) and generates x86 assembly text, with the same
  // target machine configuration as Compile (for tests, `dvejit jit --dump-asm`-style tools).
  // Modifies `m` (the pipeline and codegen's IR passes run on it). An LLVM fatal error is
  // returned as Internal; `m` is then in an unknown state (do not use or print it again), and
  // the engine stays usable (only this call's target machine was involved).
  absl::StatusOr<std::string> CompileToAssembly(llvm::Module& m);

  // Runs the engine's pass pipeline on `m` in place (what Compile does when optimize is set):
  // AlwaysInliner, then per function SROA, EarlyCSE(MemorySSA), InstCombine, SimplifyCFG,
  // LICM, ADCE; then GlobalDCE. No vectorisers, no fast-math.
  absl::Status OptimizeModule(llvm::Module& m);

  // Makes `address` visible to compiled code under `name` (a runtime helper). Register before
  // compiling modules that call it. AlreadyExists if `name` was registered before.
  absl::Status RegisterSymbol(const std::string& name, void* address);

  // LLVM version + cpu + features (+ whether the pipeline runs): part of every cache key.
  std::string VersionKey() const;

  EngineStats stats() const;

 private:
  explicit Engine(const EngineOptions& options);
  absl::Status Init();
  friend class CompiledCode;
  void Release(llvm::orc::JITDylib* dylib);  // frees a CompileOwned module's code

  EngineOptions options_;
  std::string cpu_;
  std::string features_;
  absl::flat_hash_set<std::string> enabled_features_;
  int vector_width_f32_ = 4;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb_;
  std::unique_ptr<TargetMachinePool> target_machines_;  // outlives jit_, whose compiler uses it
  std::unique_ptr<DiskObjectCache> object_cache_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::atomic<uint64_t> next_dylib_{0};
  std::atomic<bool> disabled_{false};

  mutable absl::Mutex stats_mu_;
  uint64_t compiles_ ABSL_GUARDED_BY(stats_mu_) = 0;
  uint64_t released_ ABSL_GUARDED_BY(stats_mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(stats_mu_) = 0;
  absl::Duration compile_time_ ABSL_GUARDED_BY(stats_mu_);
  std::string disabled_reason_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace dvejit::jit

#endif  // DVEJIT_JIT_ENGINE_H_
