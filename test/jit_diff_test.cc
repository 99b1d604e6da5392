// Differential testing of the JIT against the reference interpreter: random valid streams from
// the instruction generator (every generatable opcode, all dtypes, 1..128 channels, negative
// steps, broadcasts, PSUM, register addresses, overlapping operands, chains that fuse and chains
// that must not), run on two machines with identical random contents, compared bit for bit on
// all memory and all state. A mismatch is reduced to a minimal stream and printed as assembly
// (add it to the regression list below).
//
// DVEJIT_DIFF_STREAMS sets the number of streams (default 2000 — what CI runs); the `_long`
// mode (DVEJIT_DIFF_SECONDS) runs for as long as asked.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "frontend/assembler.h"
#include "frontend/disassembler.h"
#include "frontend/generator.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "jit/engine.h"
#include "kernels/numerics.h"
#include "runtime/executor.h"
#include "runtime/jit_tier.h"
#include "test/machine_difference.h"

namespace dvejit {
namespace {

constexpr uint32_t kWindow = 16 << 10;  // SBUF bytes per partition the streams may touch

// Opcodes the JIT compiles (the others still run, through the interpreter callback).
const Opcode kCompiled[] = {
    Opcode::BatchNormStats,        Opcode::BatchNormStats2,          Opcode::TransposeBatchNormStats2,
    Opcode::BatchNormAggregate,    Opcode::BatchNormGradAccumulate,  Opcode::BatchNormGradAccumulate2,
    Opcode::BatchNormParamLoad,    Opcode::BatchNormParamLoad2,      Opcode::BatchNormBackProp,
    Opcode::TensorScalarArith,     Opcode::TensorScalarPtrArith,     Opcode::TransposeTensorScalarArith,
    Opcode::TensorTensorArith,     Opcode::Reciprocal,               Opcode::Copy,
    Opcode::Cast,                  Opcode::Memset,                   Opcode::TensorTensorBitvec,
    Opcode::TensorScalarBitvec,    Opcode::TensorScalarPtrBitvec,    Opcode::CopyPredicated,
    Opcode::CastPredicated,
    Opcode::LoadParameterRam,
};

struct Fixture {
  std::vector<uint8_t> sbuf_image, psum_image;
  explicit Fixture(uint64_t seed) {
    std::mt19937_64 rng(seed);
    sbuf_image.resize(size_t{kWindow} * kPartitions);
    psum_image.resize(size_t{16 << 10} * kPartitions);
    // Mostly well-formed floats (so arithmetic is exercised), some raw bit patterns (NaNs,
    // subnormals, infinities).
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    for (auto* img : {&sbuf_image, &psum_image})
      for (size_t i = 0; i + 4 <= img->size(); i += 4) {
        uint32_t v;
        if (rng() % 8 == 0) {
          v = static_cast<uint32_t>(rng());
        } else {
          const float f = u(rng);
          std::memcpy(&v, &f, 4);
        }
        std::memcpy(&(*img)[i], &v, 4);
      }
  }
  void Load(Machine& m, uint64_t seed) const {
    const Generation gen = m.gen();
    (void)m.Write(Space::Sbuf, 0, kPartitions, 0, sbuf_image, kWindow);
    if (GeometryOf(gen).psum_size != 0)
      (void)m.Write(Space::Psum, 0, kPartitions, 0, psum_image, 16 << 10);
    MachineState& s = m.state();
    for (LaneState& l : s.lanes) l = LaneState{};
    std::mt19937_64 rng(seed);
    for (int r = 0; r < kRegisters; ++r)  // registers hold valid in-window SBUF addresses
      s.regs[r] = MakeAddress(Space::Sbuf, static_cast<uint32_t>(rng() % 8), static_cast<uint32_t>(rng() % 1024) * 4, gen);
    m.PreloadReciprocals();
    if (seed % 5 == 0)
      for (float& p : s.pram) p = std::uniform_real_distribution<float>(0.001f, 2.0f)(rng);
    std::memset(s.semaphores, 0, sizeof s.semaphores);
    std::memset(s.events, 0, sizeof s.events);
    s.saturate = false;
  }
};

// "" when identical, else the first difference. SBUF is compared in its first `window` bytes
// per partition (the random streams touch kWindow; the targeted tests compare everything),
// PSUM in its first 16 KiB.
std::string Compare(Machine& a, Machine& b, uint32_t window = kWindow) {
  return MachineDifference(a, b, window, 16 << 10);
}

struct Outcome {
  std::string diff;
  bool jit_ran = false;
  int compiled = 0;
};

// RunBoth's two machines, reused from one run to the next. A fresh pair's memory (about 50 MiB,
// zeroed by the kernel on first touch) took about a tenth of the differential tests' time.
// Reuse changes nothing that a run sees: Fixture::Load rewrites all that a stream may read (the
// SBUF window, PSUM, registers, Parameter RAM, lane state, semaphores, events). A pair whose
// runs differed is dropped, so that Reduce's runs start from fresh machines. Thread-safe.
struct MachinePair {
  explicit MachinePair(Generation gen) : interp(gen), jit(gen) {}
  Machine interp, jit;
};
class MachinePairs {
 public:
  std::unique_ptr<MachinePair> Take(Generation gen) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& free = free_[static_cast<int>(gen)];
      if (!free.empty()) {
        std::unique_ptr<MachinePair> pair = std::move(free.back());
        free.pop_back();
        return pair;
      }
    }
    return std::make_unique<MachinePair>(gen);
  }
  void Give(std::unique_ptr<MachinePair> pair) {
    std::lock_guard<std::mutex> lock(mu_);
    free_[static_cast<int>(pair->interp.gen())].push_back(std::move(pair));
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<MachinePair>> free_[std::size(kAllGenerations)];
};
MachinePairs& RunBothMachines() {
  static MachinePairs* pairs = new MachinePairs;
  return *pairs;
}

// The JIT's run splits every region of more than one channel block across `threads` threads,
// however small the region.
Outcome RunBoth(const std::vector<Instruction>& prog, Generation gen, const Fixture& fx, uint64_t seed,
                int threads = 1) {
  std::unique_ptr<MachinePair> pair = RunBothMachines().Take(gen);
  Machine& interp = pair->interp;
  Machine& jit = pair->jit;
  fx.Load(interp, seed);
  fx.Load(jit, seed);
  RunOptions o;
  const RunReport ri = RunProgram(interp, prog, o);
  o.tier = ExecutionTier::Jit;
  o.threads = threads;
  o.min_split_bytes = 0;
  const RunReport rj = RunProgram(jit, prog, o);
  Outcome out;
  out.jit_ran = rj.tier == "jit";
  out.compiled = rj.jit_compiled_instructions;
  if (ri.status.ok() != rj.status.ok() || ri.executed != rj.executed)
    out.diff = "status: interp '" + std::string(ri.status.message()) + "' vs jit '" + std::string(rj.status.message()) + "'";
  else
    out.diff = Compare(interp, jit);
  // A stream the JIT failed to compile runs interpreted and matches; here that is a defect
  // (a pass that broke the IR, LLVM refusing the module), not a fallback to accept.
  if (out.diff.empty() && !rj.jit_failure.empty()) out.diff = "jit failed: " + rj.jit_failure;
  if (out.diff.empty()) RunBothMachines().Give(std::move(pair));
  return out;
}

// Removes instructions while the mismatch persists.
std::vector<Instruction> Reduce(std::vector<Instruction> prog, Generation gen, const Fixture& fx, uint64_t seed,
                                int threads) {
  for (size_t i = 0; i < prog.size();) {
    std::vector<Instruction> shorter = prog;
    shorter.erase(shorter.begin() + static_cast<long>(i));
    if (!shorter.empty() && !RunBoth(shorter, gen, fx, seed, threads).diff.empty()) prog = shorter;
    else ++i;
  }
  return prog;
}

std::vector<Instruction> RandomStream(std::mt19937_64& rng, Generation gen) {
  GeneratorOptions opt;
  opt.gen = gen;
  opt.max_elements = 1 + rng() % 600;
  opt.max_channels = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 20) : 128;
  opt.allow_events = rng() % 10 == 0;
  opt.allow_register_addresses = rng() % 4 == 0;
  opt.sbuf_lo = 0;
  opt.sbuf_hi = rng() % 3 == 0 ? 2048 : kWindow;  // small windows make operands overlap
  const int n = 1 + static_cast<int>(rng() % 6);
  std::vector<Instruction> prog;
  for (int i = 0; i < n; ++i) {
    if (rng() % 5 == 0) {
      prog.push_back(GenerateRandomValid(rng, opt));
      continue;
    }
    // Prefer instructions the JIT compiles: a supported opcode, re-drawn a few times until the
    // lowering accepts its dtypes and ALU ops.
    const Opcode op = kCompiled[rng() % std::size(kCompiled)];
    if (!IsGeneratable(op, gen)) continue;
    Instruction inst = GenerateValid(op, rng, opt);
    for (int tries = 0; tries < 12; ++tries) {
      const ir::Function f = ir::Lower(std::span<const Instruction>(&inst, 1), gen);
      if (f.fallback_reasons.empty() || AddrModeOf(inst.bytes[16]) != AddrMode::Immediate) break;
      inst = GenerateValid(op, rng, opt);
    }
    prog.push_back(inst);
  }
  if (prog.empty()) prog.push_back(GenerateRandomValid(rng, opt));
  return prog;
}

