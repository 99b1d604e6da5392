// The C++ embedding facade (api/dvejit.h): loading from text and bytes, running, reading back
// bits, errors as statuses with their kinds, bounds checks, registers, Parameter RAM, Reset,
// and the report of the execution tier (the JIT's results equal the interpreter's). Only the public header is used, except for
// MakeAddress (to put an address into a register).
#include "api/dvejit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/address.h"

namespace dvejit {
namespace {

uint32_t B(float f) { return std::bit_cast<uint32_t>(f); }

// 4 channels: 8 ones at sbuf+0x0, then (x + 2) * 3 = 9 into sbuf+0x100.
constexpr char kFillAndScale[] =
    "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
    "TensorScalarArith src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] in_dtype=fp32 "
    "out_dtype=fp32 n=4 op0=add imm0=2.0 op1=mult imm1=3.0\n";
// (x + 2) * 3 of host data, 2 channels x 4 fp32.
constexpr char kScale[] =
    "TensorScalarArith src=sbuf[0]+0x0[4:1] dst=sbuf[0]+0x40[4:1] in_dtype=fp32 "
    "out_dtype=fp32 n=2 op0=add imm0=2.0 op1=mult imm1=3.0\n";

TensorRegion Fp32(uint32_t first, uint32_t partitions, uint32_t offset, uint32_t elements) {
  return TensorRegion{MemorySpace::Sbuf, first, partitions, offset, ElementType::Float32, elements};
}

Session NewSession(std::string_view gen = "cayman") {
  auto s = Session::Create(gen);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float f : v) out.push_back(B(f));
  return out;
}

TEST(ApiTest, VersionAndElementSizes) {
  EXPECT_EQ(Version(), "0.1.0");
  EXPECT_EQ(ElementSize(ElementType::Float32), 4);
  EXPECT_EQ(ElementSize(ElementType::BFloat16), 2);
  EXPECT_EQ(ElementSize(ElementType::Fp8E4), 1);
  EXPECT_EQ(ElementSize(ElementType::UInt32), 4);
  EXPECT_EQ(ElementSize(static_cast<ElementType>(0xB)), 0);  // fp32r is not a host type
  EXPECT_EQ(ElementSize(static_cast<ElementType>(0x0)), 0);
  EXPECT_EQ(ByteSize(Fp32(0, 3, 0, 5)), 60u);
  EXPECT_EQ(ErrorCodeName(ErrorCode::Unsupported), "unsupported");
  EXPECT_EQ(ErrorCodeOf(absl::OkStatus()), ErrorCode::Ok);
  EXPECT_EQ(ErrorCodeOf(absl::UnknownError("x")), ErrorCode::Internal);
}

TEST(ApiTest, CreateSessions) {
  for (const char* g : {"sunda", "cayman", "mariana", "maverick"}) {
    auto s = Session::Create(g);
    ASSERT_TRUE(s.ok()) << g << ": " << s.status();
    EXPECT_EQ(s->generation(), g);
  }
  EXPECT_EQ(NewSession("cayman").ActiveBytes(MemorySpace::Sbuf), 224u << 10);
  EXPECT_EQ(NewSession("cayman").ActiveBytes(MemorySpace::Psum), 16u << 10);
  EXPECT_EQ(NewSession("maverick").ActiveBytes(MemorySpace::Psum), 0u);
  auto bad = Session::Create("trainium9");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ErrorCodeOf(bad.status()), ErrorCode::Usage);
  EXPECT_NE(std::string(bad.status().message()).find("trainium9"), std::string::npos);
}

