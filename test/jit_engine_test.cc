// Tests of the JIT engine layer (jit/engine.h): compile tiny IRBuilder modules, call them, check
// bits; host features; AVX-512 code; error statuses; the on-disk object cache.
#include "jit/engine.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

// GCC says ASan is on with __SANITIZE_ADDRESS__, Clang 14 (the sanitizer build's) only through
// __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define DVEJIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DVEJIT_TEST_ASAN 1
#endif
#endif
#if defined(DVEJIT_TEST_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace dvejit::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Binary16Fn = void (*)(const float*, const float*, float*);
using Ternary16Fn = void (*)(const float*, const float*, const float*, float*);

std::unique_ptr<Engine> MakeEngine(EngineOptions options = {}) {
  auto engine = Engine::Create(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::move(engine).value();
}

// Builds `void <fn>(ptr a, ptr b, [ptr c,] ptr out)` working on one <16 x float> per pointer.
// `body` gets the loaded vectors and returns the result vector.
using Body = std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Module&,
                                        const std::vector<llvm::Value*>&)>;
struct BuiltModule {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
};
BuiltModule BuildVec16(Engine& engine, const std::string& module_name, const std::string& fn,
                       int inputs, const Body& body) {
  auto [ctx, m] = engine.NewModule(module_name);
  llvm::LLVMContext& c = *ctx;
  llvm::Type* ptr = llvm::PointerType::get(c, 0);
  std::vector<llvm::Type*> params(inputs + 1, ptr);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c), params, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn, *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  auto* vty = llvm::FixedVectorType::get(b.getFloatTy(), 16);
  std::vector<llvm::Value*> in;
  for (int i = 0; i < inputs; ++i) {
    in.push_back(b.CreateAlignedLoad(vty, f->getArg(i), llvm::Align(4)));
  }
  llvm::Value* result = body(b, *m, in);
  b.CreateAlignedStore(result, f->getArg(inputs), llvm::Align(4));
  b.CreateRetVoid();
  return {std::move(ctx), std::move(m)};
}

BuiltModule BuildAdd(Engine& engine, const std::string& module_name, const std::string& fn) {
  return BuildVec16(engine, module_name, fn, 2,
                    [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
                      return b.CreateFAdd(v[0], v[1]);
                    });
}

// Inputs with the interesting cases: subnormals, zeros of both signs, infinities, NaN.
std::vector<float> Inputs(int salt) {
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> v = {1.5f,
                          -2.25f,
                          denorm,
                          -denorm * 3,
                          0.0f,
                          -0.0f,
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::min() / 2,
                          3.0e38f,
                          1.0f + 0x1p-23f,
                          -7.0f,
                          1e-20f,
                          0.1f,
                          std::numeric_limits<float>::quiet_NaN(),
                          123456.789f,
                          -1e-38f};
  for (float& x : v) {
    if (!std::isnan(x) && salt != 0) x = x * static_cast<float>(salt) - 0.5f;
  }
  return v;
}

uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }

void ExpectAddWorks(void* fn) {
  ASSERT_NE(fn, nullptr);
  const std::vector<float> a = Inputs(0), b = Inputs(3);
  std::vector<float> out(16, 42.0f);
  reinterpret_cast<Binary16Fn>(fn)(a.data(), b.data(), out.data());
  for (int i = 0; i < 16; ++i) {
    const float want = a[i] + b[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[i])) << i;
    } else {
      EXPECT_EQ(Bits(out[i]), Bits(want)) << i << ": " << a[i] << " + " << b[i];
    }
  }
}

// A fresh engine with `options` compiles BuildAdd's module `name` (with `identity` when not
// empty), checks that it adds, and returns its object-cache counters.
ObjectCacheStats CompileAddOnNewEngine(const EngineOptions& options, const std::string& name,
                                       const std::string& identity = "") {
  auto engine = MakeEngine(options);
  BuiltModule add = BuildAdd(*engine, name, "add16");
  if (!identity.empty()) SetModuleIdentity(*add.module, identity);
  auto fn = engine->Compile(std::move(add.ctx), std::move(add.module), "add16");
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (fn.ok()) ExpectAddWorks(*fn);
  return engine->stats().object_cache;
}

