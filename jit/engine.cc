#include "jit/engine.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "code_revision.h"  // generated: DVEJIT_CODE_REVISION
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

// LLVM headers are SYSTEM includes (see jit/CMakeLists.txt), so they do not trip -Werror.
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/ObjectCache.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/ADCE.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"

namespace dvejit::jit {
namespace {

// Features never given to the JIT even when the host has them: their bf16 conversion
// (vcvtneps2bf16) flushes subnormal inputs/outputs, unlike the DVE's conversion.
constexpr const char* kDeniedFeatures[] = {"avx512bf16", "avxneconvert"};

// What emitted the code, part of every cache key: a hash of the sources of the IR, the code
// generator, the engine and what they read (the host memory layout, the number formats), made
// at build time (jit/revision.cmake).
constexpr const char* kCodeRevision = DVEJIT_CODE_REVISION;

// The module being compiled on this thread, for the fatal-error message.
thread_local const std::string* tls_current_module = nullptr;

// Where an LLVM fatal error on this thread returns to, while RunTrappingFatalErrors runs.
struct FatalErrorTrap {
  std::jmp_buf env;
  std::string reason;
};
thread_local FatalErrorTrap* tls_fatal_error_trap = nullptr;

void FatalErrorHandler(void* /*user_data*/, const char* reason, bool /*gen_crash_diag*/) {
  if (FatalErrorTrap* trap = tls_fatal_error_trap; trap != nullptr) {
    // Inside the engine's compile: back to RunTrappingFatalErrors, which makes it an error.
    tls_fatal_error_trap = nullptr;
    trap->reason = reason;
    std::longjmp(trap->env, 1);
  }
  // Elsewhere LLVM exits the process after this returns; say as much as we can first.
  const std::string* module = tls_current_module;
  std::fprintf(stderr, "dvejit: LLVM fatal error%s%s%s: %s\n",
               module != nullptr ? " while compiling module '" : "",
               module != nullptr ? module->c_str() : "", module != nullptr ? "'" : "", reason);
  std::fflush(stderr);
}

// Runs `fn`. Returns false, with LLVM's message in `reason`, when an LLVM fatal error (for
// example "Cannot select" in instruction selection) ended it: the handler above jumps back
// here instead of letting LLVM end the process. This is what llvm::CrashRecoveryContext does
// for fatal errors, without its process-wide signal handlers. The frames jumped over are not
// unwound: what they owned is leaked, and the LLVM objects they used must not be used again.
bool RunTrappingFatalErrors(absl::FunctionRef<void()> fn, std::string* reason) {
  FatalErrorTrap trap;
  FatalErrorTrap* const outer = tls_fatal_error_trap;
  tls_fatal_error_trap = &trap;
  if (setjmp(trap.env) != 0) {
    tls_fatal_error_trap = outer;
    *reason = std::move(trap.reason);
    return false;
  }
  fn();
  tls_fatal_error_trap = outer;
  return true;
}

// Runs compile(), the compilation of `module`. An LLVM fatal error during it is returned as
// Internal ("LLVM fatal error while compiling module ..."), with *trapped set.
template <typename T>
absl::StatusOr<T> CompileTrappingFatalErrors(const std::string& module,
                                             absl::FunctionRef<absl::StatusOr<T>()> compile,
                                             bool* trapped) {
  std::optional<absl::StatusOr<T>> result;
  std::string reason;
  *trapped = !RunTrappingFatalErrors([&] { result.emplace(compile()); }, &reason);
  if (*trapped) {
    return absl::InternalError(
        absl::StrCat("LLVM fatal error while compiling module '", module, "': ", reason));
  }
  return *std::move(result);
}

void InitializeLlvmOnce(bool install_handler) {
  static std::once_flag targets_once;
  std::call_once(targets_once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
  if (install_handler) {
    static std::once_flag handler_once;
    std::call_once(handler_once, [] { llvm::install_fatal_error_handler(FatalErrorHandler); });
  }
}

// llvm::Error -> absl::Status. SymbolsNotFound becomes NotFound, anything else `code`.
absl::Status ToStatus(llvm::Error err, absl::string_view context,
                      absl::StatusCode code = absl::StatusCode::kInternal) {
  std::vector<std::string> messages;
  llvm::handleAllErrors(
      std::move(err),
      [&](const llvm::orc::SymbolsNotFound& e) {
        code = absl::StatusCode::kNotFound;
        messages.push_back(e.message());
      },
      [&](const llvm::ErrorInfoBase& e) { messages.push_back(e.message()); });
  return absl::Status(code, absl::StrCat(context, ": ", absl::StrJoin(messages, "; ")));
}

class ScopedModuleName {
 public:
  explicit ScopedModuleName(const std::string* name) : saved_(tls_current_module) {
    tls_current_module = name;
  }
  ~ScopedModuleName() { tls_current_module = saved_; }

 private:
  const std::string* saved_;
};

absl::Status CheckModule(llvm::Module& m, const llvm::DataLayout& dl, const llvm::Triple& triple,
                         bool reject_fast_math) {
  if (m.getTargetTriple().empty()) m.setTargetTriple(triple.str());
  if (m.getDataLayout().isDefault()) m.setDataLayout(dl);
  if (m.getDataLayout() != dl) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", m.getModuleIdentifier(), "' has data layout '",
                     m.getDataLayoutStr(), "', the engine needs '",
                     dl.getStringRepresentation(), "' (use Engine::NewModule)"));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (llvm::verifyModule(m, &os)) {
    os.flush();
    return absl::InvalidArgumentError(
        absl::StrCat("LLVM verifier rejected module '", m.getModuleIdentifier(), "': ", text));
  }
  if (reject_fast_math) {
    for (llvm::Function& f : m) {
      for (llvm::Instruction& inst : llvm::instructions(f)) {
        if (llvm::isa<llvm::FPMathOperator>(inst) && inst.getFastMathFlags().any()) {
          std::string printed;
          llvm::raw_string_ostream ps(printed);
          inst.print(ps);
          ps.flush();
          return absl::InvalidArgumentError(absl::StrCat(
              "module '", m.getModuleIdentifier(), "' function '", f.getName().str(),
              "' uses fast-math flags (results would not be bit-exact):", printed));
        }
      }
    }
  }
  return absl::OkStatus();
}

constexpr char kIdentityMetadata[] = "dvejit.identity";

std::string ModuleIdentity(const llvm::Module& m) {
  const llvm::NamedMDNode* node = m.getNamedMetadata(kIdentityMetadata);
  if (node == nullptr || node->getNumOperands() != 1 || node->getOperand(0)->getNumOperands() != 1)
    return "";
  const auto* text = llvm::dyn_cast<llvm::MDString>(node->getOperand(0)->getOperand(0));
  return text != nullptr ? text->getString().str() : "";
}

}  // namespace

