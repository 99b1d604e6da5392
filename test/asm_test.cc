// The text assembler and disassembler (docs/asm.md): golden lines with their exact bytes and
// canonical text, lossless round trips over random records of every opcode and generation, the
// .recip_table directive, error messages, and garbage input that must fail cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/address.h"
#include "frontend/assembler.h"
#include "frontend/diag.h"
#include "frontend/disassembler.h"
#include "frontend/fields.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"
#include "frontend/structs.h"

namespace dvejit {
namespace {

constexpr Generation kCay = Generation::Cayman;

Instruction AsmOne(std::string_view text, Generation gen = kCay) {
  auto r = Assemble(text, gen);
  EXPECT_TRUE(r.ok()) << r.status() << "\n  text: " << text;
  if (!r.ok()) return Instruction{};
  EXPECT_EQ(r->size(), 1u) << text;
  return r->empty() ? Instruction{} : r->front();
}

template <typename S>
Instruction FromStruct(const S& s) {
  Instruction inst;
  StoreTo(s, inst.bytes.data());
  return inst;
}

Header Hdr(Opcode op) { return Header{static_cast<uint8_t>(op), 0x10, 0, 0}; }

std::string Bytes(const Instruction& inst) {
  std::ostringstream os;
  for (int i = 0; i < kRecordBytes; ++i) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02X%s", inst.bytes[i], i % 16 == 15 ? "\n" : " ");
    os << buf;
  }
  return os.str();
}

// Asserts the text assembles to exactly `want`, and that `want` disassembles to `canonical`.
void Golden(std::string_view text, const Instruction& want, std::string_view canonical,
            Generation gen = kCay) {
  const Instruction got = AsmOne(text, gen);
  EXPECT_EQ(got, want) << "text: " << text << "\ngot:\n" << Bytes(got) << "want:\n" << Bytes(want);
  EXPECT_EQ(Disassemble(want, gen), canonical);
  EXPECT_EQ(AsmOne(canonical, gen), want) << canonical;
}

// ---------------------------------------------------------------------------------------------
// Golden lines.

TEST(AsmGolden, BatchNormStats2) {
  S4D2_BN s{};
  s.header = Hdr(Opcode::BatchNormStats2);
  s.src = Tensor4D{0x100, {1, 0, 0, 0}, {512, 1, 1, 1}};
  s.in_dtype = s.out_dtype = static_cast<uint8_t>(Dtype::FP32);
  s.num_active_channels = 128;
  s.even_count = s.odd_count = 256.0f;
  s.dst = Tensor2D{0x1000, {1, 0}, {6, 1}};
  Golden(
      "batchnormstats2 src=sbuf[0]+0x100[512:1] in_dtype=FP32 out_dtype=fp32 n=128 "
      "even_count=256 odd_count=2.56e2 dst=sbuf[0]+4096[ 6 : 1 ]  # comment",
      FromStruct(s),
      "BatchNormStats2 src=sbuf[0]+0x100[512:1,1:0,1:0,1:0] in_dtype=fp32 out_dtype=fp32 "
      "num_active_channels=128 even_count=256 odd_count=256 dst=sbuf[0]+0x1000[6:1,1:0]");
}

TEST(AsmGolden, TensorScalarArithEventsAndInferredSources) {
  S3D3_TS s{};
  s.header = Header{static_cast<uint8_t>(Opcode::TensorScalarArith), 0x10, 3, 3};
  s.events = Events{5, 2, 3, 3, 7};
  s.accumulator_cmd = 0;
  s.src = Tensor3D{MakeAddress(Space::Sbuf, 1, 0x200, kCay), {1, 64, 0}, {64, 2, 1}};
  s.in_dtype = static_cast<uint8_t>(Dtype::BFLOAT16);
  s.out_dtype = static_cast<uint8_t>(Dtype::FP32);
  s.num_active_channels = 64;
  s.imm0_src = 0;  // inferred: a value
  s.op0 = static_cast<uint8_t>(AluOp::MULT);
  s.op1 = static_cast<uint8_t>(AluOp::ADD);
  s.reverse_operands = 1;
  s.imm1_src = 1;  // inferred: an address
  s.imm0 = std::bit_cast<uint32_t>(1.5f);
  s.imm1 = 0xC0040;  // sbuf[3]+0x40 on cayman
  s.dst = Tensor3D{0x2008000, {1, 0, 0}, {128, 1, 1}};
  Golden(
      "TensorScalarArith wait=SEM_GE_IMM:2 update=sem_inc_read:3 semval=7 debug=START hint=3 "
      "src=sbuf[1]+0x200[64:1, 2:64] dst=psum[1]+0[128:1] in_dtype=bf16 out_dtype=fp32 n=64 "
      "op0=mult op1=ADD imm0=1.5 imm1=sbuf[3]+0x40 reverse_operands=first "
      "accumulator_cmd=idle",
      FromStruct(s),
      "TensorScalarArith debug=START hint=3 wait=SEM_GE_IMM:2 update=SEM_INC_READ:3 semval=7 "
      "accumulator_cmd=idle src=sbuf[1]+0x200[64:1,2:64,1:0] in_dtype=bf16 out_dtype=fp32 "
      "num_active_channels=64 imm0_src=inst op0=mult op1=add reverse_operands=first "
      "imm1_src=ptr imm0=1.5 imm1=sbuf[3]+0x40 dst=psum[1]+0x0[128:1,1:0,1:0]");
}

TEST(AsmGolden, GradAccumulate2RegisterAndPsumPointers) {
  S3S3D1_BN2 s{};
  s.header = Hdr(Opcode::BatchNormGradAccumulate2);
  s.imm0 = 5;                             // IMM_REG r5
  s.imm1 = 0x2000000 + 2 * 32768 + 0x10;  // psum[2]+0x10
  s.src0 = Tensor3D{0x40, {1, 0, 0}, {256, 1, 1}};
  s.src1 = Tensor3D{0x840, {1, 0, 0}, {256, 1, 1}};
  s.dst = Tensor1D{0x1040, {1}, {3}};
  s.in_dtypes = 0xA | (0x6 << 4);  // fp32, bf16
  s.imm_out_dtypes = 0xA | (0xA << 4);
  s.imm_srcs = 2 | (1 << 4);  // inferred from the forms: reg, ptr
  s.num_active_channels = 32;
  Golden(
      "BatchNormGradAccumulate2 imm0=r5 imm1=psum[2]+0x10 src0=sbuf[0]+0x40[256:1] "
      "src1=sbuf[0]+0x840[256:1] dst=sbuf[0]+0x1040[3:1] in_dtypes=fp32, bf16 "
      "imm_out_dtypes=FP32,fp32 n=32",
      FromStruct(s),
      "BatchNormGradAccumulate2 imm0=r5 src0=sbuf[0]+0x40[256:1,1:0,1:0] "
      "src1=sbuf[0]+0x840[256:1,1:0,1:0] dst=sbuf[0]+0x1040[3:1] imm1=psum[2]+0x10 "
      "in_dtypes=fp32,bf16 imm_out_dtypes=fp32,fp32 imm_srcs=reg,ptr num_active_channels=32");
}

TEST(AsmGolden, LoadParameterRamF32Forms) {
  CTRL_IM s{};
  s.header = Hdr(Opcode::LoadParameterRam);
  s.param_ram_offset = 8;
  const float v[8] = {1.0f,
                      0.5f,
                      0.25f,
                      -0.0f,
                      std::bit_cast<float>(0x7F800000u),
                      std::bit_cast<float>(0x7FC00000u),
                      std::bit_cast<float>(1u),
                      std::bit_cast<float>(0x7F7FFFFFu)};
  std::memcpy(s.immediate, v, sizeof v);
  Golden(
      "LoadParameterRam param_ram_offset=0x8 immediate=[1, .5, 2.5e-1, -0, inf, nan, 1e-45, "
      "3.4028235e38]",
      FromStruct(s),
      "LoadParameterRam param_ram_offset=8 imm_ptr_select=0 "
      "immediate=[1,0.5,0.25,-0,f32:0x7F800000,f32:0x7FC00000,1e-45,3.4028235e+38]");
}

TEST(AsmGolden, MemsetRawBytesApplyLast) {
  D4_MR s{};
  s.header = Hdr(Opcode::Memset);
  s.reserved0[1] = 0x01;  // byte 13
  s.dst_element_count = 256;
  s.dtype = static_cast<uint8_t>(Dtype::UINT32);
  s.num_active_channels = 1;
  s.set_value = 0xFFFFFFFFu;
  // raw@63 overrides the high byte of dst num[3] after the field was set.
  s.dst = Tensor4D{127u * 0x40000u + 0x10u, {1, 0, 0, 0}, {64, 1, 1, 0x0501}};
  Golden(
      "Memset raw@63=5 dst_element_count=0x100 dtype=uint32 set_value=0xFFFFFFFF "
      "dst=sbuf[127]+0x10[64:1] n=1 raw@0xD=0x01",
      FromStruct(s),
      "Memset dst_element_count=256 dtype=uint32 num_active_channels=1 serialization_mode=0 "
      "set_value=4294967295 dst=sbuf[127]+0x10[64:1,1:0,1:0,1281:0] raw@13=0x01");
}

TEST(AsmGolden, TensorTensorBitvecAddressForms) {
  S3S3D3_TT s{};
  s.header = Hdr(Opcode::TensorTensorBitvec);
  s.in_dtypes = 0x8 | (0x3 << 4);
  s.out_dtype = static_cast<uint8_t>(Dtype::INT32);
  s.op = static_cast<uint8_t>(AluOp::BITWISE_AND);
  s.num_active_channels = 128;
  s.src0 = Tensor3D{0x80000003u, {1, 0, 0}, {16, 1, 1}};
  s.src1 = Tensor3D{0xA0000000u, {-1, 0, 0}, {16, 1, 1}};
  s.dst = Tensor3D{MakeAddress(Space::Sbuf, 20, 0x40, Generation::Maverick), {2, 0, 0}, {16, 1, 1}};
  Golden(
      "TensorTensorBitvec in_dtypes=int32,uint8 out_dtype=int32 op=bitwise_and n=128 "
      "src0=reg(3)[16:1] src1=addr:0xA0000000[16:-1] dst=sbuf[20]+64[16:2]",
      FromStruct(s),
      "TensorTensorBitvec in_dtypes=int32,uint8 out_dtype=int32 op=bitwise_and "
      "num_active_channels=128 src0=reg(3)[16:1,1:0,1:0] src1=addr:0xA0000000[16:-1,1:0,1:0] "
      "dst=sbuf[20]+0x40[16:2,1:0,1:0]",
      Generation::Maverick);
  // The same word is another partition on cayman (256 KiB partition stride).
  EXPECT_NE(Disassemble(FromStruct(s), kCay).find(" dst=sbuf[80]+0x40["), std::string::npos);
  // Words past SBUF (and PSUM) print raw; on maverick 0x2000010 is SBUF, not PSUM.
  EXPECT_EQ(AsmOne("Copy src=addr:0x9000000[1:1]", Generation::Maverick).as<S4D4_TR>().src.addr,
            0x9000000u);
  EXPECT_NE(Disassemble(AsmOne("Copy src=addr:0x9000000[1:1]", Generation::Maverick),
                        Generation::Maverick)
                .find("src=addr:0x09000000[1:1,"),
            std::string::npos);
  EXPECT_NE(Disassemble(AsmOne("Copy src=addr:0x2000010[1:1]", Generation::Maverick),
                        Generation::Maverick)
                .find("src=sbuf[32]+0x10[1:1,"),
            std::string::npos);
  EXPECT_NE(Disassemble(AsmOne("Copy src=addr:0x2400000[1:1]"), kCay).find("src=addr:0x02400000["),
            std::string::npos);
}

TEST(AsmGolden, ImmediateForms) {
  // Bitvec: hex value and a register; sources inferred.
  S3D3_TS s{};
  s.header = Hdr(Opcode::TensorScalarBitvec);
  s.src = Tensor3D{0, {1, 0, 0}, {8, 1, 1}};
  s.dst = Tensor3D{0x100, {1, 0, 0}, {8, 1, 1}};
  s.in_dtype = s.out_dtype = static_cast<uint8_t>(Dtype::UINT8);
  s.num_active_channels = 4;
  s.op0 = static_cast<uint8_t>(AluOp::BITWISE_XOR);
  s.imm0 = 0xFF;
  s.imm1_src = 2;
  s.imm1 = 7;
  Golden(
      "TensorScalarBitvec src=sbuf[0][8:1] dst=sbuf[0]+0x100[8:1] in_dtype=uint8 "
      "out_dtype=uint8 n=4 op0=bitwise_xor imm0=255 imm1=R7",
      FromStruct(s),
      "TensorScalarBitvec accumulator_cmd=idle src=sbuf[0]+0x0[8:1,1:0,1:0] in_dtype=uint8 "
      "out_dtype=uint8 num_active_channels=4 imm0_src=inst op0=bitwise_xor op1=bypass "
      "reverse_operands=none imm1_src=reg imm0=0xFF imm1=r7 dst=sbuf[0]+0x100[8:1,1:0,1:0]");

  // TensorScalarPtr*: source 0 is a pointer in the instruction; an address infers source 0.
  const Instruction p = AsmOne("TensorScalarPtrArith imm0=sbuf[2]+0x40 imm1=psum[0]+0x8");
  const S3D3_TS ps = p.as<S3D3_TS>();
  EXPECT_EQ(ps.imm0_src, 0);
  EXPECT_EQ(ps.imm1_src, 0);
  EXPECT_EQ(ps.imm0, 0x80040u);
  EXPECT_EQ(ps.imm1, 0x2000008u);
  EXPECT_NE(Disassemble(p, kCay).find("imm0_src=inst"), std::string::npos);
  EXPECT_NE(Disassemble(p, kCay).find("imm0=sbuf[2]+0x40 imm1=psum[0]+0x8"), std::string::npos);

  // Explicit sources are never overridden by the value form.
  const S3D3_TS e =
      AsmOne("TensorScalarArith imm0_src=reg imm0=2.0 imm1_src=ptr imm1=r3").as<S3D3_TS>();
  EXPECT_EQ(e.imm0_src, 2);
  EXPECT_EQ(e.imm0, 0x40000000u);
  EXPECT_EQ(e.imm1_src, 1);
  EXPECT_EQ(e.imm1, 3u);
  // ...and they print by the source: a register slot holding 2.0f is raw bits, a pointer slot
  // holding 3 is an address.
  const std::string d =
      Disassemble(AsmOne("TensorScalarArith imm0_src=reg imm0=2.0 imm1_src=ptr imm1=r3"), kCay);
  EXPECT_NE(d.find("imm0=0x40000000 imm1=sbuf[0]+0x3"), std::string::npos) << d;

  // Arith values: a decimal integer is an fp32, hex is raw bits, negative ints in bitvec wrap.
  EXPECT_EQ(AsmOne("TensorScalarArith imm0=3").as<S3D3_TS>().imm0, 0x40400000u);
  EXPECT_EQ(AsmOne("TensorScalarArith imm0=0x3").as<S3D3_TS>().imm0, 3u);
  EXPECT_EQ(AsmOne("TensorScalarArith imm0=-0").as<S3D3_TS>().imm0, 0x80000000u);
  EXPECT_EQ(AsmOne("TensorScalarArith imm0=f32:0x7FC00001").as<S3D3_TS>().imm0, 0x7FC00001u);
  EXPECT_EQ(AsmOne("TensorScalarBitvec imm0=-5").as<S3D3_TS>().imm0, 0xFFFFFFFBu);
  EXPECT_EQ(AsmOne("TensorScalarBitvec imm0=1.5").as<S3D3_TS>().imm0, 0x3FC00000u);
  // The S2_BN pointer takes an address, a register or raw bits.
  const S2_BN pl = AsmOne("BatchNormParamLoad imm0_ptr=r9").as<S2_BN>();
  EXPECT_EQ(pl.imm0_src, 2);
  EXPECT_EQ(pl.imm0_ptr, 9u);
  EXPECT_EQ(AsmOne("BatchNormParamLoad imm0_ptr=sbuf[1]+0").as<S2_BN>().imm0_src, 1);
  EXPECT_EQ(AsmOne("BatchNormParamLoad imm0_ptr=0x1234").as<S2_BN>().imm0_src, 0);
}

TEST(AsmGolden, HeaderAndEventEscapes) {
  Instruction inst = MakeInstruction(Opcode::Copy);
  inst.bytes[1] = 0x11;  // word_len
  inst.bytes[2] = 0x02;  // unnamed debug command
  inst.bytes[4] = 0x81;  // register-compare wait form
  inst.bytes[5] = 3;
  inst.bytes[6] = 0;  // NONE with a nonzero index
  inst.bytes[7] = 9;
  const std::string text = Disassemble(inst, kCay);
  EXPECT_EQ(text.substr(0, text.find(" src=")),
            "Copy word_len=0x11 debug=0x02 wait=0x81:3 update=NONE:9");
  EXPECT_EQ(AsmOne(text), inst);

  // A listed-but-unsupported opcode has no fields: its payload is raw bytes.
  Instruction e = MakeInstruction(Opcode::Exponential);
  e.bytes[12] = 0xAB;
  e.bytes[63] = 0x01;
  EXPECT_EQ(Disassemble(e, kCay), "Exponential raw@12=0xAB raw@63=0x01");
  EXPECT_EQ(AsmOne("EXPONENTIAL raw@12=0xab raw@63=1"), e);
  EXPECT_EQ(AsmOne("opcode:0x30 raw@12=171 raw@63=1"), e);

  // An undecodable record prints, but does not assemble.
  Instruction bad;
  bad.bytes[1] = 0x10;
  bad.bytes[20] = 7;
  EXPECT_EQ(Disassemble(bad, kCay), "opcode:0x00 raw@20=0x07");
  auto r = Assemble(Disassemble(bad, kCay), kCay);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not listed"), std::string::npos) << r.status();
}

TEST(AsmStream, LinesCommentsAndBlankLines) {
  const char* text =
      "# a program\r\n"
      "\n"
      "   Copy n=1 src=sbuf[0]+0[4:1] dst=sbuf[0]+0x10[4:1]   // trailing comment\r\n"
      "\t\n"
      "EngineNop\n"
      "Memset dtype=fp32 n=2 dst=psum[0]+0[1:1]";
  auto r = Assemble(text, kCay);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].opcode(), Opcode::Copy);
  EXPECT_EQ((*r)[1], MakeInstruction(Opcode::EngineNop));
  EXPECT_EQ((*r)[2].as<D4_MR>().dst.addr, kPsumBase);
  const std::string dis = DisassembleStream(*r, kCay);
  EXPECT_EQ(std::count(dis.begin(), dis.end(), '\n'), 3);
  EXPECT_EQ(dis.back(), '\n');
  EXPECT_EQ(dis.substr(dis.find('\n') + 1, dis.find('\n', dis.find('\n') + 1) - dis.find('\n') - 1),
            "EngineNop param_ram_offset=0 imm_ptr_select=0 immediate=[0,0,0,0,0,0,0,0]");
  auto again = Assemble(dis, kCay);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *r);
  // Empty input is an empty program.
  auto empty = Assemble("", kCay);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(DisassembleStream({}, kCay), "");
}