std::string TempDir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() /
             absl::StrCat("dvejit_jit_test_", tag, "_", ::getpid());
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(JitEngineTest, HostConfiguration) {
  auto engine = MakeEngine();
  std::printf("cpu: %s\nvector_width_f32: %d\nfeatures: %s\nversion key length: %zu\n",
              engine->cpu().c_str(), engine->vector_width_f32(), engine->features().c_str(),
              engine->VersionKey().size());
  llvm::StringMap<bool> host;
  ASSERT_TRUE(llvm::sys::getHostCPUFeatures(host));
  const bool avx512f = host.lookup("avx512f");
  const bool avx2 = host.lookup("avx2");
  EXPECT_EQ(engine->HasFeature("avx512f"), avx512f);
  if (avx512f) {
    EXPECT_THAT(engine->features(), HasSubstr("+avx512f"));
    EXPECT_EQ(engine->vector_width_f32(), 16);
  } else if (avx2) {
    EXPECT_EQ(engine->vector_width_f32(), 8);
  }
  // Never the subnormal-flushing bf16 conversion, whatever the host has.
  EXPECT_THAT(engine->features(), HasSubstr("-avx512bf16"));
  EXPECT_THAT(engine->features(), Not(HasSubstr("+avx512bf16")));
  EXPECT_THAT(engine->features(), Not(HasSubstr("+avxneconvert")));
  EXPECT_FALSE(engine->HasFeature("avx512bf16"));
  EXPECT_THAT(engine->VersionKey(), HasSubstr(engine->features()));
  EXPECT_THAT(engine->VersionKey(), HasSubstr("llvm=16."));
  EXPECT_TRUE(engine->triple().isX86());
}

TEST(JitEngineTest, NewModuleIsConfigured) {
  auto engine = MakeEngine();
  auto [ctx, m] = engine->NewModule("shape");
  EXPECT_EQ(m->getModuleIdentifier(), "shape");
  EXPECT_EQ(m->getTargetTriple(), engine->triple().str());
  EXPECT_EQ(m->getDataLayout(), engine->data_layout());
  EXPECT_EQ(&m->getContext(), ctx.get());
}

TEST(JitEngineTest, AddsVectorsBitExactly) {
  auto engine = MakeEngine();
  BuiltModule built = BuildAdd(*engine, "add16", "add16");
  auto fn = engine->Compile(std::move(built.ctx), std::move(built.module), "add16");
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectAddWorks(*fn);
  const EngineStats stats = engine->stats();
  EXPECT_EQ(stats.compiles, 1u);
  std::printf("compile time (add16, optimised, first compile in the engine): %.3f ms\n",
              absl::ToDoubleMilliseconds(stats.compile_time));
}

TEST(JitEngineTest, CompileTimeOfTestModule) {
  auto engine = MakeEngine();
  {  // warm-up: first use of the target machine in the process
    BuiltModule w = BuildAdd(*engine, "warm", "warm");
    ASSERT_TRUE(engine->Compile(std::move(w.ctx), std::move(w.module), "warm").ok());
  }
  constexpr int kRuns = 10;
  absl::Duration before = engine->stats().compile_time;
  for (int i = 0; i < kRuns; ++i) {
    BuiltModule built = BuildVec16(
        *engine, absl::StrCat("fma", i), "f", 3,
        [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
          llvm::Value* sum = b.CreateFAdd(v[0], v[1]);
          return b.CreateIntrinsic(llvm::Intrinsic::fma, {v[0]->getType()}, {sum, v[1], v[2]});
        });
    auto fn = engine->Compile(std::move(built.ctx), std::move(built.module), "f");
    ASSERT_TRUE(fn.ok()) << fn.status();
  }
  std::printf("compile time (fadd+fma module, warm, mean of %d): %.3f ms\n", kRuns,
              absl::ToDoubleMilliseconds((engine->stats().compile_time - before) / kRuns));
}