void SetModuleIdentity(llvm::Module& m, const std::string& identity) {
  llvm::NamedMDNode* node = m.getOrInsertNamedMetadata(kIdentityMetadata);
  node->clearOperands();
  node->addOperand(llvm::MDNode::get(m.getContext(), {llvm::MDString::get(m.getContext(), identity)}));
}

// ---------------------------------------------------------------------------------------------
// DiskObjectCache: objects under `dir`, one file per (version key, module name).
//
// File: "DVEJITOB" | u32 key length | key | u64 object length | object bytes, written to a
// temporary name and renamed into place (atomic for concurrent processes). The full key
// (version key, module name and the module's identity) is stored and compared, so a hash
// collision is a miss, never wrong code.
class DiskObjectCache : public llvm::ObjectCache {
 public:
  DiskObjectCache(std::string dir, std::string version_key)
      : dir_(std::move(dir)), version_key_(std::move(version_key)) {}

  absl::Status Init() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot create object cache directory '", dir_, "': ", ec.message()));
    }
    return absl::OkStatus();
  }

  // Stored in the file and compared in full on load: a file-name collision is a miss.
  std::string Key(const std::string& module_name, const std::string& identity) const {
    return absl::StrCat(version_key_, "\n", module_name, "\n", identity);
  }
  std::string PathFor(const std::string& module_name) const {
    const uint64_t h = llvm::xxHash64(absl::StrCat(version_key_, "\n", module_name));
    char name[32];
    std::snprintf(name, sizeof(name), "%016llx.o", static_cast<unsigned long long>(h));
    return (std::filesystem::path(dir_) / name).string();
  }

  // Loads and validates the object for `module_name`; keeps it for the next getObject of a
  // module with that name. Returns whether one is there (then codegen will be skipped).
  bool Prefetch(const std::string& module_name, const std::string& identity) {
    std::unique_ptr<llvm::MemoryBuffer> obj = Load(module_name, identity);
    if (obj == nullptr) return false;
    absl::MutexLock lock(&mu_);
    prefetched_[module_name] = std::move(obj);
    return true;
  }
  void Forget(const std::string& module_name) {
    absl::MutexLock lock(&mu_);
    prefetched_.erase(module_name);
  }

  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef obj) override {
    const std::string& name = m->getModuleIdentifier();
    if (name.empty()) return;
    const std::string key = Key(name, ModuleIdentity(*m));
    const std::string path = PathFor(name);
    static std::atomic<uint64_t> tmp_counter{0};
    const std::string tmp = absl::StrCat(
        path, ".tmp.", ::getpid(), ".",
        std::hash<std::thread::id>()(std::this_thread::get_id()), ".", tmp_counter++);
    bool ok = false;
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (out) {
        const uint32_t key_len = static_cast<uint32_t>(key.size());
        const uint64_t obj_len = obj.getBufferSize();
        out.write(kMagic, sizeof(kMagic) - 1);
        out.write(reinterpret_cast<const char*>(&key_len), sizeof(key_len));
        out.write(key.data(), static_cast<std::streamsize>(key.size()));
        out.write(reinterpret_cast<const char*>(&obj_len), sizeof(obj_len));
        out.write(obj.getBufferStart(), static_cast<std::streamsize>(obj_len));
        out.flush();
        ok = static_cast<bool>(out);
      }
    }
    std::error_code ec;
    if (ok) std::filesystem::rename(tmp, path, ec);
    if (!ok || ec) {
      std::filesystem::remove(tmp, ec);
      absl::MutexLock lock(&mu_);
      ++stats_.errors;
      return;
    }
    absl::MutexLock lock(&mu_);
    ++stats_.writes;
  }

  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module* m) override {
    const std::string& name = m->getModuleIdentifier();
    std::unique_ptr<llvm::MemoryBuffer> obj;
    {
      absl::MutexLock lock(&mu_);
      auto it = prefetched_.find(name);
      if (it != prefetched_.end()) {
        obj = std::move(it->second);
        prefetched_.erase(it);
      }
    }
    if (obj == nullptr && !name.empty()) obj = Load(name, ModuleIdentity(*m));
    absl::MutexLock lock(&mu_);
    ++(obj != nullptr ? stats_.hits : stats_.misses);
    return obj;
  }

  ObjectCacheStats stats() const {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

 private:
  static constexpr char kMagic[] = "DVEJITOB";

  // The validated object for `module_name`, or nullptr (absent, foreign or corrupt file).
  std::unique_ptr<llvm::MemoryBuffer> Load(const std::string& module_name, const std::string& identity) {
    const std::string path = PathFor(module_name);
    auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file) return nullptr;  // absent: an ordinary miss
    const std::string key = Key(module_name, identity);
    llvm::StringRef data = (*file)->getBuffer();
    auto bad = [&] {
      absl::MutexLock lock(&mu_);
      ++stats_.errors;
      return nullptr;
    };
    const size_t magic_len = sizeof(kMagic) - 1;
    if (data.size() < magic_len + 4 || !data.startswith(kMagic)) return bad();
    uint32_t key_len;
    std::memcpy(&key_len, data.data() + magic_len, 4);
    size_t pos = magic_len + 4;
    if (data.size() < pos + key_len + 8) return bad();
    if (data.substr(pos, key_len) != key) return nullptr;  // hash collision: a miss
    pos += key_len;
    uint64_t obj_len;
    std::memcpy(&obj_len, data.data() + pos, 8);
    pos += 8;
    if (data.size() - pos != obj_len) return bad();
    std::unique_ptr<llvm::MemoryBuffer> obj =
        llvm::MemoryBuffer::getMemBufferCopy(data.substr(pos), module_name);
    auto parsed = llvm::object::ObjectFile::createObjectFile(obj->getMemBufferRef());
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return bad();
    }
    return obj;
  }

  const std::string dir_;
  const std::string version_key_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<llvm::MemoryBuffer>> prefetched_
      ABSL_GUARDED_BY(mu_);
  ObjectCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------------------------