void Fuzz(int64_t streams, double seconds, uint64_t seed0) {
  const Fixture fx(seed0);
  std::mt19937_64 rng(seed0);
  const auto start = std::chrono::steady_clock::now();
  int64_t ran = 0, jit_ran = 0, compiled = 0;
  const char* trace = std::getenv("DVEJIT_DIFF_TRACE");
  for (int64_t s = 0; s < streams || seconds > 0; ++s) {
    if (seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) break;
    const Generation gen = kAllGenerations[rng() % 4];
    const std::vector<Instruction> prog = RandomStream(rng, gen);
    const uint64_t seed = rng();
    const int threads = 1 + static_cast<int>(seed % 3);  // the JIT's regions on 1, 2 or 3 threads
    if (trace != nullptr) {  // this stream, replacing the last one (see DISABLED_Long)
      std::ofstream(trace, std::ios::trunc) << "# stream " << s << ", " << GenerationName(gen) << ", fixture seed "
                                            << seed0 << ", machine seed " << seed << ", threads " << threads << "\n"
                                            << DisassembleStream(prog, gen);
    }
    const Outcome o = RunBoth(prog, gen, fx, seed, threads);
    ++ran;
    jit_ran += o.jit_ran;
    compiled += o.compiled;
    if (!o.diff.empty()) {
      const std::vector<Instruction> minimal = Reduce(prog, gen, fx, seed, threads);
      FAIL() << "JIT and interpreter differ (" << o.diff << ") on " << GenerationName(gen)
             << ", fixture seed " << seed0 << ", machine seed " << seed << ", " << threads
             << " threads; minimal stream:\n"
             << DisassembleStream(minimal, gen);
    }
  }
  std::printf("jit differential: %lld streams, %lld ran compiled, %lld instructions compiled, 0 mismatches\n",
              static_cast<long long>(ran), static_cast<long long>(jit_ran), static_cast<long long>(compiled));
  EXPECT_GT(jit_ran, ran / 2);     // the JIT really ran
  EXPECT_GT(compiled, ran);        // and compiled more than one instruction per stream on average
}

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

// ctest's jit_diff_avx2_* and jit_diff_sse_* entries run every test here on code generated as for a
// narrower host (DVEJIT_JIT_VECTOR_WIDTH). Where that width is the host's own (8 lanes on an
// AVX2-only host) the run would repeat part of jit_diff_test's (the same code, its tests, its
// first streams); with DVEJIT_DIFF_SKIP_NATIVE_WIDTH set it is skipped (about 100 s of CPU time
// of a CI run on the 2-vCPU Zen 3 host).
class SkipRunsAtTheHostsOwnWidth : public ::testing::Environment {
 public:
  void SetUp() override {
    const int64_t width = EnvInt("DVEJIT_JIT_VECTOR_WIDTH", 0);
    if (width == 0 || EnvInt("DVEJIT_DIFF_SKIP_NATIVE_WIDTH", 0) == 0) return;
    auto engine = jit::Engine::Create();
    if (engine.ok() && (*engine)->vector_width_f32() <= width)
      GTEST_SKIP() << "DVEJIT_JIT_VECTOR_WIDTH=" << width << " is this host's own width: jit_diff_test runs this code";
  }
};
[[maybe_unused]] const ::testing::Environment* const kSkipRunsAtTheHostsOwnWidth =
    ::testing::AddGlobalTestEnvironment(new SkipRunsAtTheHostsOwnWidth);

// DVEJIT_DIFF_STREAMS streams in all (2000 by default), split into DVEJIT_DIFF_SHARDS shards of
// their own seeds; this process runs shard DVEJIT_DIFF_SHARD (ctest runs the shards in parallel).
TEST(JitDifferential, RandomStreamsMatchInterpreterBitForBit) {
  const int64_t shards = std::max<int64_t>(1, EnvInt("DVEJIT_DIFF_SHARDS", 1));
  const int64_t shard = EnvInt("DVEJIT_DIFF_SHARD", 0);
  Fuzz((EnvInt("DVEJIT_DIFF_STREAMS", 2000) + shards - 1) / shards, 0, 20261130 + static_cast<uint64_t>(shard));
}

// Long mode: DVEJIT_DIFF_SECONDS=3600 build/test/jit_diff_test --gtest_also_run_disabled_tests
// (DVEJIT_DIFF_SEED picks the streams). With DVEJIT_DIFF_TRACE=FILE each stream is written to
// FILE before it runs, so a stream that hangs or kills the process is left there.
TEST(JitDifferential, DISABLED_Long) {
  Fuzz(0, static_cast<double>(EnvInt("DVEJIT_DIFF_SECONDS", 3600)), EnvInt("DVEJIT_DIFF_SEED", 1));
}