// ---------------------------------------------------------------------------------------------
// .recip_table

TEST(AsmDirective, RecipTable) {
  auto r = Assemble("  .recip_table   # Parameter RAM = 1/(k+1)\n", kCay);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 32u);
  for (int i = 0; i < 32; ++i) {
    const Instruction& inst = (*r)[i];
    ASSERT_EQ(inst.opcode(), Opcode::LoadParameterRam);
    const CTRL_IM c = inst.as<CTRL_IM>();
    EXPECT_EQ(c.header.inst_word_len, 0x10);
    EXPECT_EQ(c.param_ram_offset, 8 * i);
    EXPECT_EQ(c.imm_ptr_select, 0);
    for (int j = 0; j < 8; ++j) {
      const int k = 8 * i + j;
      EXPECT_EQ(c.immediate[j], static_cast<float>(1.0 / (k + 1))) << "entry " << k;
    }
  }
  const CTRL_IM first = (*r)[0].as<CTRL_IM>();
  EXPECT_EQ(std::bit_cast<uint32_t>(first.immediate[0]), 0x3F800000u);                   // 1
  EXPECT_EQ(std::bit_cast<uint32_t>(first.immediate[2]), 0x3EAAAAABu);                   // 1/3
  EXPECT_EQ(std::bit_cast<uint32_t>((*r)[31].as<CTRL_IM>().immediate[7]), 0x3B800000u);  // 1/256
  EXPECT_EQ(Disassemble((*r)[0], kCay),
            "LoadParameterRam param_ram_offset=0 imm_ptr_select=0 "
            "immediate=[1,0.5,0.33333334,0.25,0.2,0.16666667,0.14285715,0.125]");
  // The directive mixes with instructions, in order.
  auto mixed = Assemble("EngineNop\n.RECIP_TABLE\nEngineNop", kCay);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->size(), 34u);
  EXPECT_EQ((*mixed)[33].opcode(), Opcode::EngineNop);
}