TEST(ApiTest, LoadFromTextRunReadBits) {
  Session s = NewSession();
  auto prog = s.LoadProgram(std::string_view(kFillAndScale));
  ASSERT_TRUE(prog.ok()) << prog.status();
  EXPECT_EQ(prog->size(), 2u);
  EXPECT_EQ(prog->generation(), "cayman");
  EXPECT_TRUE(s.Validate(*prog).ok());
  RunConfig interp;
  interp.tier = RunTier::Interp;
  RunResult r = s.Run(*prog, interp);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(r.executed, 2);
  EXPECT_EQ(r.per_opcode.at("Memset"), 1);
  EXPECT_EQ(r.per_opcode.at("TensorScalarArith"), 1);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.tier_notes.empty());
  EXPECT_EQ(r.tier_requested, RunTier::Interp);
  EXPECT_EQ(r.tier_used, RunTier::Interp);
  EXPECT_EQ(r.summary.rfind("executed 2 instructions", 0), 0u) << r.summary;
  EXPECT_NE(r.summary.find("Memset=1 TensorScalarArith=1"), std::string::npos) << r.summary;
  auto out = s.ReadValues<float>(Fp32(0, 4, 0x100, 8));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Bits(*out), std::vector<uint32_t>(32, 0x41100000u));  // 9.0f
  // Channel 4 is not active: untouched.
  auto lane4 = s.ReadValues<uint32_t>(
      TensorRegion{MemorySpace::Sbuf, 4, 1, 0x100, ElementType::UInt32, 8});
  ASSERT_TRUE(lane4.ok());
  EXPECT_EQ(*lane4, std::vector<uint32_t>(8, 0u));
  // The raw bytes of one element.
  auto raw = s.ReadBytes(Fp32(3, 1, 0x11C, 1));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, (std::vector<uint8_t>{0x00, 0x00, 0x10, 0x41}));
}

TEST(ApiTest, LoadFromBytesMatchesText) {
  auto text = Program::FromText(kFillAndScale);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::vector<uint8_t> records = text->Encode();
  ASSERT_EQ(records.size(), 128u);
  Session s = NewSession();
  auto bytes = s.LoadProgram(std::span<const uint8_t>(records));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->Encode(), records);
  EXPECT_FALSE(bytes->generation().has_value());
  auto dis = bytes->Disassemble();
  ASSERT_TRUE(dis.ok());
  auto again = Program::FromText(*dis);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->Encode(), records);
  RunResult r = s.Run(*bytes);
  ASSERT_TRUE(r.ok()) << r.status;
  auto out = s.ReadValues<float>(Fp32(0, 4, 0x100, 8));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bits(*out), std::vector<uint32_t>(32, 0x41100000u));
}

TEST(ApiTest, HostDataInAndOut) {
  Session s = NewSession();
  const std::vector<float> in = {1.5f, -2.0f, 0.25f, 1e30f, 0.0f, -0.0f, 7.0f, -5.0f};
  ASSERT_TRUE(s.WriteValues(Fp32(0, 2, 0x0, 4), in).ok());
  auto prog = s.LoadProgram(std::string_view(kScale));
  ASSERT_TRUE(prog.ok()) << prog.status();
  RunResult r = s.Run(*prog);
  ASSERT_TRUE(r.ok()) << r.status;
  auto out = s.ReadValues<float>(Fp32(0, 2, 0x40, 4));
  ASSERT_TRUE(out.ok());
  std::vector<uint32_t> want;
  for (float x : in) want.push_back(B((x + 2.0f) * 3.0f));  // two roundings, no fma
  EXPECT_EQ(Bits(*out), want);
  // bf16 as raw bits: the same bytes, read back through another element type.
  auto halves = s.ReadValues<uint16_t>(
      TensorRegion{MemorySpace::Sbuf, 0, 1, 0x40, ElementType::BFloat16, 2});
  ASSERT_TRUE(halves.ok());
  EXPECT_EQ((*halves)[1], static_cast<uint16_t>(B((1.5f + 2.0f) * 3.0f) >> 16));
}