TEST(JitEngineTest, FmaIntrinsicIsFusedAndMulAddIsNot) {
  auto engine = MakeEngine();
  BuiltModule fma = BuildVec16(
      *engine, "fma16", "fma16", 3,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        return b.CreateIntrinsic(llvm::Intrinsic::fma, {v[0]->getType()}, {v[0], v[1], v[2]});
      });
  BuiltModule muladd = BuildVec16(
      *engine, "muladd16", "muladd16", 3,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        return b.CreateFAdd(b.CreateFMul(v[0], v[1]), v[2]);
      });
  auto fma_fn = engine->Compile(std::move(fma.ctx), std::move(fma.module), "fma16");
  ASSERT_TRUE(fma_fn.ok()) << fma_fn.status();
  auto muladd_fn = engine->Compile(std::move(muladd.ctx), std::move(muladd.module), "muladd16");
  ASSERT_TRUE(muladd_fn.ok()) << muladd_fn.status();

  std::vector<float> a = Inputs(0), b = Inputs(2), c = Inputs(5);
  // Lane 0: fma(1+2^-23, 1-2^-23, -1) = -2^-46, but the product rounds to 1 so mul+add gives 0.
  a[0] = 1.0f + 0x1p-23f;
  b[0] = 1.0f - 0x1p-23f;
  c[0] = -1.0f;
  std::vector<float> out_fma(16), out_muladd(16);
  reinterpret_cast<Ternary16Fn>(*fma_fn)(a.data(), b.data(), c.data(), out_fma.data());
  reinterpret_cast<Ternary16Fn>(*muladd_fn)(a.data(), b.data(), c.data(), out_muladd.data());
  EXPECT_EQ(out_fma[0], -0x1p-46f);
  EXPECT_EQ(out_muladd[0], 0.0f);
  for (int i = 0; i < 16; ++i) {
    const float want_fma = std::fma(a[i], b[i], c[i]);
    volatile float product = a[i] * b[i];  // -ffp-contract=off anyway
    const float want_muladd = product + c[i];
    if (std::isnan(want_fma)) {
      EXPECT_TRUE(std::isnan(out_fma[i])) << i;
    } else {
      EXPECT_EQ(Bits(out_fma[i]), Bits(want_fma)) << i;
    }
    if (std::isnan(want_muladd)) {
      EXPECT_TRUE(std::isnan(out_muladd[i])) << i;
    } else {
      EXPECT_EQ(Bits(out_muladd[i]), Bits(want_muladd)) << i;
    }
  }
}

