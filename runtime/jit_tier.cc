#include "runtime/jit_tier.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "frontend/diag.h"
#include "frontend/strcat.h"
#include "ir/passes.h"
#include "jit/engine.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/xxhash.h>
#pragma GCC diagnostic pop

namespace dvejit {
namespace {

// FNV-1a, 64 bits.
uint64_t Hash(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
}  // namespace

// A fast 64-bit hash of whole records (every run of a repeated stream pays it once). Each
// record's eight words go to four independent lanes, two words each, so that the multiplies
// overlap: one chain through all the words cost about 45 cycles per record, 14 ns per
// instruction of a run. The generation enters every lane through a multiply, so it cannot
// cancel against a record's low bits (with `seed ^ gen`, a Max8 under Maverick and a
// MatchValueLoad under Mariana shared a key), and a final mix spreads the last words.
uint64_t JitTier::StreamKey(std::span<const Instruction> program, Generation gen) {
  static_assert(kRecordBytes == 64, "four lanes of two 8-byte words per record");
  uint64_t lane[4];
  for (int l = 0; l < 4; ++l)
    lane[l] = (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(l + 1) + static_cast<uint64_t>(gen)) *
              0xC2B2AE3D27D4EB4Full;
  for (const Instruction& inst : program)
    for (int l = 0; l < 4; ++l) {
      uint64_t a, b;
      std::memcpy(&a, inst.bytes.data() + 16 * l, 8);
      std::memcpy(&b, inst.bytes.data() + 16 * l + 8, 8);
      uint64_t h = (lane[l] ^ a) * 0xFF51AFD7ED558CCDull;
      h = ((h ^ (h >> 29)) ^ b) * 0xC4CEB9FE1A85EC53ull;
      lane[l] = h ^ (h >> 32);
    }
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  uint64_t h = lane[0] ^ rotl(lane[1], 17) ^ rotl(lane[2], 31) ^ rotl(lane[3], 47);
  h ^= program.size() * 0xC4CEB9FE1A85EC53ull;
  h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDull;
  h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

StreamIdentity::StreamIdentity(std::span<const Instruction> program, Generation gen,
                               const StreamOptions& options)
    : gen_(gen), options_(options) {
  if (program.size() * kRecordBytes > kMaxBytes) return;
  records_.resize(program.size() * kRecordBytes);
  for (size_t i = 0; i < program.size(); ++i)
    std::memcpy(records_.data() + i * kRecordBytes, program[i].bytes.data(), kRecordBytes);
}

bool StreamIdentity::Matches(std::span<const Instruction> program, Generation gen,
                             const StreamOptions& options) const {
  if (records_.empty() || gen != gen_ || options != options_ ||
      program.size() * kRecordBytes != records_.size())
    return false;
  // Word by word, differences or-ed, one test per record (memcmp per record cost ~10 ns each).
  for (size_t i = 0; i < program.size(); ++i) {
    uint64_t diff = 0;
    for (int k = 0; k < kRecordBytes; k += 8) {
      uint64_t x, y;
      std::memcpy(&x, records_.data() + i * kRecordBytes + k, 8);
      std::memcpy(&y, program[i].bytes.data() + k, 8);
      diff |= x ^ y;
    }
    if (diff != 0) return false;
  }
  return true;
}

JitTier& JitTier::Global() {
  static JitTier* tier = new JitTier();  // lives for the process: compiled code may be running
  return *tier;
}

absl::Status JitTier::EnsureEngine() {
  if (!engine_tried_) {
    engine_tried_ = true;
    jit::EngineOptions options;
    // An optional on-disk object cache shared by processes (compiled streams survive restarts).
    if (const char* dir = std::getenv("DVEJIT_JIT_CACHE_DIR"); dir != nullptr && *dir != 0)
      options.object_cache_dir = dir;
    // Code as an AVX2 (8) or SSE (4) host would get it: how the tests cover those paths here.
    if (const char* w = std::getenv("DVEJIT_JIT_VECTOR_WIDTH"); w != nullptr && *w != 0)
      options.max_vector_width = std::atoi(w);
    auto e = jit::Engine::Create(options);
    if (e.ok()) engine_ = std::move(*e);
    else engine_error_ = std::string(e.status().message());
  }
  if (engine_) return absl::OkStatus();
  return absl::UnavailableError(Cat("the JIT is unavailable: ", engine_error_));
}

bool JitTier::available() {
  std::lock_guard<std::mutex> lock(mu_);
  return EnsureEngine().ok();
}
std::string JitTier::unavailable_reason() {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = EnsureEngine();
  return s.ok() ? "" : std::string(s.message());
}

std::string JitTier::target_description() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!EnsureEngine().ok()) return "";
  return Cat(engine_->cpu(), ", ", engine_->vector_width_f32(), " f32 lanes");
}

bool JitTier::WasValidated(uint64_t key, std::span<const Instruction> program, Generation gen,
                           const StreamOptions& options, bool* uses_registers) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = validated_.find(key);
  if (it == validated_.end() || !it->second.identity.Matches(program, gen, options)) return false;
  if (uses_registers != nullptr) *uses_registers = it->second.uses_registers;
  return true;
}
void JitTier::MarkValidated(uint64_t key, std::span<const Instruction> program, Generation gen,
                            const StreamOptions& options, bool uses_registers) {
  StreamIdentity id(program, gen, options);
  if (id.empty()) return;  // too long to keep: validated on every run
  std::lock_guard<std::mutex> lock(mu_);
  if (validated_.size() >= kMaxFacts || validated_identity_bytes_ + id.bytes() > kMaxIdentityBytes) {
    validated_.clear();
    validated_identity_bytes_ = 0;
  }
  auto [it, inserted] = validated_.try_emplace(key);
  if (!inserted) validated_identity_bytes_ -= it->second.identity.bytes();  // a colliding stream's: replaced
  validated_identity_bytes_ += id.bytes();
  it->second = ValidatedStream{std::move(id), uses_registers};
}