TEST(ApiTest, ErrorsCarryTheirKinds) {
  Session s = NewSession();
  auto syntax = s.LoadProgram(std::string_view("Memset dtype=fp32 n=\n"));
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(ErrorCodeOf(syntax.status()), ErrorCode::Syntax);
  EXPECT_NE(std::string(syntax.status().message()).find("line 1"), std::string::npos);

  const std::vector<uint8_t> short_record(63, 0);
  auto decode = s.LoadProgram(std::span<const uint8_t>(short_record));
  ASSERT_FALSE(decode.ok());
  EXPECT_EQ(ErrorCodeOf(decode.status()), ErrorCode::Decode);
  std::vector<uint8_t> unknown(64, 0);
  unknown[0] = 0xFF;
  EXPECT_EQ(ErrorCodeOf(Program::FromBytes(unknown).status()), ErrorCode::Decode);

  auto invalid = s.LoadProgram(std::string_view(
      "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
      "Memset dtype=fp32 n=200 dst_element_count=8 set_value=0 dst=sbuf[0]+0x0[8:1]\n"));
  ASSERT_TRUE(invalid.ok()) << invalid.status();  // it assembles; it does not validate
  EXPECT_EQ(ErrorCodeOf(s.Validate(*invalid)), ErrorCode::Invalid);
  RunResult r = s.Run(*invalid);
  EXPECT_EQ(ErrorCodeOf(r.status), ErrorCode::Invalid);
  EXPECT_EQ(ViolatedPredicate(r.status), "check_active_channels");
  EXPECT_EQ(r.executed, 0);
  auto untouched = s.ReadValues<uint32_t>(
      TensorRegion{MemorySpace::Sbuf, 0, 1, 0, ElementType::UInt32, 8});
  ASSERT_TRUE(untouched.ok());
  EXPECT_EQ(*untouched, std::vector<uint32_t>(8, 0u));  // the first Memset did not run

  auto unsupported = s.LoadProgram(std::string_view("Exponential\n"));
  ASSERT_TRUE(unsupported.ok());
  EXPECT_EQ(ErrorCodeOf(s.Run(*unsupported).status), ErrorCode::Unsupported);

  // Valid, but (2^16 - 1)^4 elements per channel (step-0 dimensions): refused before anything
  // runs, on every tier. The count overflowed int64 once, passed the limit, and the run hung.
  auto huge = s.LoadProgram(std::string_view(
      "Copy src=sbuf[0]+0x0[65535:0,65535:0,65535:0,65535:0] "
      "dst=sbuf[0]+0x100[65535:0,65535:0,65535:0,65535:0] in_dtype=fp32 out_dtype=fp32 n=1\n"));
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_EQ(ErrorCodeOf(s.Validate(*huge)), ErrorCode::Unsupported);  // valid for the spec; not executable
  for (RunTier tier : {RunTier::Interp, RunTier::Jit}) {
    RunConfig config;
    config.tier = tier;
    RunResult big = s.Run(*huge, config);
    EXPECT_EQ(ErrorCodeOf(big.status), ErrorCode::Unsupported);
    EXPECT_EQ(ViolatedPredicate(big.status), "element_count_supported");
    EXPECT_NE(std::string(big.status.message()).find("18445618199572250625"), std::string::npos)
        << big.status;
    EXPECT_EQ(big.executed, 0);
  }

  // An unsatisfied wait is a runtime error under strict events, after what completed.
  auto waits = s.LoadProgram(std::string_view(
      "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
      "Copy wait=SEM_GE_IMM:1 semval=1 src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] "
      "in_dtype=fp32 out_dtype=fp32 n=4\n"));
  ASSERT_TRUE(waits.ok()) << waits.status();
  RunConfig strict;
  strict.strict_events = true;
  RunResult rt = s.Run(*waits, strict);
  EXPECT_EQ(ErrorCodeOf(rt.status), ErrorCode::Runtime);
  EXPECT_EQ(ViolatedPredicate(rt.status), "event_wait_satisfiable");
  EXPECT_EQ(rt.executed, 1);
  EXPECT_TRUE(s.Run(*waits).ok());  // not strict: the wait is ignored

  // Usage: a program assembled for another generation; an unknown table set.
  auto other = Program::FromText(kFillAndScale, "mariana");
  ASSERT_TRUE(other.ok());
  RunResult mismatch = s.Run(*other);
  EXPECT_EQ(ErrorCodeOf(mismatch.status), ErrorCode::Usage);
  EXPECT_EQ(mismatch.executed, 0);
  RunConfig bad_set;
  bad_set.table_set = "no-such-set";
  EXPECT_EQ(ErrorCodeOf(s.Run(*waits, bad_set).status), ErrorCode::Usage);
  EXPECT_EQ(ErrorCodeOf(Program::FromText(kFillAndScale, "gen9").status()), ErrorCode::Usage);
}