// The fma of code for a host without FMA3 (EmitFmaWithoutFmaUnit), compiled as for an SSE host,
// against the C library's correctly rounded fmaf: the special values in every combination,
// random bit patterns, near-cancellations, and products of short significands whose exact
// results sit on or next to a float rounding midpoint (where double rounding would err).
TEST(JitEngineTest, FmaWithoutFmaUnitIsCorrectlyRounded) {
  EngineOptions options;
  options.max_vector_width = 4;  // withholds FMA3, as on a host without it
  auto engine = MakeEngine(options);
  ASSERT_FALSE(engine->HasFeature("fma"));
  ASSERT_FALSE(engine->codegen_target().fma);
  BuiltModule built = BuildVec16(
      *engine, "fma_without_unit", "fma16", 3,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        return EmitFmaWithoutFmaUnit(b, v[0], v[1], v[2]);
      });
  auto fn = engine->Compile(std::move(built.ctx), std::move(built.module), "fma16");
  ASSERT_TRUE(fn.ok()) << fn.status();
  const auto fma16 = reinterpret_cast<Ternary16Fn>(*fn);

  std::vector<float> a, b, c;
  auto add = [&](float x, float y, float z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  };
  std::vector<float> specials;
  for (int salt : {0, 1, 3}) {
    const std::vector<float> v = Inputs(salt);
    specials.insert(specials.end(), v.begin(), v.end());
  }
  specials.push_back(std::numeric_limits<float>::max());
  specials.push_back(-std::numeric_limits<float>::infinity());
  for (float x : specials)
    for (float y : specials)
      for (float z : specials) add(x, y, z);
  std::mt19937 rng(20261207);
  std::uniform_int_distribution<uint32_t> any_bits;
  auto random_in = [&](int min_exp, int max_exp) {  // random significand and sign, 2^exp scale
    const float m = std::bit_cast<float>((any_bits(rng) & 0x807FFFFFu) | 0x3F800000u);
    return std::ldexp(m, std::uniform_int_distribution<int>(min_exp, max_exp)(rng));
  };
  for (int i = 0; i < 400000; ++i)
    add(std::bit_cast<float>(any_bits(rng)), std::bit_cast<float>(any_bits(rng)), std::bit_cast<float>(any_bits(rng)));
  for (int i = 0; i < 400000; ++i) {  // the addend cancels most of the product
    const float x = random_in(-70, 60), y = random_in(-70, 60);
    const float rounded = x * y;
    const int32_t nudge = std::uniform_int_distribution<int32_t>(-3, 3)(rng);
    add(x, y, -std::bit_cast<float>(std::bit_cast<uint32_t>(rounded) + static_cast<uint32_t>(nudge)));
  }
  for (int i = 0; i < 400000; ++i) {  // exact products of 25-26 bits, plus a tiny or zero addend
    auto short_significand = [&] {
      const uint32_t k = std::uniform_int_distribution<uint32_t>(1, 4095)(rng);
      return std::ldexp(1.0f + static_cast<float>(k) * 0x1p-12f, std::uniform_int_distribution<int>(-140, 120)(rng) / 2);
    };
    const float x = short_significand(), y = any_bits(rng) % 2 ? short_significand() : -short_significand();
    const float scale = std::ldexp(1.0f, std::uniform_int_distribution<int>(-60, -20)(rng));
    const float tiny = std::abs(x * y) * scale;
    const int pick = static_cast<int>(any_bits(rng) % 3);
    add(x, y, pick == 0 ? 0.0f : pick == 1 ? tiny : -tiny);
  }
  for (int i = 0; i < 200000; ++i)  // results near and below the subnormal range
    add(random_in(-80, -60), random_in(-80, -60), any_bits(rng) % 2 ? 0.0f : random_in(-150, -120));
  while (a.size() % 16 != 0) add(1.0f, 1.0f, 1.0f);

  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); i += 16) fma16(&a[i], &b[i], &c[i], &out[i]);
  int mismatches = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float want = std::fma(a[i], b[i], c[i]);
    const bool ok = std::isnan(want) ? std::isnan(out[i]) : Bits(out[i]) == Bits(want);
    if (!ok && ++mismatches <= 10)
      ADD_FAILURE() << "fma(" << std::hexfloat << a[i] << ", " << b[i] << ", " << c[i] << ") = " << out[i]
                    << ", want " << want;
  }
  EXPECT_EQ(mismatches, 0) << "of " << a.size();
}