// ---------------------------------------------------------------------------------------------
// Round trips over random records.

uint32_t RandomAddress(std::mt19937& rng, Generation gen) {
  const Geometry& geo = GeometryOf(gen);
  switch (rng() % 6) {
    case 0:
    case 1:
      return MakeAddress(Space::Sbuf, rng() % 128, rng() % geo.sbuf_partition_stride, gen);
    case 2:
      if (geo.psum_size != 0)
        return MakeAddress(Space::Psum, rng() % 128, rng() % geo.psum_partition_stride, gen);
      return 0x2000000u + rng() % 0x400000;  // PSUM range on a generation without PSUM
    case 3:
      return MakeRegisterAddress(static_cast<uint8_t>(rng() % 64));
    case 4: {  // other markers, malformed register forms
      static constexpr uint32_t kMarkers[] = {0x20, 0x40, 0x80, 0xA0, 0xC0, 0x1F, 0x60};
      return (kMarkers[rng() % 7] << 24) | (rng() & 0xFFFFFF);
    }
    default:
      return static_cast<uint32_t>(rng());
  }
}

void Put(uint8_t* p, uint32_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t RandomF32(std::mt19937& rng) {
  static constexpr float kNice[] = {0.0f,  -0.0f, 1.0f, 1.5f,          256.0f,         -3.25f,
                                    1e-7f, 1e30f, 0.1f, 3.4028235e38f, 1.17549435e-38f};
  switch (rng() % 4) {
    case 0:
      return std::bit_cast<uint32_t>(kNice[rng() % std::size(kNice)]);
    case 1:
      return 0x7F800000u | (rng() & 0x807FFFFFu);  // inf / nan with random payload
    case 2:
      return rng() & 0x807FFFFFu;  // zero / subnormal
    default:
      return static_cast<uint32_t>(rng());
  }
}

// A random record of opcode `op`: bytes 1..63 random; in structured mode (half the time) fields
// are steered towards their well-formed forms so that every print form is exercised.
Instruction RandomRecord(const OpcodeInfo& info, Generation gen, std::mt19937& rng) {
  Instruction inst;
  uint8_t* b = inst.bytes.data();
  for (int i = 0; i < kRecordBytes; ++i) b[i] = static_cast<uint8_t>(rng());
  b[0] = static_cast<uint8_t>(info.opcode);
  if (rng() % 2 == 0) return inst;

  b[1] = rng() % 8 ? 0x10 : b[1];
  static constexpr uint8_t kDebug[] = {0, 0, 0, 1, 3, 5, 7, 9};
  b[2] = rng() % 8 ? kDebug[rng() % 8] : b[2];
  b[3] = rng() % 2 ? 0 : b[3];
  static constexpr uint8_t kWait[] = {0, 0, 1, 5, 6, 15, 0x81};
  static constexpr uint8_t kUpdate[] = {0, 0, 3, 9, 25, 17, 0x83};
  b[4] = kWait[rng() % 7];
  b[5] = b[4] == 0 ? 0 : rng() % 32;
  b[6] = kUpdate[rng() % 7];
  b[7] = b[6] == 0 ? 0 : rng() % 32;
  if (rng() % 2) Put(b + 8, 0, 4);
  if (info.tier == Tier::Unsupported) {
    for (int i = 12; i < kRecordBytes; ++i)
      if (rng() % 2) b[i] = 0;
    return inst;
  }
  // Sources first: the forms of the immediates depend on them.
  for (const FieldInfo& f : FieldsOf(info.strct)) {
    uint8_t* p = b + f.offset;
    if (f.kind == FieldKind::ImmSrc && rng() % 8) *p = rng() % 3;
    if (f.kind == FieldKind::ImmSrcPair && rng() % 8) *p = (rng() % 3) | ((rng() % 3) << 4);
  }
  for (const FieldInfo& f : FieldsOf(info.strct)) {
    uint8_t* p = b + f.offset;
    switch (f.kind) {
      case FieldKind::Reserved:
        if (rng() % 4) std::memset(p, 0, f.size);
        break;
      case FieldKind::F32:
        Put(p, RandomF32(rng), 4);
        break;
      case FieldKind::F32x8:
        for (int i = 0; i < 8; ++i) Put(p + 4 * i, RandomF32(rng), 4);
        break;
      case FieldKind::Dtype:
        if (rng() % 4) *p = rng() % 16;
        break;
      case FieldKind::AluOp:
        if (rng() % 4) *p = rng() % 2 ? rng() % 0x25 : 0xC4 + rng() % 30;
        break;
      case FieldKind::Reverse:
      case FieldKind::AccumCmd:
      case FieldKind::Subdim:
        if (rng() % 4) *p = rng() % 6;
        break;
      case FieldKind::Tensor1D:
      case FieldKind::Tensor2D:
      case FieldKind::Tensor3D:
      case FieldKind::Tensor4D:
        Put(p, RandomAddress(rng, gen), 4);
        break;
      case FieldKind::ImmPointer:
      case FieldKind::ImmValue: {
        const uint8_t src = ImmSourceOf(f, b);
        if (src == 2 && rng() % 4)
          Put(p, rng() % 64, 4);
        else if (src == 1 && rng() % 4)
          Put(p, RandomAddress(rng, gen), 4);
        else if (src == 0 && rng() % 2)
          Put(p, RandomF32(rng), 4);
        break;
      }
      default:
        break;
    }
  }
  return inst;
}

TEST(AsmRoundTrip, RandomRecordsOfEveryOpcodeAndGeneration) {
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  ASSERT_GT(n, 60);
  std::mt19937 rng(20240607);
  std::string seen;  // a sample of every printed line, to check that all forms were exercised
  int records = 0;
  for (Generation gen : kAllGenerations) {
    for (int o = 0; o < n; ++o) {
      for (int k = 0; k < 150; ++k) {
        const Instruction x = RandomRecord(all[o], gen, rng);
        const std::string text = Disassemble(x, gen);
        ASSERT_EQ(text.find('\n'), std::string::npos);
        auto back = Assemble(text, gen);
        ASSERT_TRUE(back.ok()) << back.status() << "\n  text: " << text;
        ASSERT_EQ(back->size(), 1u);
        ASSERT_EQ(back->front(), x) << "text: " << text << "\nwant:\n"
                                    << Bytes(x) << "got:\n"
                                    << Bytes(back->front());
        ASSERT_EQ(Disassemble(back->front(), gen), text);  // canonical: dis(asm(dis(x))) == dis(x)
        ++records;
        if (seen.size() < (1u << 24)) seen += text + "\n";
      }
    }
  }
  EXPECT_EQ(records, 4 * n * 150);
  for (const char* form : {"sbuf[",       "psum[",
                           "reg(",        "addr:0x",
                           "f32:0x",      "=r",
                           "raw@",        "wait=SEM",
                           "wait=0x",     "update=SEM",
                           "debug=START", "debug=0x",
                           "hint=",       "semval=",
                           "word_len=0x", "dtype:0x",
                           "alu:0x",      "=inst",
                           "=ptr",        "=reg",
                           "imm_srcs=",   "reverse_operands=both",
                           "op_dim=xyz",  "accumulator_cmd=zero_accumulate",
                           ",-",          "=-0 ",
                           "e-",          "e+",
                           "in_dtypes=",  "Exponential raw@",
                           "immediate=["})
    EXPECT_NE(seen.find(form), std::string::npos) << "form never printed: " << form;
}

TEST(AsmRoundTrip, WholeStreamsAndOtherGenerations) {
  std::mt19937 rng(7);
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  for (Generation gen : kAllGenerations) {
    std::vector<Instruction> prog;
    for (int i = 0; i < 300; ++i) prog.push_back(RandomRecord(all[rng() % n], gen, rng));
    const std::string text = DisassembleStream(prog, gen);
    auto back = Assemble(text, gen);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, prog);
  }
  // Addresses are per generation: sbuf[100]+0x80000 exists only on maverick (1 MiB partitions).
  EXPECT_FALSE(Assemble("Copy src=sbuf[100]+0x80000[1:1]", kCay).ok());
  const Instruction m = AsmOne("Copy src=sbuf[100]+0x80000[1:1]", Generation::Maverick);
  EXPECT_EQ(m.as<S4D4_TR>().src.addr, 100u * 0x100000u + 0x80000u);
}