TEST(ApiTest, BoundsAreChecked) {
  Session s = NewSession();
  const uint32_t active = s.ActiveBytes(MemorySpace::Sbuf);
  std::vector<float> v(4, 1.0f);
  auto usage = [](const absl::Status& st) { return ErrorCodeOf(st) == ErrorCode::Usage; };
  // Past the active bytes, by one element.
  EXPECT_TRUE(usage(s.WriteValues(Fp32(0, 1, active - 12, 4), v)));
  EXPECT_TRUE(s.WriteValues(Fp32(0, 1, active - 16, 4), v).ok());
  // Past partition 127; no partitions.
  EXPECT_TRUE(usage(s.WriteValues(Fp32(127, 2, 0, 2), v)));
  EXPECT_TRUE(usage(s.ReadValues<float>(Fp32(0, 0, 0, 4)).status()));
  // Huge element counts do not wrap around.
  EXPECT_TRUE(usage(s.ReadBytes(Fp32(0, 1, 0, 0xFFFFFFFFu)).status()));
  EXPECT_TRUE(usage(s.ReadValues<float>(Fp32(0, 128, 16, 0x40000000u)).status()));
  // Size and element type mismatches.
  EXPECT_TRUE(usage(s.WriteValues(Fp32(0, 1, 0, 3), v)));
  std::vector<uint16_t> h(4);
  EXPECT_TRUE(usage(s.WriteValues(Fp32(0, 1, 0, 4), h)));
  EXPECT_TRUE(usage(s.ReadValues<double>(Fp32(0, 1, 0, 4)).status()));
  EXPECT_TRUE(usage(s.Read(Fp32(0, 1, 0, 4), nullptr, 16)));
  TensorRegion fp32r = Fp32(0, 1, 0, 4);
  fp32r.dtype = static_cast<ElementType>(0xB);
  EXPECT_TRUE(usage(s.ReadBytes(fp32r).status()));
  TensorRegion bad_space = Fp32(0, 1, 0, 4);
  bad_space.space = static_cast<MemorySpace>(7);
  EXPECT_TRUE(usage(s.ReadBytes(bad_space).status()));
  // PSUM: present on cayman (16 KiB per partition), absent on maverick.
  TensorRegion psum{MemorySpace::Psum, 0, 1, (16u << 10) - 4, ElementType::Float32, 1};
  EXPECT_TRUE(s.ReadBytes(psum).ok());
  psum.offset += 4;
  EXPECT_TRUE(usage(s.ReadBytes(psum).status()));
  Session mav = NewSession("maverick");
  psum.offset = 0;
  EXPECT_TRUE(usage(mav.ReadBytes(psum).status()));
  // A failed write changes nothing.
  auto before = s.ReadValues<float>(Fp32(126, 2, 0, 2));
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(usage(s.WriteValues(Fp32(126, 3, 0, 2), std::vector<float>(6, 5.0f))));
  EXPECT_EQ(*s.ReadValues<float>(Fp32(126, 2, 0, 2)), *before);
}

TEST(ApiTest, RegistersParamRamAndReciprocals) {
  Session s = NewSession();
  ASSERT_TRUE(s.SetRegister(63, 0xDEADBEEF).ok());
  EXPECT_EQ(*s.GetRegister(63), 0xDEADBEEFu);
  EXPECT_EQ(ErrorCodeOf(s.SetRegister(64, 1)), ErrorCode::Usage);
  EXPECT_EQ(ErrorCodeOf(s.GetRegister(-1).status()), ErrorCode::Usage);
  ASSERT_TRUE(s.SetParamRam(255, 2.5f).ok());
  EXPECT_EQ(*s.GetParamRam(255), 2.5f);
  EXPECT_EQ(ErrorCodeOf(s.SetParamRam(256, 1.0f)), ErrorCode::Usage);
  s.PreloadReciprocals();
  EXPECT_EQ(B(*s.GetParamRam(0)), 0x3F800000u);  // 1
  EXPECT_EQ(B(*s.GetParamRam(2)), 0x3EAAAAABu);  // fp32(1/3)
  EXPECT_EQ(B(*s.GetParamRam(4)), 0x3E4CCCCDu);  // fp32(1/5)
}