// The host's widest vectors: zmm with AVX-512F; ymm, and never zmm, with AVX2 alone (LLVM 16
// names some hosts `generic`, which without the explicit features would mean SSE code).
TEST(JitEngineTest, EmitsWidestVectorsAndNoContraction) {
  auto engine = MakeEngine();
  const bool avx512f = engine->HasFeature("avx512f");
  if (!avx512f && !engine->HasFeature("avx2")) GTEST_SKIP() << "host has neither AVX-512F nor AVX2";
  BuiltModule add = BuildAdd(*engine, "asm_add", "asm_add");
  auto text = engine->CompileToAssembly(*add.module);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr(avx512f ? "zmm" : "ymm"));
  if (!avx512f) {
    EXPECT_THAT(*text, Not(HasSubstr("zmm")));
  }
  EXPECT_THAT(*text, HasSubstr("vaddps"));

  BuiltModule muladd = BuildVec16(
      *engine, "asm_muladd", "asm_muladd", 3,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        return b.CreateFAdd(b.CreateFMul(v[0], v[1]), v[2]);
      });
  auto muladd_text = engine->CompileToAssembly(*muladd.module);
  ASSERT_TRUE(muladd_text.ok()) << muladd_text.status();
  EXPECT_THAT(*muladd_text, HasSubstr("vmulps"));
  EXPECT_THAT(*muladd_text, Not(HasSubstr("vfmadd")));
}

// A loop (exercises LICM and SimplifyCFG): p[i*16 .. i*16+15] *= s for i < n.
TEST(JitEngineTest, LoopKernel) {
  auto engine = MakeEngine();
  auto [ctx, m] = engine->NewModule("scale_loop");
  llvm::LLVMContext& c = *ctx;
  llvm::Type* ptr = llvm::PointerType::get(c, 0);
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                                      {ptr, i64, llvm::Type::getFloatTy(c)}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "scale", *m);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  llvm::IRBuilder<> b(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(1), b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  auto* vty = llvm::FixedVectorType::get(b.getFloatTy(), 16);
  llvm::Value* splat = b.CreateVectorSplat(16, f->getArg(2));  // loop-invariant: LICM
  llvm::Value* addr = b.CreateGEP(vty, f->getArg(0), i);
  b.CreateAlignedStore(b.CreateFMul(b.CreateAlignedLoad(vty, addr, llvm::Align(4)), splat),
                       addr, llvm::Align(4));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(1)), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  auto fn = engine->Compile(std::move(ctx), std::move(m), "scale");
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> data(16 * 5);
  for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<float>(k) * 0.37f - 3.0f;
  std::vector<float> want = data;
  for (float& x : want) x *= 1.7f;
  reinterpret_cast<void (*)(float*, int64_t, float)>(*fn)(data.data(), 5, 1.7f);
  for (size_t k = 0; k < data.size(); ++k) EXPECT_EQ(Bits(data[k]), Bits(want[k])) << k;
}

TEST(JitEngineTest, VerifierFailureIsAStatus) {
  auto engine = MakeEngine();
  auto [ctx, m] = engine->NewModule("broken");
  auto* fty = llvm::FunctionType::get(llvm::Type::getInt32Ty(*ctx), {}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "broken", *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", f));
  b.CreateRet(b.getInt64(1));  // wrong return type
  auto fn = engine->Compile(std::move(ctx), std::move(m), "broken");
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fn.status().message(), HasSubstr("verifier"));
  EXPECT_THAT(fn.status().message(), HasSubstr("return"));
  EXPECT_EQ(engine->stats().failures, 1u);

  // A block without a terminator.
  auto [ctx2, m2] = engine->NewModule("broken2");
  auto* f2 = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(*ctx2), {}, false),
      llvm::Function::ExternalLinkage, "g", *m2);
  llvm::BasicBlock::Create(*ctx2, "entry", f2);
  auto fn2 = engine->Compile(std::move(ctx2), std::move(m2), "g");
  ASSERT_FALSE(fn2.ok());
  EXPECT_EQ(fn2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JitEngineTest, MissingSymbolIsNotFound) {
  auto engine = MakeEngine();
  BuiltModule add = BuildAdd(*engine, "nosym", "add16");
  auto fn = engine->Compile(std::move(add.ctx), std::move(add.module), "no_such_function");
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kNotFound) << fn.status();
  EXPECT_THAT(fn.status().message(), HasSubstr("no_such_function"));
}