// ---------------------------------------------------------------------------------------------
// Input conveniences.

TEST(AsmInput, AliasesOrderAndDefaults) {
  const Instruction a =
      AsmOne("copy dst=sbuf[1]+0x20[4:1] n=16 src=sbuf[1][2:1,2:2] in_dtype=bf16 out_dtype=bf16");
  const Instruction b = AsmOne(
      "Copy in_dtype=BFLOAT16 out_dtype=bf16 num_active_channels=0x10 "
      "src=sbuf[1]+0x0[ 2 : 1 , 2 : 2 , 1 : 0 , 1 : 0 ] dst=sbuf[1]+32[4:1,1:0,1:0,1:0]");
  EXPECT_EQ(a, b);
  const S4D4_TR t = a.as<S4D4_TR>();
  EXPECT_EQ(t.src.num[2], 1);
  EXPECT_EQ(t.src.step[2], 0);
  EXPECT_EQ(t.src.step[1], 2);
  EXPECT_EQ(t.op, 0);
  EXPECT_EQ(t.num_active_channels, 16);
  EXPECT_EQ(t.header.inst_word_len, 0x10);
  // `[]` keeps every dimension at num 1, step 0.
  EXPECT_EQ(AsmOne("Copy src=sbuf[0]+0[]").as<S4D4_TR>().src.num[0], 1);
  // Unknown enum values are plain numbers.
  const S3D3_TS u =
      AsmOne("TensorScalarArith reverse_operands=7 accumulator_cmd=0x20 imm0_src=9 op0=alu:0x25")
          .as<S3D3_TS>();
  EXPECT_EQ(u.reverse_operands, 7);
  EXPECT_EQ(u.accumulator_cmd, 0x20);
  EXPECT_EQ(u.imm0_src, 9);
  EXPECT_EQ(u.op0, 0x25);
  EXPECT_EQ(AsmOne("Copy in_dtype=dtype:0x13 out_dtype=19").as<S4D4_TR>().out_dtype, 0x13);
}