TEST(ApiTest, RegisterHeldAddress) {
  Session s = NewSession();
  auto prog = s.LoadProgram(std::string_view(
      "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x40400000 dst=sbuf[0]+0x0[8:1]\n"
      "Copy src=sbuf[0]+0x0[8:1] dst=reg(7)[8:1] in_dtype=fp32 out_dtype=fp32 n=4\n"));
  ASSERT_TRUE(prog.ok()) << prog.status();
  ASSERT_TRUE(s.SetRegister(7, MakeAddress(Space::Sbuf, 0, 0x300, Generation::Cayman)).ok());
  RunResult r = s.Run(*prog);
  ASSERT_TRUE(r.ok()) << r.status;
  auto out = s.ReadValues<float>(Fp32(0, 4, 0x300, 8));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bits(*out), std::vector<uint32_t>(32, 0x40400000u));  // 3.0f
}

TEST(ApiTest, ResetClearsEverything) {
  Session s = NewSession();
  auto prog = s.LoadProgram(std::string_view(kFillAndScale));
  ASSERT_TRUE(prog.ok());
  ASSERT_TRUE(s.Run(*prog).ok());
  ASSERT_TRUE(s.SetRegister(3, 42).ok());
  s.PreloadReciprocals();
  ASSERT_TRUE(s.WriteValues(TensorRegion{MemorySpace::Psum, 5, 1, 0, ElementType::Int32, 1},
                            std::vector<int32_t>{-7})
                  .ok());
  s.Reset();
  EXPECT_EQ(*s.ReadValues<float>(Fp32(0, 4, 0x100, 8)), std::vector<float>(32, 0.0f));
  EXPECT_EQ(*s.GetRegister(3), 0u);
  EXPECT_EQ(*s.GetParamRam(2), 0.0f);
  EXPECT_EQ(*s.ReadValues<int32_t>(
                TensorRegion{MemorySpace::Psum, 5, 1, 0, ElementType::Int32, 1}),
            std::vector<int32_t>{0});
  // The session runs as new after a reset.
  RunResult r = s.Run(*prog);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(Bits(*s.ReadValues<float>(Fp32(0, 4, 0x100, 8))),
            std::vector<uint32_t>(32, 0x41100000u));
}

// Host inputs through the scale program on a fresh session, run with `config`; the outputs.
std::vector<uint32_t> ScaleWith(const RunConfig& config, RunResult* result) {
  Session s = NewSession();
  std::vector<float> in;
  for (int i = 0; i < 8; ++i) in.push_back(0.37f * static_cast<float>(i * i) - 3.1f);
  EXPECT_TRUE(s.WriteValues(Fp32(0, 2, 0x0, 4), in).ok());
  auto prog = s.LoadProgram(std::string_view(kScale));
  EXPECT_TRUE(prog.ok()) << prog.status();
  *result = s.Run(*prog, config);
  auto out = s.ReadValues<float>(Fp32(0, 2, 0x40, 4));
  EXPECT_TRUE(out.ok());
  return Bits(*out);
}

TEST(ApiTest, JitTierMatchesTheInterpreter) {
  RunConfig interp, jit;
  interp.tier = RunTier::Interp;
  jit.tier = RunTier::Jit;
  RunResult ri, rj;
  const std::vector<uint32_t> want = ScaleWith(interp, &ri);
  ASSERT_TRUE(ri.ok()) << ri.status;
  EXPECT_EQ(ri.tier_used, RunTier::Interp);
  const std::vector<uint32_t> got = ScaleWith(jit, &rj);
  ASSERT_TRUE(rj.ok()) << rj.status;
  EXPECT_EQ(rj.tier_requested, RunTier::Jit);
  EXPECT_EQ(rj.tier_used, RunTier::Jit) << rj.summary;
  EXPECT_EQ(rj.executed, 1);
  EXPECT_EQ(got, want);
  EXPECT_NE(rj.summary.find("(jit"), std::string::npos) << rj.summary;
  // On threads: the same bits; a count outside 1-256 is a usage error that runs nothing.
  for (int threads : {2, 256}) {
    RunConfig threaded = jit;
    threaded.threads = threads;
    RunResult rt;
    EXPECT_EQ(ScaleWith(threaded, &rt), want) << threads;
    EXPECT_TRUE(rt.ok()) << rt.status;
    EXPECT_EQ(rt.tier_used, RunTier::Jit);
  }
  for (int threads : {0, -1, 257}) {
    RunConfig bad = jit;
    bad.threads = threads;
    RunResult rb;
    ScaleWith(bad, &rb);
    EXPECT_EQ(ErrorCodeOf(rb.status), ErrorCode::Usage) << threads << " " << rb.status;
    EXPECT_EQ(rb.executed, 0);
  }
}