// Target machines, reused from one compile to the next. Two fresh ones per compile (ORC's
// ConcurrentIRCompiler makes one for code generation, the pass pipeline's TTI needed another)
// rebuilt their subtargets' lowering and legalizer tables each time: about 2 ms of every compile
// on the Zen 3 host (a one-element Memset compiled in 4.4-4.6 ms, now 2.4-3.9). A target machine
// serves one compile at a time; Take() hands out a free one or makes one, ~Lease gives it back.
// After an LLVM fatal error the frames jumped over are not unwound (RunTrappingFatalErrors): the
// machine that was compiling is never given back, so no machine in an unknown state is reused.
class TargetMachinePool {
 public:
  explicit TargetMachinePool(llvm::orc::JITTargetMachineBuilder jtmb) : jtmb_(std::move(jtmb)) {}

  class Lease {
   public:
    Lease(TargetMachinePool* pool, std::unique_ptr<llvm::TargetMachine> tm)
        : pool_(pool), tm_(std::move(tm)) {}
    Lease(Lease&&) = default;
    ~Lease() {
      if (tm_ != nullptr) pool_->Give(std::move(tm_));
    }
    llvm::TargetMachine& operator*() const { return *tm_; }
    llvm::TargetMachine* get() const { return tm_.get(); }