// ---------------------------------------------------------------------------------------------
// Errors.

struct BadCase {
  const char* text;
  std::vector<const char*> want;  // substrings of the message
  Generation gen = Generation::Cayman;
};

TEST(AsmErrors, LineColumnAndExpectation) {
  const BadCase cases[] = {
      {"BatchNormStats2 in_dtype=fp33",
       {"line 1, column 26: in_dtype: expected a dtype name (fp32, bf16, fp16,", "got 'fp33'"}},
      {"\n\n  Foo x=1", {"line 3, column 3:", "expected an opcode name", "got 'Foo'"}},
      {"Copy n=300", {"line 1, column 8: n: expected an integer 0..255", "got '300'"}},
      {"Copy src=sbuf[0]+0x100[4:1", {"column 27:", "expected ',' or ']'", "got end of line"}},
      {"Copy src=sbuf[0]+0x100[4:1,", {"column 28:", "expected a dim count", "end of line"}},
      {"Copy src=sbuf[200]+0[1:1]",
       {"column 15: src: expected a partition number 0..127", "got '200'"}},
      {"Copy src=sbuf[0]+0x40000[1:1]",
       {"column 18: src: expected an offset 0..0x3FFFF within the partition", "'0x40000'"}},
      {"Copy src=psum[0]+0[1:1]",
       {"column 10: src: psum does not exist on maverick"},
       Generation::Maverick},
      {"Copy src=0x100[1:1]",
       {"column 10: src: expected an address (sbuf[P]+0xOFF", "got '0x100'"}},
      {"Copy src=sbuf[0]+0x10", {"column 22:", "expected '[' and the dims", "end of line"}},
      {"Copy nosuch=1",
       {"column 6:", "unknown field 'nosuch' for Copy (S4D4_TR)", "src, in_dtype,"}},
      {"Copy n=1 num_active_channels=2",
       {"column 10: num_active_channels: duplicate field (first given at column 6)"}},
      {"Copy num_active_channels=1 n=2",
       {"column 28: n: duplicate field (first given at column 6)"}},
      {"EngineNop n=1",
       {"column 11: unknown field 'n' for EngineNop (CTRL_IM); expected one of "
        "param_ram_offset, imm_ptr_select, immediate,"}},
      {"Copy op=frobnicate", {"column 9: op: expected an ALU op name", "got 'frobnicate'"}},
      {"BatchNormStats2 even_count=1e50",
       {"column 28: even_count: expected an fp32 value", "'1e50'"}},
      {"BatchNormStats2 even_count=0x3F800000",
       {"expected an fp32 value (1.5, -0", "got '0x3F800000'"}},
      {"TensorScalarArith imm0=r64", {"column 24: imm0: expected a register r0..r63"}},
      {"Copy src=sbuf[0]+0[1:1,1:0,1:0,1:0,1:0]",
       {"column 36: src: expected ']': a Tensor4D has 4 dims"}},
      {"Copy src=sbuf[0]+0[1:40000]", {"expected a dim step -32768..32767", "'40000'"}},
      {".recip_table 3", {"column 14:", "takes no arguments", "got '3'"}},
      {".foo", {"column 1:", "expected a directive (.recip_table)", "got '.foo'"}},
      {"Copy raw@0=1", {"column 10:", "expected a byte offset 1..63 after raw@"}},
      {"Copy raw@13=0x100", {"column 13: raw@13: expected an integer 0..255", "'0x100'"}},
      {"Copy reserved0=1", {"column 6: reserved0: reserved field"}},
      {"Exponential src=sbuf[0][1:1]", {"unknown field 'src': Exponential is not supported"}},
      {"Copy wait=SEM_EQ_IMM", {"column 21: wait: expected ':' and an index"}},
      {"Copy wait=SEM_EQ:1", {"column 11: wait: expected a wait mode (NONE, SEM_EQ_IMM,"}},
      {"opcode:0x00", {"column 1:", "opcode 0x00 is not listed"}},
      {"Copy\tn=1x", {"column 8:", "got '1x'"}},
      {"Copy n=1,", {"column 9:", "expected whitespace or end of line after a value"}},
      {"Copy n", {"column 7: n: expected '='", "end of line"}},
      {"Copy n=", {"column 8:", "expected an integer 0..255", "got end of line"}},
      {"Copy=1", {"column 5: expected whitespace after the opcode", "got '='"}},
      {"LoadParameterRam immediate=[1,2,3,4,5,6,7,8,9]",
       {"column 45: immediate: expected ']' after 8 fp32 values"}},
      {"LoadParameterRam immediate=[1,2", {"expected ',' or ']' in the list", "end of line"}},
      {"TensorTensorArith in_dtypes=fp32", {"expected ',' and the second dtype", "end of line"}},
      {"TensorTensorArith in_dtypes=fp32,dtype:0x10",
       {"with a code 0..15 in a pair", "'dtype:0x10'"}},
      {"Copy n=99999999999999999999999999999", {"expected an integer 0..255"}},
      {"Copy \x01\xff", {"column 6:", "got '\\x01\\xFF'"}},
      {"TensorScalarArith imm0=sbuf", {"expected an immediate", "got 'sbuf'"}},
      {"TensorScalarArith imm0=reg(64)", {"column 28: imm0: expected a register number 0..63"}},
      {"EngineNop semval=4294967296", {"column 18: semval: expected an integer 0..4294967295"}},
      {"Copy\n.recip_table\nCopy src=sbuf[0]+0[1;1]",
       {"line 3, column 21:", "expected ':' between"}},
  };
  for (const BadCase& c : cases) {
    auto r = Assemble(c.text, c.gen);
    ASSERT_FALSE(r.ok()) << "assembled: " << c.text;
    EXPECT_EQ(ErrorKindOf(r.status()), ErrorKind::Syntax) << r.status();
    const std::string msg(r.status().message());
    EXPECT_EQ(msg.rfind("syntax: line ", 0), 0u) << msg;
    for (const char* w : c.want)
      EXPECT_NE(msg.find(w), std::string::npos)
          << "text: " << c.text << "\n  msg: " << msg << "\n  missing: " << w;
  }
}