// The BN training step (fusion across GradAccum → ParamLoad2 → BackProp) bit-identical.
TEST(JitDifferential, BatchNormChainFusesAndMatches) {
  const Fixture fx(3);
  const std::string text = R"(
.recip_table
BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x3000[6:1]
BatchNormStats2 src=sbuf[0]+0x800[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x3018[6:1]
BatchNormAggregate src=sbuf[0]+0x3000[12:1] in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x3040[2:1]
TensorScalarArith src=sbuf[0]+0x3044[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add op1=bypass imm0=0.00001 dst=sbuf[0]+0x3048[1:1]
TensorScalarArith src=sbuf[0]+0x3048[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=rsqrt op1=bypass dst=sbuf[0]+0x304C[1:1]
BatchNormGradAccumulate2 imm0=sbuf[0]+0x3040 src0=sbuf[0]+0x0[1024:1] src1=sbuf[0]+0x1000[1024:1] dst=sbuf[0]+0x3080[3:1] imm1=sbuf[0]+0x304C in_dtypes=fp32,fp32 imm_out_dtypes=fp32,fp32 n=128
TensorScalarArith src=sbuf[0]+0x304C[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=mult op1=bypass imm0=0.0009765625 dst=sbuf[0]+0x3058[1:1]
BatchNormParamLoad2 src=sbuf[0]+0x3080[2:2,1:0] element_count=1024 src_dtype=fp32 immediate_dtype=fp32 n=128 imm0_ptr=sbuf[0]+0x3040 imm1_ptr=sbuf[0]+0x3058
BatchNormBackProp in_dtypes=fp32,fp32 out_dtype=fp32 op=bypass n=128 src0=sbuf[0]+0x0[1024:1] src1=sbuf[0]+0x1000[1024:1] dst=sbuf[0]+0x2000[1024:1]
)";
  // Every channel count around the block sizes (one and two vectors of 16 channels), and tiles
  // whose length is not a multiple of the vector width (the gathered tail); fp32 sources, and
  // 2-byte ones, which the statistics and the gradient sums transpose as packed dwords (two
  // elements per column), or not when x and dy differ in size.
  struct Sources {
    const char* stats;     // Stats2's in_dtype
    const char* gradient;  // GradAccumulate2's and BackProp's in_dtypes
    std::vector<const char*> channels;
  };
  const std::vector<const char*> all = {"n=128", "n=1", "n=5", "n=16", "n=17", "n=31", "n=32", "n=33", "n=100"};
  const Sources kSources[] = {{"fp32", "fp32,fp32", all},
                              {"bf16", "bf16,bf16", {"n=128", "n=17", "n=33"}},
                              {"fp16", "fp16,fp16", {"n=128", "n=33"}},
                              {"bf16", "bf16,fp32", {"n=128", "n=33"}}};
  for (const Sources& src : kSources) {
    for (const char* n : src.channels) {
      for (const char* tile : {"[512:1]", "[509:1]"}) {
        const std::string variant = absl::StrReplaceAll(
            text, {{"n=128", n}, {"[512:1]", tile}, {"in_dtype=fp32", absl::StrCat("in_dtype=", src.stats)},
                   {"in_dtypes=fp32,fp32", absl::StrCat("in_dtypes=", src.gradient)}});
        auto prog = Assemble(variant, Generation::Cayman);
        ASSERT_TRUE(prog.ok()) << prog.status();
        const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 5);
        const std::string where = absl::StrCat(src.stats, " ", src.gradient, " ", n, " ", tile);
        EXPECT_TRUE(o.jit_ran) << where;
        EXPECT_EQ(o.compiled, static_cast<int>(prog->size())) << where;
        EXPECT_EQ(o.diff, "") << where;
      }
    }
  }
}

// The BN backward chain alone over 1-5 GradAccum2 tiles (rerolled into a repeat), bit-identical.
// With 2-byte x and dy and tiles of whole 32-element chunks, the code generator steps the sums of
// two tiles together (PairedGradSums; 16 lanes only), the last of an odd count alone, in partial
// blocks too (17, 100 channels); other tile lengths, fp32 and mixed sources keep one tile at a
// time. On 1 and 3 threads.
TEST(JitDifferential, GradientSumsOfTilesStepTogether) {
  const Fixture fx(17);
  struct Sources {
    const char* dtypes;  // GradAccumulate2's and BackProp's in_dtypes
    int x_size, dy_size;
    std::vector<int> tiles, tile_lengths, channels;
  };
  const Sources kSources[] = {{"bf16,bf16", 2, 2, {1, 2, 3, 5}, {256, 253}, {128, 100, 17}},
                              {"fp16,fp16", 2, 2, {2, 3}, {256, 253}, {128, 17}},
                              {"fp32,fp32", 4, 4, {2, 3}, {256}, {128, 17}},
                              {"bf16,fp32", 2, 4, {2, 3}, {256}, {128, 17}}};
  for (const Sources& src : kSources)
    for (int tiles : src.tiles)
      for (int tile : src.tile_lengths)
        for (int n : src.channels) {
          // x at 0, dy at 0x1400, dx at 0x2800, the tiles' sums at 0x3C00, μ, vf and A at 0x3D00.
          std::string text;
          const std::string chan = absl::StrCat(" n=", n);
          for (int k = 0; k < tiles; ++k)
            absl::StrAppend(&text, "BatchNormGradAccumulate2 imm0=sbuf[0]+0x3D00 imm1=sbuf[0]+0x3D04 src0=sbuf[0]+",
                            k * tile * src.x_size, "[", tile, ":1] src1=sbuf[0]+", 0x1400 + k * tile * src.dy_size, "[",
                            tile, ":1] dst=sbuf[0]+", 0x3C00 + 12 * k, "[3:1] in_dtypes=", src.dtypes,
                            " imm_out_dtypes=fp32,fp32", chan, "\n");
          for (int k = 1; k < tiles; ++k)
            absl::StrAppend(&text, "TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add", chan,
                            " src0=sbuf[0]+0x3C00[3:1] src1=sbuf[0]+", 0x3C00 + 12 * k, "[3:1] dst=sbuf[0]+0x3C00[3:1]\n");
          absl::StrAppend(&text, "BatchNormParamLoad2 src=sbuf[0]+0x3C00[2:2,1:0] element_count=", tiles * tile,
                          " src_dtype=fp32 immediate_dtype=fp32", chan, " imm0_ptr=sbuf[0]+0x3D00 imm1_ptr=sbuf[0]+0x3D08\n");
          for (int k = 0; k < tiles; ++k)
            absl::StrAppend(&text, "BatchNormBackProp in_dtypes=", src.dtypes, " out_dtype=fp32 op=bypass", chan,
                            " src0=sbuf[0]+", k * tile * src.x_size, "[", tile, ":1] src1=sbuf[0]+",
                            0x1400 + k * tile * src.dy_size, "[", tile, ":1] dst=sbuf[0]+", 0x2800 + k * tile * 4, "[",
                            tile, ":1]\n");
          auto prog = Assemble(text, Generation::Cayman);
          ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
          for (int threads : {1, 3}) {
            const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 5, threads);
            const std::string where = absl::StrCat(src.dtypes, ", ", tiles, " tiles of ", tile, ",", chan, ", ", threads,
                                                   " threads");
            EXPECT_TRUE(o.jit_ran) << where;
            EXPECT_EQ(o.compiled, static_cast<int>(prog->size())) << where;
            EXPECT_EQ(o.diff, "") << where;
          }
        }
}

// The compiled-stream cache is bounded: past its capacity the least recently used shapes go
// (their code is freed), an evicted shape compiles again when it comes back, and results stay
// bit-identical throughout. (Unbounded, the long differential run grew to 24 GB in an hour.)
// One TensorScalar over `elements` fp32 elements of 8 channels: a shape per element count.
std::vector<Instruction> TensorScalarStream(int elements) {
  auto prog = Assemble(absl::StrCat("TensorScalarArith src=sbuf[0]+0x0[", elements,
                                    ":1] in_dtype=fp32 out_dtype=fp32 n=8 op0=add imm0=2.0 "
                                    "op1=mult imm1=3.0 dst=sbuf[0]+0x800[", elements, ":1]\n"),
                       Generation::Cayman);
  EXPECT_TRUE(prog.ok()) << prog.status();
  return prog.ok() ? *prog : std::vector<Instruction>{};
}

TEST(JitDifferential, CompiledStreamCacheIsBounded) {
  const Fixture fx(11);
  JitTier& tier = JitTier::Global();
  tier.set_capacity(2);
  auto run = [&](int elements, bool expect_hit) {
    const std::vector<Instruction> prog = TensorScalarStream(elements);
    Machine m(Generation::Cayman);
    RunOptions options;
    options.tier = ExecutionTier::Jit;
    EXPECT_EQ(RunProgram(m, prog, options).jit_cache_hit, expect_hit) << elements;
    EXPECT_LE(tier.cached_shapes(), 2u);
    const Outcome o = RunBoth(prog, Generation::Cayman, fx, 3);
    EXPECT_TRUE(o.jit_ran) << elements;
    EXPECT_EQ(o.diff, "") << elements;
  };
  run(40, false);
  run(41, false);
  run(40, true);
  run(42, false);  // evicts 41, the least recently used
  run(41, false);  // compiled again (evicts 40)
  run(42, true);
  run(40, false);
  tier.set_capacity(512);
}

// The caches are the process's (JitTier::Global()), shared by every thread: threads that run
// the same new streams at once, with a capacity small enough that shapes are evicted while
// other threads run them, each get the interpreter's bits. (The ASan+UBSan build runs it too.)
TEST(JitDifferential, ThreadsShareTheCaches) {
  const Fixture fx(29);
  std::mt19937_64 rng(20261204);
  struct Case {
    Generation gen;
    std::vector<Instruction> prog;
    uint64_t seed;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 24; ++i) {
    const Generation gen = kAllGenerations[rng() % 4];
    std::vector<Instruction> prog = RandomStream(rng, gen);
    cases.push_back({gen, std::move(prog), rng()});
  }
  JitTier::Global().set_capacity(4);
  constexpr int kThreads = 4, kRounds = 2;
  std::vector<std::string> failures(kThreads);
  std::atomic<int> jit_ran{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r)
        for (size_t k = 0; k < cases.size(); ++k) {
          // Threads 0 and 1 go forwards, at the same time on the same streams; 2 and 3 backwards.
          const Case& c = cases[t < 2 ? k : cases.size() - 1 - k];
          const Outcome o = RunBoth(c.prog, c.gen, fx, c.seed);
          jit_ran += o.jit_ran;
          if (!o.diff.empty() && failures[t].empty())
            failures[t] = o.diff + " on " + std::string(GenerationName(c.gen)) + ", machine seed " +
                          std::to_string(c.seed) + ":\n" + DisassembleStream(c.prog, c.gen);
        }
    });
  for (std::thread& th : threads) th.join();
  JitTier::Global().set_capacity(512);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  EXPECT_GT(jit_ran.load(), kThreads * kRounds * static_cast<int>(cases.size()) / 2);  // the JIT really ran
}

// The compiled tiers cache two facts by a stream's 64-bit key: that it validated, and which
// compiled code runs it. A key is a hash; each fact keeps the stream's identity, so a collision
// is a miss. jit_diff_fuzz found the case below: StreamKey folded the generation into the
// low bits that the opcode byte also reaches, so this MatchValueLoad under Mariana and this
// invalid Max8 under Maverick (num[2] = 0, among others) shared a key, and after the first had
// validated, the second ran on the JIT unchecked.
Instruction FromHex(const char* hex) {
  Instruction inst;
  for (int i = 0; i < kRecordBytes; ++i) inst.bytes[i] = static_cast<uint8_t>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  return inst;
}

// The validated fact keeps whether a stream takes addresses from registers; repeated runs
// skip looking for them only when it does not. A register moved between runs of the same
// stream must move where the compiled code writes, as in the interpreter.
TEST(JitDifferential, RegisterAddressesResolvePerRunOfACachedStream) {
  const std::string text =
      "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x40400000 dst=sbuf[0]+0x0[8:1]\n"
      "Copy src=sbuf[0]+0x0[8:1] dst=reg(7)[8:1] in_dtype=fp32 out_dtype=fp32 n=4\n";
  auto prog = Assemble(text, Generation::Cayman);
  ASSERT_TRUE(prog.ok()) << prog.status();
  Machine interp(Generation::Cayman), jit(Generation::Cayman);
  RunOptions o;
  o.tier = ExecutionTier::Jit;
  for (uint32_t offset : {0x300u, 0x500u, 0x300u, 0x700u}) {
    const uint32_t address = MakeAddress(Space::Sbuf, 0, offset, Generation::Cayman);
    ASSERT_TRUE(interp.SetRegister(7, address).ok());
    ASSERT_TRUE(jit.SetRegister(7, address).ok());
    ASSERT_TRUE(RunProgram(interp, *prog, RunOptions{}).status.ok());
    const RunReport r = RunProgram(jit, *prog, o);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.tier, "jit");
    EXPECT_EQ(Compare(interp, jit, interp.ActiveBytes(Space::Sbuf)), "") << "register at " << offset;
    std::vector<uint8_t> row(32);
    ASSERT_TRUE(jit.Read(Space::Sbuf, 3, 1, offset, 32, row).ok());
    for (int k = 0; k < 8; ++k) EXPECT_EQ(row[4 * k + 3], 0x40) << offset;  // 3.0f = 0x40400000
  }
  // A register that no longer holds an immediate address fails the run, cached or not.
  ASSERT_TRUE(jit.SetRegister(7, 0xFFFFFFFFu).ok());
  EXPECT_FALSE(RunProgram(jit, *prog, o).status.ok());
}