   private:
    TargetMachinePool* pool_;
    std::unique_ptr<llvm::TargetMachine> tm_;
  };

  llvm::Expected<Lease> Take() {
    {
      absl::MutexLock lock(&mu_);
      if (!free_.empty()) {
        std::unique_ptr<llvm::TargetMachine> tm = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(tm));
      }
    }
    auto tm = jtmb_.createTargetMachine();
    if (!tm) return tm.takeError();
    return Lease(this, std::move(*tm));
  }

  const llvm::TargetOptions& options() const { return jtmb_.getOptions(); }

 private:
  void Give(std::unique_ptr<llvm::TargetMachine> tm) {
    absl::MutexLock lock(&mu_);
    free_.push_back(std::move(tm));
  }

  llvm::orc::JITTargetMachineBuilder jtmb_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<llvm::TargetMachine>> free_ ABSL_GUARDED_BY(mu_);
};

namespace {

// ORC's compile step (IR module -> object file) on a pooled target machine.
class PooledIRCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  PooledIRCompiler(TargetMachinePool* pool, llvm::ObjectCache* cache)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(pool->options())),
        pool_(pool),
        cache_(cache) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& m) override {
    auto tm = pool_->Take();
    if (!tm) return tm.takeError();
    llvm::orc::SimpleCompiler compile(**tm, cache_);
    return compile(m);
  }

 private:
  TargetMachinePool* pool_;
  llvm::ObjectCache* cache_;
};

}  // namespace

// Engine

Engine::Engine(const EngineOptions& options) : options_(options) {}
Engine::~Engine() {
  if (disabled_.load()) {
    // After an LLVM fatal error the JIT session's state is unknown (a materialisation was cut
    // short): never tear it down. The code it made stays mapped; the object cache it refers to
    // stays too.
    (void)jit_.release();
    (void)object_cache_.release();
  }
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineOptions& options) {
  std::unique_ptr<Engine> engine(new Engine(options));
  if (absl::Status s = engine->Init(); !s.ok()) return s;
  return engine;
}