TEST(JitEngineTest, NullModuleAndFastMathAreRejected) {
  auto engine = MakeEngine();
  EXPECT_EQ(engine->Compile(nullptr, nullptr, "x").status().code(),
            absl::StatusCode::kInvalidArgument);
  BuiltModule fast = BuildVec16(
      *engine, "fast", "fast", 2,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        llvm::FastMathFlags fmf;
        fmf.setAllowContract();
        b.setFastMathFlags(fmf);
        return b.CreateFAdd(v[0], v[1]);
      });
  auto fn = engine->Compile(std::move(fast.ctx), std::move(fast.module), "fast");
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fn.status().message(), HasSubstr("fast-math"));
}

TEST(JitEngineTest, SameSymbolInTwoModules) {
  auto engine = MakeEngine();
  BuiltModule add = BuildAdd(*engine, "k_add", "kernel");
  BuiltModule sub = BuildVec16(
      *engine, "k_sub", "kernel", 2,
      [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& v) {
        return b.CreateFSub(v[0], v[1]);
      });
  auto f_add = engine->Compile(std::move(add.ctx), std::move(add.module), "kernel");
  auto f_sub = engine->Compile(std::move(sub.ctx), std::move(sub.module), "kernel");
  ASSERT_TRUE(f_add.ok()) << f_add.status();
  ASSERT_TRUE(f_sub.ok()) << f_sub.status();
  EXPECT_NE(*f_add, *f_sub);
  ExpectAddWorks(*f_add);
  std::vector<float> a(16, 5.0f), b(16, 2.0f), out(16);
  reinterpret_cast<Binary16Fn>(*f_sub)(a.data(), b.data(), out.data());
  EXPECT_EQ(out[7], 3.0f);
}

// CompileOwned's code lives as long as its CompiledCode: destroying it frees the module (the
// engine counts it), and the engine compiles the same symbol again afterwards.
TEST(JitEngineTest, OwnedCodeIsFreedWithItsHandle) {
  auto engine = MakeEngine();
  for (int round = 0; round < 3; ++round) {
    BuiltModule add = BuildAdd(*engine, "owned_add", "owned_add");
    auto code = engine->CompileOwned(std::move(add.ctx), std::move(add.module), "owned_add");
    ASSERT_TRUE(code.ok()) << code.status();
    ExpectAddWorks((*code)->address());
    EXPECT_EQ(engine->stats().released, static_cast<uint64_t>(round));
  }
  EXPECT_EQ(engine->stats().released, 3u);
  EXPECT_EQ(engine->stats().compiles, 3u);
}