TEST(JitDifferential, KeyCollisionsAreMisses) {
  const std::vector<Instruction> load = {FromHex(
      "6d100900000000000000000000000000e0ff03000100020008000100000000000900010000000000000000000000000000000000000000000000000000000000")};
  std::vector<Instruction> max8 = load;
  max8[0].bytes[0] = 0x6C;
  RunOptions jit;
  jit.tier = ExecutionTier::Jit;
  Machine mariana(Generation::Mariana), maverick(Generation::Maverick);
  ASSERT_TRUE(RunProgram(mariana, load, jit).status.ok());
  const RunReport bad = RunProgram(maverick, max8, jit);
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument) << bad.status;
  EXPECT_EQ(bad.executed, 0);

  // The same key forced: the identity decides.
  JitTier& tier = JitTier::Global();
  const StreamOptions opts{};
  const uint64_t key = 0x0123456789ABCDEFull;
  tier.MarkValidated(key, load, Generation::Mariana, opts);
  EXPECT_TRUE(tier.WasValidated(key, load, Generation::Mariana, opts));
  EXPECT_FALSE(tier.WasValidated(key, max8, Generation::Mariana, opts));
  EXPECT_FALSE(tier.WasValidated(key, load, Generation::Maverick, opts));
  EXPECT_FALSE(tier.WasValidated(key, load, Generation::Mariana, StreamOptions{1}));

  const std::vector<Instruction> a = TensorScalarStream(36), b = TensorScalarStream(37);
  bool hit = true;
  auto ca = tier.Get(a, Generation::Cayman, key, &hit);
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto cb = tier.Get(b, Generation::Cayman, key, &hit);
  ASSERT_TRUE(cb.ok()) << cb.status();
  EXPECT_NE(ca->get(), cb->get());  // b's own code (another shape), not a's
  auto ca2 = tier.Get(a, Generation::Cayman, key, &hit);
  ASSERT_TRUE(ca2.ok());
  EXPECT_EQ(ca2->get(), ca->get());  // a found again (by its shape: b took the key)
  EXPECT_TRUE(hit);
}

// Edge values of the IEEE single format: every exponent, both signs, mantissas that pick the
// first, last and middle seed-table entries, the Newton-range boundaries, zeros, inf, NaN.
std::vector<uint32_t> EdgeBits() {
  std::vector<uint32_t> bits;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e = 0; e < 256; ++e)
      for (uint32_t m : {0u, 1u, 0x10000u, 0x7F0000u, 0x7FFFFFu, 0x400000u, 0x12345u, 0x7E0000u})
        bits.push_back(sign | (e << 23) | m);
  return bits;
}

// Runs `text` on two machines holding the same state, interpreted and compiled (all of it:
// `instructions` compiled), and compares everything.
void ExpectSameOnMachines(Machine& interp, Machine& jit, const std::string& text, int instructions,
                          Generation gen = Generation::Cayman) {
  auto prog = Assemble(text, gen);
  ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
  const RunReport ri = RunProgram(interp, *prog, RunOptions{});
  ASSERT_TRUE(ri.status.ok()) << ri.status << "\n" << text;
  RunOptions o;
  o.tier = ExecutionTier::Jit;
  const RunReport r = RunProgram(jit, *prog, o);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.tier, "jit");
  EXPECT_EQ(r.jit_compiled_instructions, instructions) << text << (r.tier_notes.empty() ? "" : "\n" + r.tier_notes[0]);
  EXPECT_EQ(Compare(interp, jit, interp.ActiveBytes(Space::Sbuf)), "") << text;
}

// Writes `bits` (fp32 words) to partition 0 from byte 0, then ExpectSameOnMachines.
void ExpectSameOnEdgeValues(const std::vector<uint32_t>& bits, const std::string& text, int instructions,
                            Generation gen = Generation::Cayman) {
  Machine interp(gen), jit(gen);
  std::vector<uint8_t> row(bits.size() * 4);
  std::memcpy(row.data(), bits.data(), row.size());
  for (Machine* m : {&interp, &jit}) {
    m->PreloadReciprocals();
    ASSERT_TRUE(m->Write(Space::Sbuf, 0, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
  }
  ExpectSameOnMachines(interp, jit, text, instructions, gen);
}

// Two TensorScalar stages over NaNs of every sign and payload, infinities, zeros and subnormals,
// with first stages that make NaNs of their own (inf − inf, 0 · inf): the compiled stages leave
// NaNs uncanonicalised except where the second stage sees their bits (SYMMETRIC_CLAMP's first
// operand), which must give the interpreter's bytes for every pair of general arith ops, both
// operand orders of each stage, fp32 and bf16 results.
TEST(JitDifferential, TwoStageNaNsMatch) {
  std::vector<uint32_t> bits;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e : {0u, 1u, 0x7Fu, 0x80u, 0xFEu, 0xFFu})
      for (uint32_t m : {0u, 1u, 0x400000u, 0x400001u, 0x7FFFFFu, 0x12345u})
        bits.push_back(sign | (e << 23) | m);
  const size_t n = bits.size();  // 72 values
  std::vector<std::string> ops;
#define DVE_ALUOP(code, name, asmname, gen, flags) \
  if (((flags) & GAR) != 0) ops.push_back(#asmname);
#include "frontend/aluops.def"
#undef DVE_ALUOP
  ASSERT_GE(ops.size(), 20u);
  for (const std::string& op0 : ops)
    for (const char* imm0 : {"inf", "0", "-1.5"}) {
      std::string text;
      int count = 0;
      for (const std::string& op1 : ops)
        for (int reverse = 0; reverse < 4; ++reverse) {  // None, First, Second, Both
          if (op0 == "bypass" && op1 != "bypass") continue;  // tensor_scalar_valid_ops
          const char* out = count % 2 ? "bf16" : "fp32";
          char line[512];
          std::snprintf(line, sizeof line,
                        "TensorScalarArith src=sbuf[0]+0x0[%zu:1] in_dtype=fp32 out_dtype=%s n=1 op0=%s op1=%s "
                        "imm0=%s imm1=-3 reverse_operands=%d dst=sbuf[0]+0x%x[%zu:1]\n",
                        n, out, op0.c_str(), op1.c_str(), imm0, reverse, 0x200 + 0x200 * count, n);
          text += line;
          ++count;
        }
      SCOPED_TRACE(op0 + " imm0=" + imm0);
      ExpectSameOnEdgeValues(bits, text, count, Generation::Maverick);
      if (HasFailure()) return;
    }
}

// The inline Newton paths against the interpreter on edge values: nrecip (Reciprocal), nrsqrt
// (the TensorScalar RSQRT form), ndiv (Aggregate).
TEST(JitDifferential, ReciprocalEveryExponent) {
  std::vector<uint32_t> bits = EdgeBits();
  bits.resize(4096, 0x3F800000u);
  ExpectSameOnEdgeValues(bits,
                         "Reciprocal src=sbuf[0]+0x0[4096:1] in_dtype=fp32 out_dtype=fp32 n=1 dst=sbuf[0]+0x4000[4096:1]\n"
                         "Reciprocal src=sbuf[0]+0x0[4096:1] in_dtype=fp32 out_dtype=bf16 n=1 dst=sbuf[0]+0x8000[4096:1]",
                         2);
}
TEST(JitDifferential, RsqrtEveryExponent) {
  std::vector<uint32_t> bits = EdgeBits();
  bits.resize(4096, 0x40800000u);
  ExpectSameOnEdgeValues(
      bits, "TensorScalarArith src=sbuf[0]+0x0[4096:1] in_dtype=fp32 out_dtype=fp32 n=1 op0=rsqrt op1=bypass dst=sbuf[0]+0x4000[4096:1]",
      1);
}
// A single tuple (nb, mb, m2b) gives the weight ndiv(nb, nb) and var = ndiv(m2b, nb): pairs of
// edge values, integral divisors (the Parameter RAM path) included.
TEST(JitDifferential, NewtonDivisionEdgePairs) {
  std::vector<uint32_t> values;
  for (uint32_t e : {0u, 1u, 2u, 3u, 0x7Du, 0x7Eu, 0x7Fu, 0x80u, 0x86u, 0x87u, 0xFCu, 0xFDu, 0xFEu, 0xFFu})
    for (uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu})
      for (uint32_t sign : {0u, 0x80000000u}) values.push_back(sign | (e << 23) | m);
  for (float whole : {3.0f, 7.0f, 100.0f, 255.0f, 256.0f, 257.0f, 2.5f}) {
    uint32_t b;
    std::memcpy(&b, &whole, 4);
    values.push_back(b);
  }
  std::vector<uint32_t> tuples;  // (nb, mb, m2b) for every pair
  for (uint32_t nb : values)
    for (uint32_t m2b : values) tuples.insert(tuples.end(), {nb, 0x3F800000u, m2b});
  // Tuple t sits in channel t % 128 at element 3 · (t / 128); one Aggregate per tuple column.
  const int tuple_count = static_cast<int>(tuples.size() / 3);
  const int columns = (tuple_count + 127) / 128;
  std::vector<uint32_t> rows(static_cast<size_t>(128) * 4096, 0);
  for (int t = 0; t < tuple_count; ++t)
    for (int i = 0; i < 3; ++i) rows[static_cast<size_t>(t % 128) * 4096 + 3 * (t / 128) + i] = tuples[3 * t + i];
  Machine interp(Generation::Cayman), jit(Generation::Cayman);
  for (Machine* m : {&interp, &jit}) {
    m->PreloadReciprocals();
    for (int c = 0; c < 128; ++c) {
      std::vector<uint8_t> row(4096 * 4);
      std::memcpy(row.data(), &rows[static_cast<size_t>(c) * 4096], row.size());
      ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
    }
  }
  std::string text;
  for (int col = 0; col < columns; ++col)
    text += "BatchNormAggregate src=sbuf[0]+0x" + absl::StrCat(absl::Hex(12 * col)) +
            "[3:1] in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x" + absl::StrCat(absl::Hex(0x8000 + 8 * col)) + "[2:1]\n";
  ExpectSameOnMachines(interp, jit, text, columns);
}

// An Aggregate in a block of several hardware vectors (after a Stats2, as in BN statistics)
// takes the previous vector's Chan weights where a vector's counts equal that vector's bit for
// bit, and divides for itself where they do not. 32 tuples per channel (full chunks and a tail), the
// counts 256 except in a few channels and tuples: another integer (the Parameter RAM path), a
// zero (skipped), a count one ulp off, a first vector that differs where the others agree.
TEST(JitDifferential, AggregateSharesWeightsOnlyWhereCountsMatch) {
  constexpr int kTuples = 32;
  auto count_at = [](int channel, int tuple) -> uint32_t {
    if (channel == 40 && tuple == 7) return 0x437F0000u;   // 255
    if (channel == 70 && tuple == 12) return 0;             // skipped
    if (channel == 127 && tuple == 20) return 0x43800001u;  // 256 + 1 ulp
    if (channel == 16 && tuple == 0) return 0x40400000u;    // 3: the second vector's first lane
    if (channel == 0 && tuple == 31) return 0x43808000u;    // 257: the first vector alone
    return 0x43800000u;                                     // 256
  };
  for (const char* stats_dtype : {"bf16", "fp32"}) {  // four and two vectors per block
    Machine interp(Generation::Cayman), jit(Generation::Cayman);
    for (Machine* m : {&interp, &jit}) {
      m->PreloadReciprocals();
      for (int c = 0; c < 128; ++c) {
        std::vector<uint32_t> words(3 * kTuples);
        for (int t = 0; t < kTuples; ++t) {
          words[3 * t] = count_at(c, t);
          words[3 * t + 1] = 0x3F800000u + static_cast<uint32_t>((c * 131 + t * 17) % 4096) * 64;  // mean near 1
          words[3 * t + 2] = 0x42000000u + static_cast<uint32_t>((c * 71 + t * 29) % 4096) * 512;  // m2 near 32
        }
        std::vector<uint8_t> row(words.size() * 4);
        std::memcpy(row.data(), words.data(), row.size());
        ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0x8000, row, static_cast<uint32_t>(row.size())).ok());
      }
    }
    SCOPED_TRACE(stats_dtype);
    ExpectSameOnMachines(
        interp, jit,
        absl::StrCat("BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=", stats_dtype,
                     " out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x4000[6:1]\n"
                     "BatchNormAggregate src=sbuf[0]+0x8000[96:1] in_dtype=fp32 out_dtype=fp32 n=128 "
                     "dst=sbuf[0]+0x9000[2:1]\n"),
        2);
  }
}