absl::Status Engine::Init() {
  InitializeLlvmOnce(options_.install_fatal_error_handler);

  const llvm::Triple triple(llvm::sys::getProcessTriple());
  if (!triple.isX86() || !triple.isArch64Bit()) {
    return absl::UnimplementedError(
        absl::StrCat("dvejit's JIT supports x86-64 hosts only, not ", triple.str()));
  }
  cpu_ = llvm::sys::getHostCPUName().str();

  // Explicit features: LLVM 16 names some AVX-512 hosts "generic", whose default feature set is
  // baseline x86-64; every feature is spelled out so codegen matches the host exactly.
  llvm::StringMap<bool> host;
  if (!llvm::sys::getHostCPUFeatures(host)) host.clear();
  for (const char* denied : kDeniedFeatures) {
    if (denied == std::string("avx512bf16") || host.count(denied)) host[denied] = false;
  }
  if (options_.max_vector_width != 0 && options_.max_vector_width < 16) {
    for (auto& entry : host) {
      const llvm::StringRef name = entry.getKey();
      const bool wide = name.startswith("avx512") || name == "avxvnni" || name == "avxifma" ||
                        name == "avxneconvert" || name == "avxvnniint8";
      const bool avx = name == "avx" || name == "avx2" || name == "fma" || name == "fma4" ||
                       name == "f16c" || name == "vaes" || name == "vpclmulqdq" || name == "gfni";
      if (wide || (options_.max_vector_width < 8 && avx)) entry.second = false;
    }
  }
  std::vector<std::string> names;
  for (const auto& entry : host) names.push_back(entry.getKey().str());
  std::sort(names.begin(), names.end());
  std::vector<std::string> feature_list;
  for (const std::string& name : names) {
    const bool on = host.lookup(name);
    feature_list.push_back(absl::StrCat(on ? "+" : "-", name));
    if (on) enabled_features_.insert(name);
  }
  features_ = absl::StrJoin(feature_list, ",");
  vector_width_f32_ = HasFeature("avx512f") ? 16 : HasFeature("avx2") ? 8 : 4;

  jtmb_ = std::make_unique<llvm::orc::JITTargetMachineBuilder>(triple);
  jtmb_->setCPU(cpu_);
  jtmb_->addFeatures(feature_list);
  jtmb_->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  // Small code model + PIC with JITLink: constant-pool loads stay RIP-relative.
  jtmb_->setCodeModel(llvm::CodeModel::Small);
  jtmb_->setRelocationModel(llvm::Reloc::PIC_);
  llvm::TargetOptions& to = jtmb_->getOptions();
  to.AllowFPOpFusion = llvm::FPOpFusion::Strict;  // -ffp-contract=off: never fuse a*b+c
  to.UnsafeFPMath = false;
  to.NoInfsFPMath = false;
  to.NoNaNsFPMath = false;
  to.NoSignedZerosFPMath = false;
  to.ApproxFuncFPMath = false;
  to.NoTrappingFPMath = true;  // the DVE model has no FP traps; the default
  to.HonorSignDependentRoundingFPMathOption = false;

  if (!options_.object_cache_dir.empty()) {
    object_cache_ = std::make_unique<DiskObjectCache>(options_.object_cache_dir, VersionKey());
    if (absl::Status s = object_cache_->Init(); !s.ok()) return s;
  }

  target_machines_ = std::make_unique<TargetMachinePool>(*jtmb_);
  DiskObjectCache* cache = object_cache_.get();
  TargetMachinePool* pool = target_machines_.get();
  llvm::orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(*jtmb_);
  builder.setCompileFunctionCreator(
      [cache, pool](llvm::orc::JITTargetMachineBuilder)
          -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
        // A target machine per compile at a time: safe for concurrent Compile calls.
        return std::make_unique<PooledIRCompiler>(pool, cache);
      });
  // RuntimeDyld, not JITLink: in LLVM 16 a JITLink ObjectLinkingLayer keeps every module's
  // pages mapped after its JITDylib is removed (two mappings per module, code and data), so a
  // long-lived process that compiles many shapes ran into the kernel's map limit (65530) after
  // about 32,000 compiles, whatever the cache's bound. RuntimeDyld's SectionMemoryManager is
  // freed with the module's resources.
  builder.setObjectLinkingLayerCreator(
      [](llvm::orc::ExecutionSession& es,
         const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
        return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
            es, [] { return std::make_unique<llvm::SectionMemoryManager>(); });
      });
  // No static constructors/destructors in generated code: no platform runtime needed.
  builder.setPlatformSetUp(llvm::orc::setUpInactivePlatform);
  auto jit = builder.create();
  if (!jit) return ToStatus(jit.takeError(), "cannot create the LLVM JIT");
  jit_ = std::move(*jit);

  // Failures are returned by lookup(); don't also print them.
  jit_->getExecutionSession().setErrorReporter([](llvm::Error err) {
    llvm::consumeError(std::move(err));
  });
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix());
  if (!process) return ToStatus(process.takeError(), "cannot expose process symbols to the JIT");
  jit_->getMainJITDylib().addGenerator(std::move(*process));
  return absl::OkStatus();
}

bool Engine::HasFeature(const std::string& name) const {
  return enabled_features_.contains(name);
}