// The process's memory mappings (Linux), or -1.
int MappingCount() {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return -1;
  int n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

// Released code gives its pages back. With LLVM 16's JITLink layer each released module kept
// its two mappings (code, data), and a process that compiled ~32,000 shapes hit the kernel's
// limit on mappings, whatever the compiled-stream cache's bound.
TEST(JitEngineTest, ReleasedCodeGivesItsPagesBack) {
  if (MappingCount() < 0) GTEST_SKIP() << "no /proc/self/maps";
  auto engine = MakeEngine();
  auto compile_and_release = [&](int i) {
    const std::string name = absl::StrCat("pages_", i);
    BuiltModule add = BuildAdd(*engine, name, name);
    auto code = engine->CompileOwned(std::move(add.ctx), std::move(add.module), name);
    ASSERT_TRUE(code.ok()) << code.status();
    ExpectAddWorks((*code)->address());
  };
  for (int i = 0; i < 20; ++i) compile_and_release(i);  // the allocators' first slabs
  const int before = MappingCount();
  constexpr int kModules = 300;
  for (int i = 20; i < 20 + kModules; ++i) compile_and_release(i);
  EXPECT_LT(MappingCount() - before, kModules / 10) << "mappings before: " << before;
  EXPECT_EQ(engine->stats().released, static_cast<uint64_t>(20 + kModules));
}

// Valid IR that x86 instruction selection cannot lower (an AArch64 intrinsic): LLVM raises a
// fatal error ("Cannot select") while generating code.
BuiltModule BuildUnselectable(Engine& engine, const std::string& name) {
  auto [ctx, m] = engine.NewModule(name);
  auto* i32 = llvm::Type::getInt32Ty(*ctx);
  auto* fty = llvm::FunctionType::get(i32, {i32, i32}, false);
  auto crc = m->getOrInsertFunction("llvm.aarch64.crc32b", fty);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "f", *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", f));
  b.CreateRet(b.CreateCall(crc, {f->getArg(0), f->getArg(1)}));
  return {std::move(ctx), std::move(m)};
}

// What an LLVM fatal error leaks on purpose (the failed module, the disabled engine's session)
// is allocated inside this scope, which LeakSanitizer does not report: the sanitizer build runs
// the tests with detect_leaks=1.
class ExpectedLeaks {
 public:
  ExpectedLeaks() {
#if defined(DVEJIT_TEST_ASAN)
    __lsan_disable();
#endif
  }
  ~ExpectedLeaks() {
#if defined(DVEJIT_TEST_ASAN)
    __lsan_enable();
#endif
  }
};

// An LLVM fatal error becomes Compile's error: the process goes on, the engine refuses more
// modules, what it compiled before still runs, and a new engine compiles again.
TEST(JitEngineTest, FatalErrorIsAnErrorAndDisablesTheEngine) {
  std::optional<ExpectedLeaks> leaks(std::in_place);
  auto engine = MakeEngine();
  BuiltModule add = BuildAdd(*engine, "before_the_error", "kernel");
  auto f_add = engine->Compile(std::move(add.ctx), std::move(add.module), "kernel");
  ASSERT_TRUE(f_add.ok()) << f_add.status();

  BuiltModule bad = BuildUnselectable(*engine, "shape:cannot-select");
  auto failed = engine->Compile(std::move(bad.ctx), std::move(bad.module), "f");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(failed.status().message()),
              testing::AllOf(testing::HasSubstr("LLVM fatal error while compiling module "
                                                "'shape:cannot-select'"),
                             testing::HasSubstr("Cannot select")));
  EXPECT_TRUE(engine->disabled());
  EXPECT_EQ(engine->stats().failures, 1u);

  BuiltModule after = BuildAdd(*engine, "after_the_error", "kernel");
  auto refused = engine->Compile(std::move(after.ctx), std::move(after.module), "kernel");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), testing::HasSubstr("Cannot select"));
  ExpectAddWorks(*f_add);  // code compiled before the error is still mapped
  engine.reset();          // a disabled engine is destroyed without tearing down its session
  ExpectAddWorks(*f_add);  // ... so its code stays valid
  leaks.reset();

  auto fresh = MakeEngine();
  BuiltModule again = BuildAdd(*fresh, "after_the_error", "kernel");
  auto f_again = fresh->Compile(std::move(again.ctx), std::move(again.module), "kernel");
  ASSERT_TRUE(f_again.ok()) << f_again.status();
  ExpectAddWorks(*f_again);
}

// CompileToAssembly reports the same fatal error and leaves the engine usable.
TEST(JitEngineTest, FatalErrorInCompileToAssemblyIsAnError) {
  auto engine = MakeEngine();
  {
    ExpectedLeaks leaks;
    BuiltModule bad = BuildUnselectable(*engine, "asm:cannot-select");
    auto text = engine->CompileToAssembly(*bad.module);
    ASSERT_FALSE(text.ok());
    EXPECT_THAT(std::string(text.status().message()),
                testing::HasSubstr("LLVM fatal error while compiling module 'asm:cannot-select'"));
    (void)bad.module.release();  // unknown state after the error: never destroyed
    (void)bad.ctx.release();
  }
  EXPECT_FALSE(engine->disabled());
  BuiltModule add = BuildAdd(*engine, "k_add", "kernel");
  auto f = engine->Compile(std::move(add.ctx), std::move(add.module), "kernel");
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectAddWorks(*f);
}

extern "C" float dvejit_test_helper_twice(float x) { return 2.0f * x; }