TEST(ApiTest, JitTierThatCannotRunSaysSo) {
  // Strict events are interpreted: asked for the JIT by name, the report warns and says why.
  Session s = NewSession();
  auto prog = s.LoadProgram(std::string_view(kFillAndScale));
  ASSERT_TRUE(prog.ok());
  RunConfig config;
  config.tier = RunTier::Jit;
  config.strict_events = true;
  RunResult r = s.Run(*prog, config);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(r.tier_requested, RunTier::Jit);
  EXPECT_EQ(r.tier_used, RunTier::Interp);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].rfind("jit tier not used: ran interpreted (", 0), 0u) << r.warnings[0];
  EXPECT_FALSE(r.tier_notes.empty());
  EXPECT_NE(r.summary.find("warning: jit tier not used"), std::string::npos) << r.summary;
  EXPECT_EQ(Bits(*s.ReadValues<float>(Fp32(0, 4, 0x100, 8))),
            std::vector<uint32_t>(32, 0x41100000u));
  RunConfig bad;
  bad.tier = static_cast<RunTier>(9);
  EXPECT_EQ(ErrorCodeOf(s.Run(*prog, bad).status), ErrorCode::Usage);
}

TEST(ApiTest, AutoTierCompilesWhenAStreamRepeats) {
  Session s = NewSession();
  // A stream no other test runs (the JIT's run counts are per process).
  auto prog = s.LoadProgram(std::string_view(
      "TensorScalarArith src=sbuf[0]+0x0[16:1] dst=sbuf[0]+0x80[16:1] in_dtype=fp32 "
      "out_dtype=fp32 n=3 op0=mult imm0=-1.25 op1=add imm1=0.5\n"));
  ASSERT_TRUE(prog.ok()) << prog.status();
  RunResult first = s.Run(*prog);  // Auto is the default
  ASSERT_TRUE(first.ok()) << first.status;
  EXPECT_EQ(first.tier_requested, RunTier::Auto);
  EXPECT_EQ(first.tier_used, RunTier::Interp);
  EXPECT_FALSE(first.tier_notes.empty());
  EXPECT_TRUE(first.warnings.empty());  // falling back is what Auto does: no warning
  RunResult second = s.Run(*prog);
  ASSERT_TRUE(second.ok()) << second.status;
  EXPECT_EQ(second.tier_used, RunTier::Jit) << second.summary;
}

TEST(ApiTest, ProfileAndTrace) {
  Session s = NewSession();
  auto prog = s.LoadProgram(std::string_view(kFillAndScale));
  ASSERT_TRUE(prog.ok());
  RunConfig config;
  config.tier = RunTier::Interp;
  config.profile = RunProfile::Device;
  config.trace = true;
  RunResult r = s.Run(*prog, config);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_EQ(r.device_noops, 0);
  EXPECT_EQ(r.trace, "#0 Memset (0x49)\n#1 TensorScalarArith (0x43)\n");
}

TEST(ApiTest, ProgramsAreValuesAndEmptyIsFine) {
  auto p = Program::FromText("# nothing\n\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->empty());
  Program copy = *p;
  Program moved = std::move(*p);
  EXPECT_EQ(copy.size(), 0u);
  EXPECT_EQ(moved.size(), 0u);
  Session s = NewSession();
  RunResult r = s.Run(moved);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.executed, 0);
  // Sessions move.
  Session t = std::move(s);
  EXPECT_EQ(t.generation(), "cayman");
}

}  // namespace
}  // namespace dvejit