const llvm::DataLayout& Engine::data_layout() const { return jit_->getDataLayout(); }
const llvm::Triple& Engine::triple() const { return jit_->getTargetTriple(); }

std::pair<std::unique_ptr<llvm::LLVMContext>, std::unique_ptr<llvm::Module>> Engine::NewModule(
    const std::string& name) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>(name, *ctx);
  m->setTargetTriple(triple().str());
  m->setDataLayout(data_layout());
  return {std::move(ctx), std::move(m)};
}

std::string Engine::VersionKey() const {
  return absl::StrCat("llvm=", LLVM_VERSION_STRING, ";code=", kCodeRevision, ";cpu=", cpu_,
                      ";features=", features_, ";opt=", options_.optimize ? 1 : 0);
}

absl::Status Engine::OptimizeModule(llvm::Module& m) {
  auto tm = target_machines_->Take();
  if (!tm) return ToStatus(tm.takeError(), "cannot create the target machine");

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm->get());  // registers the target's TTI (vector widths, costs)
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  // The whole pipeline, in one place. The IR arrives vectorised: no loop/SLP vectorisers, no
  // unrolling, nothing that adds fast-math flags; none of these passes contracts fmul+fadd.
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));  // allocas -> SSA (mem2reg)
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  // Hoists the loops' invariant loads and splats (without it the BN chains ran about 1.5x
  // slower). GVN and a second InstCombine/SimplifyCFG round after it changed no measured
  // workload beyond noise and cost 6 of the cold compile's ~80 ms (docs/benchmarks.md).
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LICMPass(llvm::LICMOptions()),
                                                    /*UseMemorySSA=*/true));
  fpm.addPass(llvm::ADCEPass());

  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, mam);
  return absl::OkStatus();
}

CompiledCode::~CompiledCode() {
  if (dylib_ != nullptr) engine_->Release(dylib_);
}

void Engine::Release(llvm::orc::JITDylib* dylib) {
  // After an LLVM fatal error the session's state is unknown (see ~Engine): leave it alone.
  if (disabled_.load()) return;
  llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*dylib));
  absl::MutexLock lock(&stats_mu_);
  ++released_;
}

absl::StatusOr<void*> Engine::Compile(std::unique_ptr<llvm::LLVMContext> ctx,
                                      std::unique_ptr<llvm::Module> m,
                                      const std::string& symbol) {
  auto code = CompileOwned(std::move(ctx), std::move(m), symbol);
  if (!code.ok()) return code.status();
  (*code)->dylib_ = nullptr;  // kept until the engine goes
  return (*code)->address();
}