int64_t JitTier::CountRun(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (runs_.size() >= kMaxFacts && runs_.count(key) == 0) runs_.clear();
  return runs_[key]++;
}

void JitTier::set_capacity(size_t shapes) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = shapes < 1 ? 1 : shapes;
  EvictBeyondCapacity();
}

size_t JitTier::cached_shapes() {
  std::lock_guard<std::mutex> lock(mu_);
  return by_shape_.size();
}

void JitTier::Touch(CacheEntry& e, uint64_t shape_key) {
  lru_.erase(e.lru);
  lru_.push_front(shape_key);
  e.lru = lru_.begin();
}

void JitTier::AddBytesKey(CacheEntry& e, uint64_t bytes_key, uint64_t shape_key, StreamIdentity id) {
  if (id.empty()) return;  // too long to keep: found by its shape on every run
  if (by_bytes_identity_bytes_ + id.bytes() > kMaxIdentityBytes) ForgetBytesKeys();
  if (auto it = by_bytes_.find(bytes_key); it != by_bytes_.end()) {  // a colliding stream's
    std::deque<uint64_t>& keys = by_shape_.at(it->second.shape_key).bytes_keys;
    keys.erase(std::remove(keys.begin(), keys.end(), bytes_key), keys.end());
    by_bytes_identity_bytes_ -= it->second.id.bytes();
    by_bytes_.erase(it);
  }
  if (e.bytes_keys.size() >= kBytesPerShape) {
    auto old = by_bytes_.find(e.bytes_keys.front());
    by_bytes_identity_bytes_ -= old->second.id.bytes();
    by_bytes_.erase(old);
    e.bytes_keys.pop_front();
  }
  e.bytes_keys.push_back(bytes_key);
  by_bytes_identity_bytes_ += id.bytes();
  by_bytes_.emplace(bytes_key, BytesEntry{shape_key, std::move(id)});
}

void JitTier::ForgetBytesKeys() {
  by_bytes_.clear();
  by_bytes_identity_bytes_ = 0;
  for (auto& [shape_key, e] : by_shape_) e.bytes_keys.clear();
}

void JitTier::EvictBeyondCapacity() {
  if (capacity_ == 0) {
    const char* env = std::getenv("DVEJIT_JIT_CACHE_STREAMS");
    capacity_ = env != nullptr && std::atoll(env) > 0 ? static_cast<size_t>(std::atoll(env)) : 512;
  }
  while (by_shape_.size() > capacity_) {
    const uint64_t victim = lru_.back();
    lru_.pop_back();
    auto it = by_shape_.find(victim);
    for (uint64_t k : it->second.bytes_keys) {
      auto b = by_bytes_.find(k);
      by_bytes_identity_bytes_ -= b->second.id.bytes();
      by_bytes_.erase(b);
    }
    by_shape_.erase(it);  // the code goes when the last run holding it ends
  }
}

absl::StatusOr<std::pair<std::string, std::string>> JitTier::IrText(
    std::span<const Instruction> resolved, Generation gen, Profile profile) {
  const std::string before = ir::Print(ir::Lower(resolved, gen, profile));
  auto after = ir::BuildIR(resolved, gen, /*fuse=*/true, profile);
  if (!after.ok()) return after.status();
  return std::make_pair(before, ir::Print(*after));
}