// Lays `inputs` (raw bits of `in`) out over 128 channels, converts them with a TensorScalar
// (`stages`: a bypass unless given) to `out` on both tiers, and compares everything.
void ExpectSameConversion(Dtype in, Dtype out, const std::vector<uint32_t>& inputs,
                          const std::string& stages = "op0=bypass op1=bypass") {
  const int per = static_cast<int>((inputs.size() + 127) / 128);
  const int in_size = DtypeSize(in);
  Machine interp(Generation::Cayman), jit(Generation::Cayman);
  for (int c = 0; c < 128; ++c) {
    std::vector<uint8_t> row(static_cast<size_t>(per) * in_size, 0);
    for (int k = 0; k < per; ++k) {
      const size_t i = static_cast<size_t>(c) * per + k;
      const uint32_t v = i < inputs.size() ? inputs[i] : 0;
      std::memcpy(&row[static_cast<size_t>(k) * in_size], &v, in_size);
    }
    for (Machine* m : {&interp, &jit}) ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
  }
  const std::string text = absl::StrCat("TensorScalarArith src=sbuf[0]+0x0[", per, ":1] in_dtype=",
                                        std::string(LookupDtype(static_cast<uint8_t>(in))->asmname), " out_dtype=", std::string(LookupDtype(static_cast<uint8_t>(out))->asmname),
                                        " n=128 ", stages, " dst=sbuf[0]+0x",
                                        absl::Hex((per * in_size + 63) / 64 * 64), "[", per, ":1]");
  ExpectSameOnMachines(interp, jit, text, 1);
}

// Every load conversion over all 2^8 / 2^16 patterns (edge values for 32-bit integers), and every
// store conversion over the fp32 values at, next to and halfway between the target's values.
TEST(JitDifferential, ConversionsEveryPattern) {
  const Dtype kDtypes[] = {Dtype::INT8,  Dtype::UINT8, Dtype::INT16,    Dtype::UINT16,   Dtype::INT32,   Dtype::UINT32,
                           Dtype::BFLOAT16, Dtype::FP16, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5};
  for (Dtype d : kDtypes) {
    std::vector<uint32_t> patterns;
    if (DtypeSize(d) == 4) {
      patterns = EdgeBits();
      for (uint32_t v : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFFu, 0x01000001u, 0xFEFFFFFFu})
        patterns.push_back(v);
    } else {
      for (uint32_t v = 0; v < (1u << (8 * DtypeSize(d))); ++v) patterns.push_back(v);
    }
    ExpectSameConversion(d, Dtype::FP32, patterns);
    // Store conversions: each value as fp32, its neighbours, the midpoint to the next value.
    std::vector<uint32_t> f32;
    for (size_t i = 0; i < patterns.size(); ++i) {
      const float a = num::LoadAsF32(d, patterns[i]);
      const uint32_t bits = num::F32Bits(a);
      f32.insert(f32.end(), {bits, bits + 1, bits - 1});
      if (i + 1 < patterns.size()) {
        const float b = num::LoadAsF32(d, patterns[i + 1]);
        f32.push_back(num::F32Bits(static_cast<float>((static_cast<double>(a) + b) / 2)));
      }
    }
    for (uint32_t v : EdgeBits()) f32.push_back(v);
    ExpectSameConversion(Dtype::FP32, d, f32);
  }
}

// bf16 → bf16 element-wise rows are stored 32 elements at a time with the paired rounding
// (codegen PairedBf16: integer round-half-up with a tie fix-up, NaNs by a branch). Every bf16
// pattern times factors whose products fill the low 16 bits of fp32 (ties to even and odd,
// values just above and below), overflow to infinity, fall to subnormals and zero, and meet
// infinities (NaNs from inf · 0, in chunks that are otherwise finite).
TEST(JitDifferential, PairedBf16StoresMatch) {
  std::vector<uint32_t> patterns;
  for (uint32_t v = 0; v < (1u << 16); ++v) patterns.push_back(v);
  for (const char* stages : {"op0=mult imm0=1.00390625 op1=bypass", "op0=mult imm0=1.0078125 op1=add imm1=1e-40",
                             "op0=mult imm0=-3.0000002 op1=bypass", "op0=mult imm0=1e30 op1=bypass",
                             "op0=mult imm0=1e-30 op1=bypass", "op0=mult imm0=0 op1=add imm1=-0",
                             "op0=add imm0=1.5 op1=mult imm1=0.33333334"}) {
    SCOPED_TRACE(stages);
    ExpectSameConversion(Dtype::BFLOAT16, Dtype::BFLOAT16, patterns, stages);
  }
}

// BackProp's bf16 rows take the paired store that sends chunks with a tie to the exact path
// (PairedBf16's ties_rare). N = 257 makes dy · N a tie for every dy whose product keeps 9
// significant bits (dy = 1: 257); x = inf or NaN makes NaN chunks through x · C; the second
// lane state makes general values. Every bf16 pattern appears as x and as dy.
TEST(JitDifferential, BackPropBf16TiesMatch) {
  for (const std::array<float, 4>& state :  // mean, B, C, A
       {std::array<float, 4>{0, 0, 0, 1}, std::array<float, 4>{0.75f, -1.5f, 0.0078125f, -0.33333334f}}) {
    Machine interp(Generation::Cayman), jit(Generation::Cayman);
    for (int c = 0; c < 128; ++c) {
      std::vector<uint8_t> row(0xC50, 0);
      for (int k = 0; k < 512; ++k) {
        const uint16_t x = static_cast<uint16_t>(c * 512 + k), dy = static_cast<uint16_t>((c * 512 + k) * 40503u);
        std::memcpy(&row[2 * k], &x, 2);
        std::memcpy(&row[0x400 + 2 * k], &dy, 2);
      }
      std::memcpy(&row[0xC00], &state[1], 4);  // B, C: ParamLoad2's source elements 0 and 1
      std::memcpy(&row[0xC04], &state[2], 4);
      std::memcpy(&row[0xC40], &state[0], 4);  // mean
      std::memcpy(&row[0xC48], &state[3], 4);  // A
      for (Machine* m : {&interp, &jit})
        ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
    }
    SCOPED_TRACE(absl::StrCat("mean ", state[0], " B ", state[1], " C ", state[2], " A ", state[3]));
    ExpectSameOnMachines(
        interp, jit,
        "BatchNormParamLoad2 src=sbuf[0]+0xC00[2:1] element_count=257 src_dtype=fp32 immediate_dtype=fp32 n=128 "
        "imm0_ptr=sbuf[0]+0xC40 imm1_ptr=sbuf[0]+0xC48 imm0_src=ptr imm1_src=ptr\n"
        "BatchNormBackProp in_dtypes=bf16,bf16 out_dtype=bf16 op=bypass n=128 src0=sbuf[0]+0x0[512:1] "
        "src1=sbuf[0]+0x400[512:1] dst=sbuf[0]+0x800[512:1]",
        2);
  }
}

