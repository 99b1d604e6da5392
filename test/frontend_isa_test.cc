#include <gtest/gtest.h>

#include "frontend/address.h"
#include "frontend/diag.h"
#include "frontend/fields.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"
#include "frontend/operands.h"

namespace dvejit {
namespace {

TEST(Isa, OpcodeTableRoundTrips) {
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  EXPECT_EQ(n, 36 + 28);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(LookupOpcode(static_cast<uint8_t>(all[i].opcode)), &all[i]);
    EXPECT_EQ(ParseOpcodeName(all[i].name), all[i].opcode);
  }
  EXPECT_EQ(LookupOpcode(0xFF), nullptr);
  EXPECT_EQ(LookupOpcode(0x00), nullptr);
  EXPECT_EQ(InfoOf(Opcode::BatchNormStats2).strct, StructKind::S4D2_BN);
  EXPECT_TRUE(InfoOf(Opcode::BatchNormParamLoad).deprecated);
  EXPECT_EQ(InfoOf(Opcode::TensorScalarCacheReduce).tier, Tier::B);
  EXPECT_EQ(InfoOf(Opcode::Exponential).tier, Tier::Unsupported);
}

TEST(Isa, GeneralArithCountsPerGeneration) {
  auto count = [](Generation g, uint32_t flag) {
    int n = 0;
    for (int c = 0; c < 256; ++c) n += AluOpHas(static_cast<uint8_t>(c), g, flag);
    return n;
  };
  EXPECT_EQ(count(Generation::Sunda, GAR), 17);
  EXPECT_EQ(count(Generation::Cayman, GAR), 17);
  EXPECT_EQ(count(Generation::Mariana, GAR), 21);
  EXPECT_EQ(count(Generation::Maverick, GAR), 22);
  EXPECT_EQ(count(Generation::Cayman, VINT), 26);
  EXPECT_EQ(count(Generation::Cayman, GBV), 9);
  EXPECT_EQ(count(Generation::Cayman, BV), 10);
  EXPECT_EQ(count(Generation::Cayman, DVEINT), 15);
  // SUNDA has only three ops of the integer band.
  EXPECT_EQ(count(Generation::Sunda, INT), 3);
  EXPECT_EQ(count(Generation::Cayman, INT), 30);
}

TEST(Isa, DtypeTable) {
  EXPECT_EQ(DtypeSize(Dtype::BFLOAT16), 2);
  EXPECT_EQ(DtypeSize(Dtype::FP8_EXP4), 1);
  EXPECT_EQ(DtypeSize(Dtype::UINT64), 0);
  EXPECT_FALSE(IsValidDtype(0x0, true));
  EXPECT_FALSE(IsValidDtype(0xB, false));
  EXPECT_TRUE(IsValidDtype(0xB, true));
  EXPECT_FALSE(IsValidDtype(0x10, true));
  EXPECT_EQ(ParseDtypeName("bf16"), Dtype::BFLOAT16);
  EXPECT_EQ(ParseDtypeName("FP32"), Dtype::FP32);
  EXPECT_EQ(DtypeName(0x13), "dtype(0x13)");
}

TEST(Fields, EveryStructCoversBytes12To63Once) {
  for (int s = 0; s <= static_cast<int>(StructKind::CTRL_IM); ++s) {
    int covered[64] = {};
    for (const FieldInfo& f : FieldsOf(static_cast<StructKind>(s)))
      for (int b = f.offset; b < f.offset + f.size; ++b) covered[b]++;
    for (int b = 12; b < 64; ++b)
      EXPECT_EQ(covered[b], 1) << StructName(static_cast<StructKind>(s)) << " byte " << b;
  }
}

// Element counts are exact up to (2^16 - 1)^4, which needs all 64 bits (validation compares them
// and the runtime's element limit reads them; a signed product overflowed there once).
TEST(Operands, PatternCountIsExact) {
  Pattern p;
  p.dims = 4;
  for (uint16_t& n : p.num) n = 65535;
  EXPECT_EQ(p.Count(), 18445618199572250625ull);
  p.num[3] = 65534;
  EXPECT_EQ(p.Count(), 18445618199572250625ull - 65535ull * 65535 * 65535);
  p.dims = 0;
  EXPECT_EQ(p.Count(), 1u);
}

TEST(Address, ModesAndPlaces) {
  EXPECT_EQ(AddrModeOf(0x00000100), AddrMode::Immediate);
  EXPECT_EQ(AddrModeOf(0x80000005), AddrMode::Register);
  EXPECT_EQ(AddrModeOf(0x80000040), AddrMode::Invalid);
  EXPECT_EQ(AddrModeOf(0x80000105), AddrMode::Invalid);
  EXPECT_EQ(AddrModeOf(0x40000000), AddrMode::ShapeRegister);
  EXPECT_EQ(AddrModeOf(0xC0000000), AddrMode::AddrShapeRegister);
  EXPECT_EQ(AddrModeOf(0x20000000), AddrMode::Indirect);
  EXPECT_EQ(AddrModeOf(0x60000000), AddrMode::Invalid);
  auto p = ResolveImmediate(MakeAddress(Space::Sbuf, 5, 0x100, Generation::Cayman),
                            Generation::Cayman);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->space, Space::Sbuf);
  EXPECT_EQ(p->partition, 5u);
  EXPECT_EQ(p->offset, 0x100u);
  p = ResolveImmediate(0x2000000 + 3 * 32768 + 8, Generation::Cayman);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->space, Space::Psum);
  EXPECT_EQ(p->partition, 3u);
  EXPECT_FALSE(ResolveImmediate(0x2000000 + 8, Generation::Maverick).has_value() &&
               ResolveImmediate(0x2000000 + 8, Generation::Maverick)->space == Space::Psum);
  EXPECT_FALSE(ResolveImmediate(0x2400000, Generation::Cayman));
}

TEST(Decode, StreamErrors) {
  std::vector<uint8_t> bytes(65, 0);
  auto r = DecodeStream(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrorKindOf(r.status()), ErrorKind::Decode);
  bytes.resize(128);
  bytes[0] = 0x61;
  bytes[64] = 0xFF;
  r = DecodeStream(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("#1 @0x40"), std::string::npos) << r.status();
  bytes[64] = 0x30;  // listed but unsupported: decodes
  r = DecodeStream(bytes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[1].opcode(), Opcode::Exponential);
  EXPECT_EQ(EncodeStream(*r), bytes);
}

}  // namespace
}  // namespace dvejit