absl::StatusOr<std::unique_ptr<CompiledCode>> Engine::CompileOwned(
    std::unique_ptr<llvm::LLVMContext> ctx_in, std::unique_ptr<llvm::Module> m_in,
    const std::string& symbol) {
  const absl::Time start = absl::Now();
  // Own both here, the module declared last so that it is destroyed first on every error path
  // (the caller destroys by-value parameters in an unspecified order: context before module
  // would crash).
  std::unique_ptr<llvm::LLVMContext> ctx = std::move(ctx_in);
  std::unique_ptr<llvm::Module> m = std::move(m_in);
  if (ctx == nullptr || m == nullptr) {
    absl::MutexLock lock(&stats_mu_);
    ++failures_;
    return absl::InvalidArgumentError("Engine::Compile needs a context and a module");
  }
  if (&m->getContext() != ctx.get()) {
    absl::MutexLock lock(&stats_mu_);
    ++failures_;
    return absl::InvalidArgumentError("Engine::Compile: the module is not in the given context");
  }
  if (disabled_.load()) {
    absl::MutexLock lock(&stats_mu_);
    ++failures_;
    return absl::FailedPreconditionError(absl::StrCat(
        "this JIT engine takes no more modules after an LLVM fatal error: ", disabled_reason_));
  }
  const std::string name = m->getModuleIdentifier();
  ScopedModuleName scoped_name(&name);

  auto compile = [&]() -> absl::StatusOr<std::pair<void*, llvm::orc::JITDylib*>> {
    if (absl::Status s = CheckModule(*m, data_layout(), triple(), options_.reject_fast_math);
        !s.ok()) {
      return s;
    }
    // On a disk-cache hit the object is loaded instead of generated: skip the pipeline too.
    const bool cached =
        object_cache_ != nullptr && !name.empty() && object_cache_->Prefetch(name, ModuleIdentity(*m));
    if (options_.optimize && !cached) {
      if (absl::Status s = OptimizeModule(*m); !s.ok()) return s;
    }
    // A JITDylib per module: its own symbol namespace, linked to the main one (runtime helpers,
    // process symbols).
    auto jd = jit_->createJITDylib(absl::StrCat("dvejit.", next_dylib_++, ".", name));
    if (!jd) return ToStatus(jd.takeError(), "cannot create a JITDylib");
    jd->addToLinkOrder(jit_->getMainJITDylib());
    llvm::orc::ThreadSafeModule tsm(std::move(m), std::move(ctx));
    if (llvm::Error err = jit_->addIRModule(*jd, std::move(tsm))) {
      if (cached) object_cache_->Forget(name);
      return ToStatus(std::move(err), absl::StrCat("cannot add module '", name, "'"));
    }
    auto addr = jit_->lookup(*jd, symbol);
    if (cached) object_cache_->Forget(name);
    if (!addr) {
      absl::Status s = ToStatus(addr.takeError(),
                                absl::StrCat("compiling module '", name, "' for '", symbol, "'"));
      llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*jd));
      return s;
    }
    return std::make_pair(addr->toPtr<void*>(), &*jd);
  };
  bool trapped = false;
  auto result = CompileTrappingFatalErrors<std::pair<void*, llvm::orc::JITDylib*>>(name, compile, &trapped);
  if (trapped) {
    // The module, its context and the session that was compiling them are in an unknown state:
    // leak them, and take no more modules (the caller may make a new engine).
    (void)m.release();
    (void)ctx.release();
    absl::MutexLock lock(&stats_mu_);
    if (!disabled_.exchange(true)) disabled_reason_ = std::string(result.status().message());
  }

  absl::MutexLock lock(&stats_mu_);
  if (!result.ok()) {
    ++failures_;
    return result.status();
  }
  ++compiles_;
  compile_time_ += absl::Now() - start;
  return std::unique_ptr<CompiledCode>(new CompiledCode(this, result->second, result->first));
}

absl::StatusOr<std::string> Engine::CompileToAssembly(llvm::Module& m) {
  const std::string name = m.getModuleIdentifier();
  ScopedModuleName scoped_name(&name);
  if (absl::Status s = CheckModule(m, data_layout(), triple(), options_.reject_fast_math);
      !s.ok()) {
    return s;
  }
  auto compile = [&]() -> absl::StatusOr<std::string> {
    if (options_.optimize) {
      if (absl::Status s = OptimizeModule(m); !s.ok()) return s;
    }
    auto tm = target_machines_->Take();
    if (!tm) return ToStatus(tm.takeError(), "cannot create the target machine");
    llvm::SmallString<4096> text;
    llvm::raw_svector_ostream os(text);
    llvm::legacy::PassManager pm;
    if (tm->get()->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile)) {
      return absl::InternalError("the target machine cannot emit assembly");
    }
    pm.run(m);
    return std::string(text.str());
  };
  // After a fatal error only this call's own target machine and passes were involved: the
  // engine stays usable.
  bool trapped = false;
  return CompileTrappingFatalErrors<std::string>(name, compile, &trapped);
}

absl::Status Engine::RegisterSymbol(const std::string& name, void* address) {
  auto& es = jit_->getExecutionSession();
  llvm::orc::SymbolMap symbols;
  const char prefix = data_layout().getGlobalPrefix();
  symbols[es.intern(prefix != '\0' ? std::string(1, prefix) + name : name)] =
      llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(address),
                               llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (llvm::Error err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols))) {
    return ToStatus(std::move(err), absl::StrCat("cannot register symbol '", name, "'"),
                    absl::StatusCode::kAlreadyExists);
  }
  return absl::OkStatus();
}

EngineStats Engine::stats() const {
  EngineStats s;
  {
    absl::MutexLock lock(&stats_mu_);
    s.compiles = compiles_;
    s.failures = failures_;
    s.compile_time = compile_time_;
    s.released = released_;
  }
  if (object_cache_ != nullptr) s.object_cache = object_cache_->stats();
  return s;
}

}  // namespace dvejit::jit