// bf16 statistics widen their staged data without a shift: Stats2 through the packed-pair transpose
// and a word unpack with zero (StagedPairChunks, 16-lane code), Stats through StagedField's and
// (the even field read 2 bytes early, the first column's from the padding in front of the
// buffer); 8-lane code keeps the shifts. Every bf16 pattern is an element: channel c holds
// patterns 512·c ... 512·c + 511 (zeros, subnormals, every exponent, infinities, NaNs of every
// payload), under Stats2 and Stats (Stats reads at most 256: two halves), on whole four-part
// blocks and on a channel count that leaves lanes inactive.
TEST(JitDifferential, Bf16StatisticsEveryPattern) {
  Machine interp(Generation::Cayman), jit(Generation::Cayman);
  for (int c = 0; c < 128; ++c) {
    std::vector<uint8_t> row(0x400);
    for (int k = 0; k < 512; ++k) {
      const uint16_t x = static_cast<uint16_t>(c * 512 + k);
      std::memcpy(&row[2 * k], &x, 2);
    }
    for (Machine* m : {&interp, &jit}) {
      m->PreloadReciprocals();
      ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
    }
  }
  for (int n : {128, 100})
    ExpectSameOnMachines(
        interp, jit,
        absl::StrCat("BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=bf16 out_dtype=fp32 n=", n,
                     " even_count=256 odd_count=256 dst=sbuf[0]+0x400[6:1]\n"
                     "BatchNormStats src=sbuf[0]+0x0[256:1] in_dtype=bf16 out_dtype=fp32 n=", n,
                     " even_count=128 odd_count=128 dst=sbuf[0]+0x420[3:1]\n"
                     "BatchNormStats src=sbuf[0]+0x200[256:1] in_dtype=bf16 out_dtype=fp32 n=", n,
                     " even_count=128 odd_count=128 dst=sbuf[0]+0x430[3:1]"),
        3);
}

// fp32 Stats2 runs its two parity streams side by side in the lanes (StagedPairChunks: channel c's
// even and odd streams in lanes 2c and 2c + 1, staged through the pair transpose) and splits them
// apart for the tail and the result. Rows of random normal values and rows of the fp32 edge values,
// on whole and partial blocks and one channel, with element counts that are whole chunks, leave a
// tail of either parity, or are shorter than a chunk.
TEST(JitDifferential, Fp32Stats2ParityLanesMatch) {
  const std::vector<uint32_t> edges = EdgeBits();
  std::mt19937_64 rng(29);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (int edge_rows = 0; edge_rows < 2; ++edge_rows) {
    Machine interp(Generation::Cayman), jit(Generation::Cayman);
    for (int c = 0; c < 128; ++c) {
      std::vector<uint8_t> row(0x800);
      for (int k = 0; k < 512; ++k) {
        const float v = normal(rng);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        if (edge_rows) bits = edges[(static_cast<size_t>(c) * 37 + static_cast<size_t>(k)) % edges.size()];
        std::memcpy(&row[4 * static_cast<size_t>(k)], &bits, 4);
      }
      for (Machine* m : {&interp, &jit}) {
        m->PreloadReciprocals();
        ASSERT_TRUE(m->Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size())).ok());
      }
    }
    for (int n : {128, 100, 16, 1})
      for (int count : {512, 501, 46, 15}) {
        SCOPED_TRACE(absl::StrCat(edge_rows ? "edge" : "normal", " rows, n=", n, ", ", count, " elements"));
        ExpectSameOnMachines(interp, jit,
                             absl::StrCat("BatchNormStats2 src=sbuf[0]+0x0[", count, ":1] in_dtype=fp32 out_dtype=fp32 n=", n,
                                          " even_count=3 odd_count=4 dst=sbuf[0]+0x800[6:1]"),
                             1);
      }
  }
}

// The integer band (semantics.md §4.3) compiled: every TensorTensorArith integer op (and MOD on
// integers) in each signedness it accepts, over random 8/16/32-bit sources led by the edge values
// (INT_MIN, −1, 0, the width limits), with and without the `saturate` table set; and the scalar
// runtime routines POW and MOD (fmodf) on fp32 edge values.
TEST(JitDifferential, IntegerBandPowAndModMatch) {
  std::mt19937_64 rng(21);
  const uint32_t kEdges[] = {0, 1, 2, 3, 7, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu, 0xFF, 0x80, 0x7F,
                             0xFFFF, 0x8000, 0x7FFF, 0x10000};
  std::vector<uint8_t> image(size_t{kPartitions} * 0x3000);
  for (size_t i = 0; i < image.size(); i += 4) {
    const size_t k = (i % 0x1000) / 4;  // element k of a 4-byte row
    const uint32_t v = k < std::size(kEdges) ? kEdges[k] : k < 2 * std::size(kEdges)
                                                               ? kEdges[rng() % std::size(kEdges)]
                                                               : static_cast<uint32_t>(rng());
    std::memcpy(&image[i], &v, 4);
  }
  const char* kSigned[] = {"int8", "int16", "int32"};
  const char* kUnsigned[] = {"uint8", "uint16", "uint32"};
  int programs = 0;
  for (int code = 0; code < 256; ++code) {
    const AluOpInfo* info = LookupAluOp(static_cast<uint8_t>(code));
    if (info == nullptr || !AluOpExists(static_cast<uint8_t>(code), Generation::Cayman) || !(info->flags & VINT)) continue;
    for (const bool is_signed : {true, false}) {
      if (!(info->flags & (is_signed ? SGN : UNS))) continue;
      const auto& names = is_signed ? kSigned : kUnsigned;
      for (int trial = 0; trial < 3; ++trial) {
        for (const bool saturate : {false, true}) {
          const std::string text = absl::StrCat(
              "TensorTensorArith in_dtypes=", names[rng() % 3], ",", names[rng() % 3], " out_dtype=", names[rng() % 3],
              " op=", std::string(info->asmname), " n=33 src0=sbuf[0]+0x0[100:1] src1=sbuf[0]+0x1000[100:1] dst=sbuf[0]+0x2000[100:1]\n");
          Machine interp(Generation::Cayman), jit(Generation::Cayman);
          for (Machine* m : {&interp, &jit}) {
            ASSERT_TRUE(m->Write(Space::Sbuf, 0, kPartitions, 0, image, 0x3000).ok());
            m->state().saturate = saturate;
          }
          ExpectSameOnMachines(interp, jit, text, 1);
          ++programs;
        }
      }
    }
  }
  EXPECT_GT(programs, 100);
  // POW and MOD (fmodf) through the runtime routines, on every exponent's edge values against
  // a rotation of themselves (in two halves, so that sources and results fit the compared window).
  const std::vector<uint32_t> bits = EdgeBits();
  for (size_t half = 0; half < 2; ++half) {
    std::vector<uint32_t> some;
    for (size_t i = half; i < bits.size(); i += 2) some.push_back(bits[i]);
    for (const char* op : {"pow", "mod"}) {
      ExpectSameOnEdgeValues(some,
                             absl::StrCat("TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=", op,
                                          " n=1 src0=sbuf[0]+0x0[2044:1] src1=sbuf[0]+0x10[2044:1] dst=sbuf[0]+0x2000[2044:1]\n"),
                             1);
    }
  }
}