TEST(JitEngineTest, RegisteredRuntimeHelperIsCallable) {
  auto engine = MakeEngine();
  ASSERT_TRUE(engine->RegisterSymbol("helper_twice",
                                     reinterpret_cast<void*>(&dvejit_test_helper_twice))
                  .ok());
  EXPECT_EQ(engine->RegisterSymbol("helper_twice", nullptr).code(),
            absl::StatusCode::kAlreadyExists);
  auto [ctx, m] = engine->NewModule("calls_helper");
  auto* fl = llvm::Type::getFloatTy(*ctx);
  auto helper = m->getOrInsertFunction("helper_twice", llvm::FunctionType::get(fl, {fl}, false));
  auto* f = llvm::Function::Create(llvm::FunctionType::get(fl, {fl}, false),
                                   llvm::Function::ExternalLinkage, "f", *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", f));
  b.CreateRet(b.CreateFAdd(b.CreateCall(helper, {f->getArg(0)}), f->getArg(0)));
  auto fn = engine->Compile(std::move(ctx), std::move(m), "f");
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_EQ(reinterpret_cast<float (*)(float)>(*fn)(1.25f), 3.75f);
}

TEST(JitEngineTest, ObjectCacheIsHitBySecondEngine) {
  const std::string dir = TempDir("objcache");
  EngineOptions options;
  options.object_cache_dir = dir;
  ObjectCacheStats s = CompileAddOnNewEngine(options, "shape:add16:v1");
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.writes, 1u);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().extension(), ".o") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
  s = CompileAddOnNewEngine(options, "shape:add16:v1");  // as a second process would
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.writes, 0u);
  EXPECT_EQ(s.errors, 0u);
  // A corrupt file is a miss (counted as an error), then rewritten.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << "DVEJITOBgarbage";
  }
  s = CompileAddOnNewEngine(options, "shape:add16:v1");
  EXPECT_EQ(s.hits, 0u);
  EXPECT_GE(s.errors, 1u);
  EXPECT_EQ(s.writes, 1u);
  // Different engine settings (part of the key) do not share objects.
  EngineOptions unoptimised = options;
  unoptimised.optimize = false;
  EXPECT_EQ(CompileAddOnNewEngine(unoptimised, "shape:add16:v1").hits, 0u);
  std::filesystem::remove_all(dir);
}

// Two modules with one name but different identities never share an object: the name alone
// (what the file is named by) is not the key.
TEST(JitEngineTest, ObjectCacheComparesTheModuleIdentity) {
  const std::string dir = TempDir("objcache_identity");
  EngineOptions options;
  options.object_cache_dir = dir;
  EXPECT_EQ(CompileAddOnNewEngine(options, "shape:same-name", "identity A").writes, 1u);
  // Same file name, another identity: a miss.
  EXPECT_EQ(CompileAddOnNewEngine(options, "shape:same-name", "identity B").hits, 0u);
  // B's object, written by the second engine.
  EXPECT_EQ(CompileAddOnNewEngine(options, "shape:same-name", "identity B").hits, 1u);
  std::filesystem::remove_all(dir);
}

TEST(JitEngineTest, ConcurrentCompiles) {
  auto engine = MakeEngine();
  constexpr int kThreads = 4, kPerThread = 3;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        BuiltModule add = BuildAdd(*engine, absl::StrCat("conc_", t, "_", k), "kernel");
        auto fn = engine->Compile(std::move(add.ctx), std::move(add.module), "kernel");
        if (!fn.ok()) continue;
        const std::vector<float> a(16, static_cast<float>(t)), b(16, static_cast<float>(k));
        std::vector<float> out(16);
        reinterpret_cast<Binary16Fn>(*fn)(a.data(), b.data(), out.data());
        if (out[15] == static_cast<float>(t + k)) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads * kPerThread);
  EXPECT_EQ(engine->stats().compiles, static_cast<uint64_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace dvejit::jit