// Garbage never crashes: random bytes, random printable text, and random mutations of valid
// text either fail with a syntax error, or assemble to records that round-trip.
TEST(AsmErrors, GarbageAndMutationsNeverCrash) {
  std::mt19937 rng(99);
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  int errors = 0, total = 0;
  auto check = [&](const std::string& text, Generation gen) {
    ++total;
    auto r = Assemble(text, gen);
    if (!r.ok()) {
      ++errors;
      EXPECT_EQ(ErrorKindOf(r.status()), ErrorKind::Syntax) << r.status();
      EXPECT_NE(r.status().message().find("line "), std::string::npos) << r.status();
      return;
    }
    const std::string dis = DisassembleStream(*r, gen);
    auto again = Assemble(dis, gen);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << dis;
    EXPECT_EQ(*again, *r) << text;
  };
  static constexpr char kAlphabet[] =
      "abcdefxyz0123456789 \t=[](),:+-.#/@_rsbufpsumaddrregf32nanifxXEe";
  for (int i = 0; i < 3000; ++i) {
    const Generation gen = kAllGenerations[i % 4];
    std::string text;
    const int len = static_cast<int>(rng() % 80);
    if (i % 3 == 0) {
      for (int k = 0; k < len; ++k) text += static_cast<char>(rng() % 256);
    } else if (i % 3 == 1) {
      text = std::string(all[rng() % n].name) + " ";
      for (int k = 0; k < len; ++k) text += kAlphabet[rng() % (sizeof kAlphabet - 1)];
    } else {
      text = Disassemble(RandomRecord(all[rng() % n], gen, rng), gen);
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const size_t at = rng() % text.size();
        switch (rng() % 4) {
          case 0:
            text.erase(at, 1 + rng() % 6);
            break;
          case 1:
            text.insert(at, 1, kAlphabet[rng() % (sizeof kAlphabet - 1)]);
            break;
          case 2:
            text[at] = static_cast<char>(rng() % 256);
            break;
          default:
            text = text.substr(0, at);
            break;  // truncation: unterminated brackets
        }
      }
    }
    check(text, gen);
  }
  // Extremes.
  check(std::string(100000, '['), kCay);
  check("Copy src=" + std::string(100000, '9'), kCay);
  check("Copy src=sbuf[" + std::string(5000, '0') + "1]+0[1:1]", kCay);
  check(std::string("\0\0\0", 3), kCay);
  EXPECT_GT(errors, total * 8 / 10) << errors << " of " << total;
}

// ---------------------------------------------------------------------------------------------
// The example programs assemble and round-trip.

TEST(AsmExamples, AssembleAndRoundTrip) {
  const std::filesystem::path dir =
      std::filesystem::path(__FILE__).parent_path().parent_path() / "examples" / "asm";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".s") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = Assemble(ss.str(), kCay);
    ASSERT_TRUE(r.ok()) << entry.path() << ": " << r.status();
    EXPECT_FALSE(r->empty()) << entry.path();
    auto again = Assemble(DisassembleStream(*r, kCay), kCay);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *r) << entry.path();
  }
  EXPECT_GE(files, 3);
}

}  // namespace
}  // namespace dvejit