absl::StatusOr<std::shared_ptr<const CompiledStream>> JitTier::Get(
    std::span<const Instruction> resolved, Generation gen, uint64_t key, bool* hit, bool fuse,
    Profile profile) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = EnsureEngine(); !s.ok()) return s;
  const uint64_t bytes_key = key ^ (fuse ? 0 : 0x9E3779B97F4A7C15ull) ^
                             (profile == Profile::Device ? 0xD3B1CE5EC0DE0001ull : 0);
  const StreamOptions options = {(fuse ? 1u : 0u) | (static_cast<uint64_t>(profile) << 1), 0, 0, 0, 0};
  if (auto it = by_bytes_.find(bytes_key);
      it != by_bytes_.end() && it->second.id.Matches(resolved, gen, options)) {
    *hit = true;
    CacheEntry& e = by_shape_.at(it->second.shape_key);
    Touch(e, it->second.shape_key);
    return e.stream;
  }
  // Same shape, other addresses or immediates: the IR (which prints no argument values) and
  // the engine's version key identify the code.
  auto f = ir::BuildIR(resolved, gen, fuse, profile);
  if (!f.ok()) return f.status();
  const std::string text = ir::Print(*f) + engine_->VersionKey();
  const uint64_t shape_key = Hash(text.data(), text.size());
  // The module's name (the on-disk cache's file name) carries a second, independent hash of the
  // text; the cache also stores the text itself and compares it.
  const std::string module_name =
      Cat("dvejit_stream_", Hex(shape_key, 16), "_", Hex(llvm::xxHash64(text), 16));
  if (auto it = by_shape_.find(shape_key); it != by_shape_.end()) {
    if (it->second.text != text) {  // another shape with this key: compiled, not cached
      *hit = false;
      auto compiled = CompileLocked(*f, module_name, text, static_cast<int>(resolved.size()));
      if (!compiled.ok()) return compiled.status();
      return std::shared_ptr<const CompiledStream>(*compiled);
    }
    *hit = true;
    Touch(it->second, shape_key);
    AddBytesKey(it->second, bytes_key, shape_key, StreamIdentity(resolved, gen, options));
    return it->second.stream;
  }
  if (auto it = failed_by_shape_.find(shape_key); it != failed_by_shape_.end() && it->second.text == text)
    return it->second.status;
  *hit = false;
  auto compiled = CompileLocked(*f, module_name, text, static_cast<int>(resolved.size()));
  if (!compiled.ok()) {
    if (failed_by_shape_.size() >= kMaxFacts || failed_text_bytes_ + text.size() > kMaxIdentityBytes) {
      failed_by_shape_.clear();
      failed_text_bytes_ = 0;
    }
    FailedShape& failed = failed_by_shape_[shape_key];
    failed_text_bytes_ -= failed.text.size();  // a colliding shape's entry is replaced
    failed_text_bytes_ += text.size();
    failed = {text, compiled.status()};
    return compiled.status();
  }
  lru_.push_front(shape_key);
  CacheEntry& e = by_shape_[shape_key];
  e.stream = *compiled;
  e.text = text;
  e.lru = lru_.begin();
  AddBytesKey(e, bytes_key, shape_key, StreamIdentity(resolved, gen, options));
  std::shared_ptr<const CompiledStream> stream = e.stream;
  EvictBeyondCapacity();
  return stream;
}

absl::StatusOr<std::shared_ptr<CompiledStream>> JitTier::CompileLocked(const ir::Function& f,
                                                                       const std::string& module_name,
                                                                       const std::string& shape_text,
                                                                       int instructions) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t object_cache_hits = engine_->stats().object_cache.hits;  // the tier's lock is held
  auto [ctx, module] = engine_->NewModule(module_name);
  jit::SetModuleIdentity(*module, shape_text);  // the on-disk cache compares it
  if (auto s = jit::EmitStream(f, *module, "stream", engine_->codegen_target()); !s.ok()) return s;
  auto fn = engine_->CompileOwned(std::move(ctx), std::move(module), "stream");
  if (!fn.ok()) {
    if (engine_->disabled()) {
      // An LLVM fatal error (a code generator bug) disabled the engine: other shapes get a new
      // one; this stream runs interpreted with the error as its reason.
      retired_engines_.push_back(std::move(engine_));
      engine_tried_ = false;
    }
    return fn.status();
  }
  auto compiled = std::make_shared<CompiledStream>();
  compiled->fn = reinterpret_cast<jit::StreamFn>((*fn)->address());
  compiled->code = std::move(*fn);
  compiled->args = f.args;
  compiled->fallback_reasons = f.fallback_reasons;
  compiled->device_noops = f.device_noops;
  int interpreted = 0;
  for (const ir::Stmt& s : f.stmts)
    if (!s.dead && s.op == ir::Op::Interp) ++interpreted;
  compiled->compiled_instructions = instructions - interpreted;
  compiled->from_object_cache = engine_->stats().object_cache.hits > object_cache_hits;
  compiled->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return compiled;
}

absl::StatusOr<std::shared_ptr<const CompiledStream>> JitTier::CompileUncached(
    std::span<const Instruction> resolved, Generation gen, bool fuse) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = EnsureEngine(); !s.ok()) return s;
  auto f = ir::BuildIR(resolved, gen, fuse);
  if (!f.ok()) return f.status();
  // A unique module name per cold compile, so the engine's own caches cannot serve it.
  static uint64_t counter = 0;
  auto compiled = CompileLocked(*f, Cat("dvejit_cold_", ++counter), "", static_cast<int>(resolved.size()));
  if (!compiled.ok()) return compiled.status();
  return std::shared_ptr<const CompiledStream>(*compiled);
}

}  // namespace dvejit