// Max8 compiled: the 8 largest per channel under the total order NaN < −inf < … < −0 < +0 < … <
// +inf, across channel counts, source dtypes (transposed as 1, 2 or 4 elements per dword),
// lengths (the gathered tail), a strided source (gathers only) and output dtypes; the fixture
// holds NaNs, infinities, zeros of both signs and random bits, and a second pass runs on
// values with many duplicates.
TEST(JitDifferential, Max8Matches) {
  const Fixture fx(17);
  std::mt19937_64 rng(17);
  const char* kIn[] = {"fp32", "bf16", "fp16", "fp8e4", "int8", "uint8", "int16", "int32", "uint32"};
  const char* kOut[] = {"fp32", "bf16", "int32", "fp8e5"};
  const char* kSrc[] = {"[8:1]", "[100:1]", "[512:1]", "[3001:1]", "[64:2]", "[16:1,4:32]"};
  int programs = 0;
  for (const char* in : kIn)
    for (const char* src : kSrc)
      for (const char* n : {"n=128", std::array{"n=1", "n=17", "n=33"}[rng() % 3]}) {  // and one other count
        const std::string text = absl::StrCat("Max8 src=sbuf[0]+0x40", src, " in_dtype=", in, " out_dtype=",
                                              kOut[rng() % 4], " ", n, " dst=sbuf[0]+0x3F00[8:1]\n");
        auto prog = Assemble(text, Generation::Cayman);
        ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
        const Outcome o = RunBoth(*prog, Generation::Cayman, fx, rng() % 3);
        EXPECT_TRUE(o.jit_ran) << text;
        EXPECT_EQ(o.compiled, 1) << text;
        EXPECT_EQ(o.diff, "") << text;
        ++programs;
      }
  EXPECT_GT(programs, 40);
  // Duplicates, signed zeros, NaNs and negatives: a few distinct values repeated in random order,
  // over rows just longer than 8 (the order of the small values decides what is kept) and long.
  const float kInf = std::numeric_limits<float>::infinity(), kNaN = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> kSets = {{0.0f, -0.0f, 1.0f, -1.0f, 2.5f, kInf},
                                                 {-0.0f, 0.0f, -1.0f, -2.5f, -kInf, kNaN, -kNaN, -1e-40f}};
  for (const std::vector<float>& set : kSets)
    for (const char* count : {"[11:1]", "[1000:1]"}) {
      Machine interp(Generation::Cayman), jit(Generation::Cayman);
      std::vector<uint8_t> rows(size_t{kPartitions} * 4096);
      for (size_t i = 0; i < rows.size(); i += 4) std::memcpy(&rows[i], &set[rng() % set.size()], 4);
      for (Machine* m : {&interp, &jit}) ASSERT_TRUE(m->Write(Space::Sbuf, 0, kPartitions, 0, rows, 4096).ok());
      ExpectSameOnMachines(
          interp, jit,
          absl::StrCat("Max8 src=sbuf[0]+0x0", count, " in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x3F00[8:1]\n"), 1);
    }
}

// The search family compiled: MatchValueLoad's keys (from the searched row itself, so that they
// match) through FindIndex8 and MatchReplace8 to DveReadIndices, over rows of a few distinct
// values (duplicates, NaNs, signed zeros: the lowest unmatched key wins, NaN never matches,
// −0 == +0), in several dtypes, index dtypes and channel counts; and on the fixture's random
// data with keys read elsewhere (few matches), including a strided source.
TEST(JitDifferential, SearchOpsMatch) {
  std::mt19937_64 rng(23);
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  const float kValues[] = {0.0f, -0.0f, 1.0f, 2.0f, -3.0f, kNaN, 5.0f, 2.0f};
  std::vector<uint8_t> rows(size_t{kPartitions} * 0x1000);
  for (size_t i = 0; i < rows.size(); i += 4) std::memcpy(&rows[i], &kValues[rng() % 8], 4);
  const struct {
    const char *in, *out;
  } kDtypes[] = {{"fp32", "fp32"}, {"fp32", "bf16"}, {"int32", "uint32"}};
  for (const auto& dt : kDtypes)
    for (const char* n : {"n=1", "n=17", "n=128"})
      for (const char* idx : {"uint16", "uint32"}) {
        const std::string text = absl::StrCat(
            "MatchValueLoad src=sbuf[0]+0x40[8:1] dtype=", dt.in, " ", n, "\n",
            "FindIndex8 src=sbuf[0]+0x40[300:1] in_dtype=", dt.in, " out_dtype=", idx, " ", n,
            " dst=sbuf[0]+0x3000[8:1]\n",
            "DveReadIndices dtype=", idx, " ", n, " dst_element_count=8 dst=sbuf[0]+0x3100[8:1]\n",
            "MatchReplace8 src=sbuf[0]+0x40[300:1] in_dtype=", dt.in, " out_dtype=", dt.out, " ", n,
            " replacement=7.5 dst=sbuf[0]+0x2000[300:1]\n",
            "DveReadIndices dtype=", idx, " ", n, " dst_element_count=8 dst=sbuf[0]+0x3200[8:1]\n");
        Machine interp(Generation::Cayman), jit(Generation::Cayman);
        for (Machine* m : {&interp, &jit}) ASSERT_TRUE(m->Write(Space::Sbuf, 0, kPartitions, 0, rows, 0x1000).ok());
        ExpectSameOnMachines(interp, jit, text, 5);
      }
  const Fixture fx(23);
  for (const char* src : {"[300:1]", "[50:2,3:200]"}) {
    const std::string text = absl::StrCat(
        "MatchValueLoad src=sbuf[0]+0x1000[8:1] dtype=bf16 n=33\n",
        "MatchReplace8 src=sbuf[0]+0x40", src, " in_dtype=fp32 out_dtype=fp32 n=33 replacement=-1 dst=sbuf[0]+0x2000",
        src, "\n", "DveReadIndices dtype=uint32 n=33 dst_element_count=8 dst=sbuf[0]+0x3100[8:1]\n");
    auto prog = Assemble(text, Generation::Cayman);
    ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
    const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 4);
    EXPECT_EQ(o.compiled, 3) << text;
    EXPECT_EQ(o.diff, "") << text;
  }
}

// ImmLd then PtrMulti (semantics.md §6.2): the loaded slots, count and kind in lane state, and
// each element with its slot's scalar, for arith and bitvec dtypes, both operand orders, W from 1
// to 8 (slots beyond the loaded count keep their contents), strided sources; under the device
// profile both are no-ops on every tier, reported as skipped.
TEST(JitDifferential, ImmLdPtrMultiMatch) {
  const Fixture fx(31);
  const struct {
    const char *kind, *imm_dtype, *in, *out, *op;
  } kCases[] = {
      {"Arith", "fp32", "fp32", "fp32", "mult"},       {"Arith", "bf16", "bf16", "fp16", "subtract"},
      {"Arith", "int16", "fp32", "bf16", "max"},       {"Arith", "uint8", "fp16", "fp32", "add"},
      {"Arith", "fp8e4", "fp32", "int8", "is_gt"},     {"Bitvec", "uint16", "uint16", "uint16", "bitwise_xor"},
      {"Bitvec", "int32", "int32", "int32", "logical_shift_right"}, {"Bitvec", "uint8", "uint8", "uint8", "bitwise_and"},
  };
  for (const auto& c : kCases)
    for (const char* n : {"n=1", "n=17", "n=128"})
      for (const int w : {1, 3, 8})
        for (const char* rev : {"none", "both"}) {
          const std::string text = absl::StrCat(
              "TensorScalarImmLd", c.kind, " src=sbuf[0]+0x40[", std::min(w, 5), ":2] dtype=", c.imm_dtype, " ", n, "\n",
              "TensorScalarPtrMulti", c.kind, " src=sbuf[0]+0x100[5:1,2:10,1:1,", w, ":24] in_dtype=", c.in,
              " out_dtype=", c.out, " op=", c.op, " op_dim=xyz reverse_operands=", rev, " ", n,
              " dst=sbuf[0]+0x2000[", 10 * w, ":1]\n");
          auto prog = Assemble(text, Generation::Cayman);
          ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
          for (const Profile profile : {Profile::Contract, Profile::Device}) {
            Machine interp(Generation::Cayman), jit(Generation::Cayman);
            fx.Load(interp, 3);
            fx.Load(jit, 3);
            RunOptions o;
            o.profile = profile;
            const RunReport ri = RunProgram(interp, *prog, o);
            ASSERT_TRUE(ri.status.ok()) << ri.status << "\n" << text;
            o.tier = ExecutionTier::Jit;
            const RunReport rj = RunProgram(jit, *prog, o);
            ASSERT_TRUE(rj.status.ok()) << rj.status;
            EXPECT_EQ(rj.tier, "jit");
            EXPECT_EQ(rj.jit_compiled_instructions, 2) << text;
            EXPECT_EQ(rj.device_noops, ri.device_noops) << text;
            EXPECT_EQ(rj.device_noops, profile == Profile::Device ? 2 : 0) << text;
            EXPECT_EQ(Compare(interp, jit), "") << text;
          }
        }
}

// Tiles of one element-wise op become a repeat (ir RerollRepeats) that runs lane-major: each
// lane runs every tile before the next lane. Adjacent tiles, tiles that read the previous tile's
// result, and tiles that overlap their predecessor shifted by one element, against the
// interpreter, for channel counts around the block sizes, in fp32 and in the 2-byte dtypes
// (whose rows run as paired chunks).
TEST(JitDifferential, RowRepeatsRunLaneMajor) {
  const Fixture fx(5);
  for (const char* dt : {"fp32", "bf16", "fp16"})  // 2-byte rows also run as paired chunks
  for (const char* n : {"n=128", "n=1", "n=17", "n=33"}) {
    for (const uint32_t shift : {0u, 0x200u, 0x1FCu}) {  // a separate tile, the previous one, shifted
      std::string text;
      for (uint32_t t = 0; t < 6; ++t) {  // tiles of 128 elements, 0x200 bytes apart
        const uint32_t dst = 0x2000 + t * 0x200;
        const uint32_t src1 = shift == 0 ? 0x1000 + t * 0x200 : dst - shift;
        text += absl::StrCat("TensorTensorArith in_dtypes=", dt, ",", dt, " out_dtype=", dt, " op=add ", n,
                             " src0=sbuf[0]+0x", absl::Hex(t * 0x200), "[128:1] src1=sbuf[0]+0x",
                             absl::Hex(src1), "[128:1] dst=sbuf[0]+0x", absl::Hex(dst), "[128:1]\n");
      }
      auto prog = Assemble(text, Generation::Cayman);
      ASSERT_TRUE(prog.ok()) << prog.status();
      const auto f = ir::BuildIR(*prog, Generation::Cayman);
      ASSERT_TRUE(f.ok()) << f.status();
      size_t repeats = 0;
      for (const ir::Region& r : f->regions) repeats += r.repeats.size();
      if (shift == 0) {
        EXPECT_EQ(repeats, 1u) << ir::Print(*f);
      }
      const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 9);
      EXPECT_TRUE(o.jit_ran) << dt << " " << n << " " << shift;
      EXPECT_EQ(o.diff, "") << dt << " " << n << " " << shift << "\n" << text;
    }
  }
}

// Element-wise chains through memory (ir FuseElementwiseChains): random chains of element-wise
// instructions over a few buffers whose addresses coincide, are disjoint, or overlap shifted by
// one element, in fp32, bf16 and fp16, on several channel counts, against the interpreter.
TEST(JitDifferential, ElementwiseChainsMatch) {
  const Fixture fx(11);
  std::mt19937_64 rng(11);
  const char* kDtypes[] = {"fp32", "bf16", "fp16"};
  const char* kTsOps[] = {"add", "mult", "max", "subtract"};
  const char* kTtOps[] = {"add", "mult", "min", "subtract"};
  int fused_runs = 0, compiled = 0;
  for (int stream = 0; stream < 150; ++stream) {
    const int n = std::array{1, 16, 33, 128}[rng() % 4];
    const int count = std::array{16, 100, 512}[rng() % 3];
    auto buffer = [&] {  // 4-byte aligned starts: the same, another, or one element further on
      const uint32_t base = 0x1000 * static_cast<uint32_t>(rng() % 4);
      return base + (rng() % 4 == 0 ? 4u : 0u);
    };
    auto dtype = [&] { return kDtypes[rng() % 3]; };
    std::string text;
    const int length = 2 + static_cast<int>(rng() % 4);
    std::string prev_dst, prev_dtype;
    for (int i = 0; i < length; ++i) {
      std::string src0 = absl::StrCat("sbuf[0]+0x", absl::Hex(buffer()), "[", count, ":1]");
      const std::string src1 = absl::StrCat("sbuf[0]+0x", absl::Hex(buffer()), "[", count, ":1]");
      const std::string dst = absl::StrCat("sbuf[0]+0x", absl::Hex(buffer()), "[", count, ":1]");
      std::string in0 = dtype();
      const std::string out = dtype();
      if (!prev_dst.empty() && rng() % 2 == 0) {  // half of them read the previous result
        src0 = prev_dst;
        in0 = prev_dtype;
      }
      switch (rng() % 3) {
        case 0:
          text += absl::StrCat("TensorScalarArith src=", src0, " in_dtype=", in0, " out_dtype=", out, " n=", n,
                               " op0=", kTsOps[rng() % 4], " op1=bypass imm0=", 0.5 + static_cast<int>(rng() % 4),
                               " dst=", dst, "\n");
          break;
        case 1:
          text += absl::StrCat("TensorTensorArith in_dtypes=", in0, ",", dtype(), " out_dtype=", out,
                               " op=", kTtOps[rng() % 4], " n=", n, " src0=", src0, " src1=", src1, " dst=", dst, "\n");
          break;
        default:
          text += absl::StrCat("Reciprocal src=", src0, " in_dtype=", in0, " out_dtype=", out, " n=", n,
                               " dst=", dst, "\n");
      }
      prev_dst = dst;
      prev_dtype = out;
    }
    auto prog = Assemble(text, Generation::Cayman);
    ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
    const auto f = ir::BuildIR(*prog, Generation::Cayman);
    ASSERT_TRUE(f.ok()) << f.status();
    for (const ir::Stmt& s : f->stmts) fused_runs += s.fused_with_previous;
    const Outcome o = RunBoth(*prog, Generation::Cayman, fx, static_cast<uint64_t>(stream));
    EXPECT_EQ(o.diff, "") << text;
    compiled += o.jit_ran;
  }
  std::printf("element-wise chains: %d of 150 streams ran compiled, %d statements fused with the one before\n",
              compiled, fused_runs);
  EXPECT_GT(compiled, 100);
  EXPECT_GT(fused_runs, 50);
}

// Runs of LoadParameterRam whose entries and argument slots continue one another compile to one
// loop (jit codegen GlobalStmts). The run may span global regions and must stop where the
// entries do not continue, at a dead load, and at a channel-major instruction (which reads the
// Parameter RAM as it stands then): every shape of run against the interpreter, the Parameter
// RAM and the statistics compared.
TEST(JitDifferential, ParameterRamRunsMatch) {
  const Fixture fx(13);
  auto load = [](int offset, float first) {
    std::string imm;
    for (int k = 0; k < 8; ++k) absl::StrAppend(&imm, k ? "," : "", first + 0.25f * static_cast<float>(k));
    return absl::StrCat("LoadParameterRam param_ram_offset=", offset, " immediate=[", imm, "]\n");
  };
  const std::string stats =
      "BatchNormStats2 src=sbuf[0]+0x0[64:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=32 odd_count=32 "
      "dst=sbuf[0]+0x3000[6:1]\n";
  const std::vector<std::string> kStreams = {
      ".recip_table\n" + stats,
      ".recip_table\n" + load(4, 9.0f) + stats,                            // overlaps the table's entries 4..11
      load(0, 1.0f) + load(8, 2.0f) + load(24, 3.0f) + load(32, 4.0f) + stats,  // a gap after entry 15
      load(16, 5.0f) + load(8, 6.0f) + load(0, 7.0f) + stats,                 // descending entries
      load(0, 1.0f) + load(0, 2.0f) + load(8, 3.0f) + stats,                  // the first is overwritten
      load(0, 1.0f) + stats + load(8, 2.0f) + load(16, 3.0f) + stats,        // a run on each side of a region
      ".recip_table\n.recip_table\n" + stats,
  };
  for (const std::string& text : kStreams) {
    auto prog = Assemble(text, Generation::Cayman);
    ASSERT_TRUE(prog.ok()) << prog.status() << "\n" << text;
    const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 5);  // seed 5: random Parameter RAM first
    EXPECT_TRUE(o.jit_ran) << text;
    EXPECT_EQ(o.compiled, static_cast<int>(prog->size())) << text;
    EXPECT_EQ(o.diff, "") << text;
  }
}

// A channel-major region that emits more than 256 statements loads its argument words per
// channel block (jit codegen, kBlockArgsMinStatements): 200 element-wise instructions with
// varied ops, dtypes and channel counts, in one region, against the interpreter.
TEST(JitDifferential, LargeRegionMatches) {
  const Fixture fx(17);
  std::mt19937_64 rng(17);
  const char* kDtypes[] = {"fp32", "bf16", "fp16"};
  const char* kOps[] = {"add", "mult", "max", "subtract"};
  std::string text;
  for (int i = 0; i < 200; ++i) {
    const uint32_t src = 0x400 * static_cast<uint32_t>(rng() % 4), dst = 0x2000 + 0x400 * static_cast<uint32_t>(rng() % 4);
    const int n = std::array{1, 17, 64, 128}[rng() % 4];
    text += absl::StrCat("TensorScalarArith src=sbuf[0]+0x", absl::Hex(src), "[40:1] in_dtype=", kDtypes[rng() % 3],
                         " out_dtype=", kDtypes[rng() % 3], " n=", n, " op0=", kOps[rng() % 4], " imm0=",
                         0.25 * static_cast<double>(1 + rng() % 8), " op1=", kOps[rng() % 4], " imm1=",
                         0.5 * static_cast<double>(1 + rng() % 4), " dst=sbuf[0]+0x", absl::Hex(dst), "[40:1]\n");
  }
  auto prog = Assemble(text, Generation::Cayman);
  ASSERT_TRUE(prog.ok()) << prog.status();
  const auto f = ir::BuildIR(*prog, Generation::Cayman);
  ASSERT_TRUE(f.ok()) << f.status();
  int largest = 0;  // live statements of the largest channel-major region, a repeat's body once
  for (const ir::Region& r : f->regions) {
    if (!r.channel_major) continue;
    int live = 0;
    for (int i = r.begin; i < r.end; ++i) live += f->stmts[i].dead ? 0 : 1;
    for (const ir::Repeat& rp : r.repeats)
      for (int i = rp.begin + rp.period; i < rp.end(); ++i) live -= f->stmts[i].dead ? 0 : 1;
    largest = std::max(largest, live);
  }
  EXPECT_GT(largest, 256);
  const Outcome o = RunBoth(*prog, Generation::Cayman, fx, 3);
  EXPECT_TRUE(o.jit_ran);
  EXPECT_EQ(o.compiled, 200);
  EXPECT_EQ(o.diff, "");
}

}  // namespace
}  // namespace dvejit
