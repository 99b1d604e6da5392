// Tests of the validator (validation.md) and of the valid-instruction generator: golden
// encodings, one negative case per predicate per opcode, generation differences, validation
// order, and generator/mutation property tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "frontend/address.h"
#include "frontend/diag.h"
#include "frontend/fields.h"
#include "frontend/generator.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"
#include "frontend/operands.h"
#include "frontend/strcat.h"
#include "frontend/structs.h"
#include "frontend/validate.h"

namespace dvejit {
namespace {

constexpr Generation kSunda = Generation::Sunda;
constexpr Generation kCayman = Generation::Cayman;
constexpr Generation kMariana = Generation::Mariana;
constexpr Generation kMaverick = Generation::Maverick;

constexpr uint8_t D(Dtype d) { return static_cast<uint8_t>(d); }
constexpr uint8_t A(AluOp o) { return static_cast<uint8_t>(o); }
constexpr uint8_t Pair(Dtype lo, Dtype hi) { return static_cast<uint8_t>(D(lo) | D(hi) << 4); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float F32(uint32_t b) { return std::bit_cast<float>(b); }

// ---- raw record access ----
uint32_t U32At(const Instruction& i, int off) {
  uint32_t v;
  std::memcpy(&v, &i.bytes[off], 4);
  return v;
}
void SetU32(Instruction& i, int off, uint32_t v) { std::memcpy(&i.bytes[off], &v, 4); }
uint16_t U16At(const Instruction& i, int off) {
  uint16_t v;
  std::memcpy(&v, &i.bytes[off], 2);
  return v;
}
void SetU16(Instruction& i, int off, uint16_t v) { std::memcpy(&i.bytes[off], &v, 2); }

std::string ToHex(const Instruction& inst) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : inst.bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}
// 128 hex digits; spaces and '|' are ignored.
std::vector<uint8_t> FromHex(std::string_view hex) {
  std::vector<uint8_t> out;
  int nibble = -1;
  for (char c : hex) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else continue;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<uint8_t>(nibble << 4 | v));
      nibble = -1;
    }
  }
  return out;
}

template <int N>
TensorPattern<N> T(uint32_t addr, std::array<int16_t, N> step, std::array<uint16_t, N> num) {
  TensorPattern<N> t{};
  t.addr = addr;
  for (int d = 0; d < N; ++d) {
    t.step[d] = step[d];
    t.num[d] = num[d];
  }
  return t;
}

template <typename S, typename Fn>
Instruction Build(Opcode op, Fn fill) {
  Instruction inst = MakeInstruction(op);
  S s = inst.as<S>();
  fill(s);
  StoreTo(s, inst.bytes.data());
  return inst;
}

// Immediate SBUF addresses in partition 0 are the same word on every generation.
constexpr uint32_t kSrcA = 0x0000, kSrcB = 0x1000, kDstA = 0x2000, kPtrA = 0x3000, kPtrB = 0x3004;

// ---- one hand-built valid record per tier A/B opcode (valid on every generation where the
// opcode exists; all operands in SBUF partition 0 unless stated) ----
Instruction Base(Opcode op) {
  switch (op) {
    case Opcode::TensorTensorArith:
      return Build<S3S3D3_TT>(op, [](S3S3D3_TT& s) {
        s.header.debug_cmd = 1;  // NOTIFY
        s.header.debug_hint = 0x5A;
        s.events = Events{5, 3, 3, 4, 7};  // SEM_GE_IMM #3, SEM_INC_READ #4, value 7
        s.in_dtypes = Pair(Dtype::FP32, Dtype::FP32);
        s.out_dtype = D(Dtype::FP32);
        s.op = A(AluOp::ADD);
        s.num_active_channels = 64;
        s.src0 = T<3>(kSrcA, {1, 16, 0}, {16, 4, 1});
        s.src1 = T<3>(kSrcB, {1, 16, 0}, {16, 4, 1});
        s.dst = T<3>(kDstA, {1, 16, 0}, {16, 4, 1});
      });
    case Opcode::TensorScalarArith:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.src = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.in_dtype = D(Dtype::FP32);
        s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 32;
        s.op0 = A(AluOp::MULT);
        s.op1 = A(AluOp::ADD);
        s.imm0 = Bits(2.0f);
        s.imm1 = Bits(1.0f);
        s.dst = T<3>(kDstA, {1, 0, 0}, {64, 1, 1});
      });
    case Opcode::TensorScalarPtrArith:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.src = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.in_dtype = D(Dtype::FP32);
        s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 32;
        s.op0 = A(AluOp::MULT);
        s.op1 = A(AluOp::ADD);
        s.imm0 = kPtrA;
        s.imm1 = kPtrB;
        s.dst = T<3>(kDstA, {1, 0, 0}, {64, 1, 1});
      });
    case Opcode::Copy:
    case Opcode::Cast:
    case Opcode::Reciprocal:
      return Build<S4D4_TR>(op, [op](S4D4_TR& s) {
        s.src = T<4>(kSrcA, {1, 0, 0, 0}, {32, 1, 1, 1});
        s.in_dtype = D(Dtype::FP32);
        s.out_dtype = D(op == Opcode::Cast ? Dtype::BFLOAT16 : Dtype::FP32);
        s.num_active_channels = 16;
        s.dst = T<4>(kDstA, {1, 0, 0, 0}, {32, 1, 1, 1});
      });
    case Opcode::Memset:
      return Build<D4_MR>(op, [](D4_MR& s) {
        s.dst_element_count = 32;
        s.dtype = D(Dtype::FP32);
        s.num_active_channels = 8;
        s.set_value = Bits(1.0f);
        s.dst = T<4>(kDstA, {1, 0, 0, 0}, {32, 1, 1, 1});
      });
    case Opcode::TensorScalarPtrMultiArith:
    case Opcode::TensorScalarPtrMultiBitvec:
      return Build<S4D4_TSM>(op, [op](S4D4_TSM& s) {
        const bool bv = op == Opcode::TensorScalarPtrMultiBitvec;
        s.src = T<4>(kSrcA, {1, 0, 0, 4}, {4, 1, 1, 2});  // W = 2
        s.in_dtype = s.out_dtype = D(bv ? Dtype::UINT16 : Dtype::FP32);
        s.num_active_channels = 4;
        s.op = bv ? A(AluOp::LOGICAL_SHIFT_LEFT) : A(AluOp::ADD);
        s.op_dim = static_cast<uint8_t>(TensorSubdim::XYZ);
        s.dst = T<4>(kDstA, {1, 0, 0, 0}, {8, 1, 1, 1});
      });
    case Opcode::TensorTensorBitvec:
      return Build<S3S3D3_TT>(op, [](S3S3D3_TT& s) {
        s.in_dtypes = Pair(Dtype::INT32, Dtype::INT32);
        s.out_dtype = D(Dtype::INT32);
        s.op = A(AluOp::BITWISE_AND);
        s.num_active_channels = 2;
        s.src0 = T<3>(kSrcA, {1, 0, 0}, {32, 1, 1});
        s.src1 = T<3>(kSrcB, {-1, 0, 0}, {32, 1, 1});
        s.dst = T<3>(kDstA, {2, 0, 0}, {16, 1, 2});
      });
    case Opcode::TensorScalarBitvec:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.src = T<3>(kSrcA, {1, 0, 0}, {32, 1, 1});
        s.in_dtype = s.out_dtype = D(Dtype::UINT32);
        s.num_active_channels = 8;
        s.op0 = A(AluOp::BITWISE_XOR);
        s.op1 = A(AluOp::BYPASS);
        s.imm0 = 0xFF;
        s.dst = T<3>(kDstA, {1, 0, 0}, {32, 1, 1});
      });
    case Opcode::TensorScalarPtrBitvec:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.src = T<3>(kSrcA, {1, 0, 0}, {32, 1, 1});
        s.in_dtype = s.out_dtype = D(Dtype::INT16);
        s.num_active_channels = 8;
        s.op0 = A(AluOp::BITWISE_OR);
        s.imm0 = kPtrA;
        s.imm1 = kPtrA + 2;
        s.dst = T<3>(kDstA, {1, 0, 0}, {32, 1, 1});
      });
    case Opcode::BatchNormStats:
    case Opcode::BatchNormStats2:
    case Opcode::TransposeBatchNormStats2:
    case Opcode::BatchNormAggregate:
    case Opcode::Max8:
    case Opcode::FindIndex8:
      return Build<S4D2_BN>(op, [op](S4D2_BN& s) {
        uint16_t src = 64, dst = 8;
        s.num_active_channels = 16;
        s.in_dtype = s.out_dtype = D(Dtype::FP32);
        switch (op) {
          case Opcode::BatchNormStats: src = 256, dst = 3, s.num_active_channels = 128; break;
          case Opcode::BatchNormStats2: src = 512, dst = 6; break;
          case Opcode::TransposeBatchNormStats2: dst = 6, s.num_active_channels = 32; break;
          case Opcode::BatchNormAggregate: src = 6, dst = 2; break;
          case Opcode::FindIndex8: s.out_dtype = D(Dtype::UINT32); break;
          default: break;
        }
        const bool stats = op == Opcode::BatchNormStats || op == Opcode::BatchNormStats2 ||
                           op == Opcode::TransposeBatchNormStats2;
        s.even_count = stats ? 64.0f : 0.0f;
        s.odd_count = stats ? 64.0f : 0.0f;
        s.src = T<4>(kSrcA, {1, 0, 0, 0}, {src, 1, 1, 1});
        s.dst = T<2>(kDstA, {1, 0}, {dst, 1});
      });
    case Opcode::BatchNormGradAccumulate:
      return Build<S3S3D1_BN>(op, [](S3S3D1_BN& s) {
        s.imm0 = kPtrA;
        s.src0 = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.src1 = T<3>(kSrcB, {1, 0, 0}, {64, 1, 1});
        s.dst = T<1>(kDstA, {1}, {3});
        s.imm1 = kPtrB;
        s.in_dtypes = Pair(Dtype::FP32, Dtype::FP32);
        s.immediate_dtype = D(Dtype::INVALID);  // means FP32
        s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 16;
      });
    case Opcode::BatchNormGradAccumulate2:
      return Build<S3S3D1_BN2>(op, [](S3S3D1_BN2& s) {
        s.imm0 = kPtrA;
        s.src0 = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.src1 = T<3>(kSrcB, {1, 0, 0}, {64, 1, 1});
        s.dst = T<1>(kDstA, {1}, {3});
        s.imm1 = kPtrB;
        s.in_dtypes = Pair(Dtype::FP32, Dtype::BFLOAT16);
        s.imm_out_dtypes = Pair(Dtype::FP32, Dtype::FP32);
        s.imm_srcs = 0x11;
        s.num_active_channels = 16;
      });
    case Opcode::BatchNormParamLoad:
      return Build<S2_BN>(op, [](S2_BN& s) {
        s.src = T<2>(kSrcA, {1, 0}, {3, 1});
        s.imm1 = Bits(128.0f);
        s.dtype = D(Dtype::FP32);
        s.num_active_channels = 16;
        s.imm0_ptr = kPtrA;
        s.imm0_src = 1;
      });
    case Opcode::MatchValueLoad:
    case Opcode::TensorScalarImmLdArith:
    case Opcode::TensorScalarImmLdBitvec:
      return Build<S2_BN>(op, [op](S2_BN& s) {
        s.src = T<2>(kSrcA, {1, 0}, {8, 1});
        s.dtype = D(op == Opcode::TensorScalarImmLdBitvec ? Dtype::INT32 : Dtype::FP32);
        s.num_active_channels = 8;
      });
    case Opcode::BatchNormParamLoad2:
      return Build<S2_BNPL2>(op, [](S2_BNPL2& s) {
        s.src = T<2>(kSrcA, {1, 0}, {2, 1});
        s.element_count = 256.0f;
        s.src_dtype = D(Dtype::FP32);
        s.immediate_dtype = D(Dtype::FP32);
        s.num_active_channels = 8;
        s.imm0_ptr = kPtrA;
        s.imm1_ptr = kPtrB;
        s.imm0_src = 1;
        s.imm1_src = 1;
      });
    case Opcode::BatchNormBackProp:
    case Opcode::CopyPredicated:
    case Opcode::CastPredicated:
      return Build<S3S3D3_TT>(op, [op](S3S3D3_TT& s) {
        switch (op) {
          case Opcode::BatchNormBackProp:
            s.in_dtypes = Pair(Dtype::FP32, Dtype::BFLOAT16);
            s.out_dtype = D(Dtype::FP32);
            break;
          case Opcode::CopyPredicated:
            s.in_dtypes = Pair(Dtype::UINT8, Dtype::FP32);
            s.out_dtype = D(Dtype::FP32);
            break;
          default:
            s.in_dtypes = Pair(Dtype::INT32, Dtype::FP32);
            s.out_dtype = D(Dtype::BFLOAT16);
            break;
        }
        s.num_active_channels = 32;
        s.src0 = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.src1 = T<3>(kSrcB, {1, 0, 0}, {64, 1, 1});
        s.dst = T<3>(kDstA, {1, 0, 0}, {64, 1, 1});
      });
    case Opcode::LoadParameterRam:
      return Build<CTRL_IM>(op, [](CTRL_IM& s) {
        s.param_ram_offset = 8;
        for (int k = 0; k < 8; ++k) s.immediate[k] = static_cast<float>(k + 1);
      });
    case Opcode::MatchReplace8:
      return Build<S4D4_MR>(op, [](S4D4_MR& s) {
        s.src = T<4>(kSrcA, {1, 0, 0, 0}, {64, 1, 1, 1});
        s.in_dtype = s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 16;
        s.replacement = -INFINITY;
        s.dst = T<4>(kDstA, {1, 0, 0, 0}, {64, 1, 1, 1});
      });
    case Opcode::TransposeTensorScalarArith:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.src = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.in_dtype = s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 32;
        s.op0 = A(AluOp::ADD);
        s.imm0 = Bits(1.0f);
        s.dst = T<3>(kDstA, {1, 0, 0}, {64, 1, 1});
      });
    case Opcode::TensorScalarCacheReduce:
    case Opcode::TensorScalarCacheCumulative:
      return Build<S3D3_TS>(op, [](S3D3_TS& s) {
        s.accumulator_cmd = static_cast<uint8_t>(AccumCmd::Accumulate);
        s.src = T<3>(kSrcA, {1, 0, 0}, {64, 1, 1});
        s.in_dtype = s.out_dtype = D(Dtype::FP32);
        s.num_active_channels = 32;
        s.op0 = A(AluOp::MULT);
        s.op1 = A(AluOp::ADD);
        s.imm0 = Bits(2.0f);
        s.dst = T<3>(kDstA, {1, 0, 0}, {64, 1, 1});
      });
    case Opcode::DveReadAccumulator:
      return Build<D1_RD>(op, [](D1_RD& s) {
        s.dst_element_count = 1;
        s.dtype = D(Dtype::FP32);
        s.num_active_channels = 4;
        s.dst = T<1>(kDstA, {1}, {1});
      });
    case Opcode::EngineNop:
      return MakeInstruction(op);
    case Opcode::DveReadIndices:
      return Build<D4_MR>(op, [](D4_MR& s) {
        s.dst_element_count = 8;
        s.dtype = D(Dtype::UINT32);
        s.num_active_channels = 8;
        s.dst = T<4>(kDstA, {1, 0, 0, 0}, {8, 1, 1, 1});
      });
    default:
      return MakeInstruction(op);
  }
}

std::vector<Opcode> SupportedOpcodes() {
  std::vector<Opcode> out;
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  for (int i = 0; i < n; ++i)
    if (all[i].tier != Tier::Unsupported) out.push_back(all[i].opcode);
  return out;
}
std::vector<Opcode> UnsupportedOpcodes() {
  std::vector<Opcode> out;
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  for (int i = 0; i < n; ++i)
    if (all[i].tier == Tier::Unsupported) out.push_back(all[i].opcode);
  return out;
}
std::string Describe(const std::optional<Violation>& v) {
  return v ? Cat(v->predicate, ": ", v->detail) : std::string("ok");
}

// ===================================================================================
// Golden encodings: the exact 64 bytes of each hand-built record (HEADER, EVENTS, payload at
// the offsets of encoding.md §7), decoded, validated and re-encoded.
// ===================================================================================
struct Golden {
  Opcode op;
  const char* hex;
};
const Golden kGoldens[] = {
    {Opcode::TensorTensorArith,
     "4110015a 05030304 07000000 aa0a0440 "
     "00000000 01001000 00001000 04000100 "
     "00100000 01001000 00001000 04000100 "
     "00200000 01001000 00001000 04000100"},
    {Opcode::TensorScalarArith,
     "43100000 00000000 00000000 00000000 "
     "00000000 01000000 00004000 01000100 "
     "0a0a2000 06040000 00000040 0000803f "
     "00200000 01000000 00004000 01000100"},
    {Opcode::TensorScalarPtrArith,
     "44100000 00000000 00000000 00000000 "
     "00000000 01000000 00004000 01000100 "
     "0a0a2000 06040000 00300000 04300000 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::Copy,
     "46100000 00000000 00000000 00000000 "
     "01000000 00000000 20000100 01000100 "
     "0a0a1000 00000000 00000000 00200000 "
     "01000000 00000000 20000100 01000100"},
    {Opcode::Cast,
     "47100000 00000000 00000000 00000000 "
     "01000000 00000000 20000100 01000100 "
     "0a061000 00000000 00000000 00200000 "
     "01000000 00000000 20000100 01000100"},
    {Opcode::Reciprocal,
     "48100000 00000000 00000000 00000000 "
     "01000000 00000000 20000100 01000100 "
     "0a0a1000 00000000 00000000 00200000 "
     "01000000 00000000 20000100 01000100"},
    {Opcode::Memset,
     "49100000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 20000000 "
     "0a000800 00000000 0000803f 00200000 "
     "01000000 00000000 20000100 01000100"},
    {Opcode::TensorScalarPtrMultiArith,
     "4f100000 00000000 00000000 00000000 "
     "01000000 00000400 04000100 01000200 "
     "0a0a0400 04040000 00000000 00200000 "
     "01000000 00000000 08000100 01000100"},
    {Opcode::TensorTensorBitvec,
     "51100000 00000000 00000000 88080a02 "
     "00000000 01000000 00002000 01000100 "
     "00100000 ffff0000 00002000 01000100 "
     "00200000 02000000 00001000 01000200"},
    {Opcode::TensorScalarBitvec,
     "53100000 00000000 00000000 00000000 "
     "00000000 01000000 00002000 01000100 "
     "09090800 0c000000 ff000000 00000000 "
     "00200000 01000000 00002000 01000100"},
    {Opcode::TensorScalarPtrBitvec,
     "54100000 00000000 00000000 00000000 "
     "00000000 01000000 00002000 01000100 "
     "04040800 0b000000 00300000 02300000 "
     "00200000 01000000 00002000 01000100"},
    {Opcode::TensorScalarPtrMultiBitvec,
     "5f100000 00000000 00000000 00000000 "
     "01000000 00000400 04000100 01000200 "
     "05050400 10040000 00000000 00200000 "
     "01000000 00000000 08000100 01000100"},
    {Opcode::BatchNormStats,
     "60100000 00000000 00000000 00000000 "
     "01000000 00000000 00010100 01000100 "
     "0a0a8000 00000000 00008042 00008042 "
     "00200000 01000000 03000100 00000000"},
    {Opcode::BatchNormStats2,
     "61100000 00000000 00000000 00000000 "
     "01000000 00000000 00020100 01000100 "
     "0a0a1000 00000000 00008042 00008042 "
     "00200000 01000000 06000100 00000000"},
    {Opcode::BatchNormAggregate,
     "62100000 00000000 00000000 00000000 "
     "01000000 00000000 06000100 01000100 "
     "0a0a1000 00000000 00000000 00000000 "
     "00200000 01000000 02000100 00000000"},
    {Opcode::BatchNormGradAccumulate,
     "63100000 00000000 00000000 00300000 "
     "00000000 01000000 00004000 01000100 "
     "00100000 01000000 00004000 01000100 "
     "00200000 01000300 04300000 aa000a10"},
    {Opcode::BatchNormParamLoad,
     "64100000 00000000 00000000 00000000 "
     "00000000 01000000 03000100 00000043 "
     "0a001000 00000000 00000000 00300000 "
     "01000000 00000000 00000000 00000000"},
    {Opcode::BatchNormBackProp,
     "65100000 00000000 00000000 6a0a0020 "
     "00000000 01000000 00004000 01000100 "
     "00100000 01000000 00004000 01000100 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::LoadParameterRam,
     "66100000 00000000 00000000 08000000 "
     "00000000 00000000 00000000 00000000 "
     "0000803f 00000040 00004040 00008040 "
     "0000a040 0000c040 0000e040 00000041"},
    {Opcode::Max8,
     "6c100000 00000000 00000000 00000000 "
     "01000000 00000000 40000100 01000100 "
     "0a0a1000 00000000 00000000 00000000 "
     "00200000 01000000 08000100 00000000"},
    {Opcode::MatchValueLoad,
     "6d100000 00000000 00000000 00000000 "
     "00000000 01000000 08000100 00000000 "
     "0a000800 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000"},
    {Opcode::FindIndex8,
     "6e100000 00000000 00000000 00000000 "
     "01000000 00000000 40000100 01000100 "
     "0a091000 00000000 00000000 00000000 "
     "00200000 01000000 08000100 00000000"},
    {Opcode::MatchReplace8,
     "6f100000 00000000 00000000 00000000 "
     "01000000 00000000 40000100 01000100 "
     "0a0a1000 00000000 000080ff 00200000 "
     "01000000 00000000 40000100 01000100"},
    {Opcode::TensorScalarImmLdArith,
     "70100000 00000000 00000000 00000000 "
     "00000000 01000000 08000100 00000000 "
     "0a000800 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000"},
    {Opcode::TensorScalarImmLdBitvec,
     "71100000 00000000 00000000 00000000 "
     "00000000 01000000 08000100 00000000 "
     "08000800 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000"},
    {Opcode::CopyPredicated,
     "72100000 00000000 00000000 a30a0020 "
     "00000000 01000000 00004000 01000100 "
     "00100000 01000000 00004000 01000100 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::TransposeBatchNormStats2,
     "82100000 00000000 00000000 00000000 "
     "01000000 00000000 40000100 01000100 "
     "0a0a2000 00000000 00008042 00008042 "
     "00200000 01000000 06000100 00000000"},
    {Opcode::BatchNormParamLoad2,
     "8e100000 00000000 00000000 00000000 "
     "01000000 02000100 00000000 00008043 "
     "0a0a0800 00000000 00300000 04300000 "
     "01010000 00000000 00000000 00000000"},
    {Opcode::TransposeTensorScalarArith,
     "93100000 00000000 00000000 00000000 "
     "00000000 01000000 00004000 01000100 "
     "0a0a2000 04000000 0000803f 00000000 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::BatchNormGradAccumulate2,
     "94100000 00000000 00000000 00300000 "
     "00000000 01000000 00004000 01000100 "
     "00100000 01000000 00004000 01000100 "
     "00200000 01000300 04300000 6aaa1110"},
    {Opcode::CastPredicated,
     "99100000 00000000 00000000 a8060020 "
     "00000000 01000000 00004000 01000100 "
     "00100000 01000000 00004000 01000100 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::TensorScalarCacheReduce,
     "9a100000 00000000 00000000 02000000 "
     "00000000 01000000 00004000 01000100 "
     "0a0a2000 06040000 00000040 00000000 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::DveReadAccumulator,
     "9b100000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 01000000 "
     "0a000400 00000000 00000000 00200000 "
     "01000100 00000000 00000000 00000000"},
    {Opcode::EngineNop,
     "9f100000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 00000000"},
    {Opcode::TensorScalarCacheCumulative,
     "e6100000 00000000 00000000 02000000 "
     "00000000 01000000 00004000 01000100 "
     "0a0a2000 06040000 00000040 00000000 "
     "00200000 01000000 00004000 01000100"},
    {Opcode::DveReadIndices,
     "e9100000 00000000 00000000 00000000 "
     "00000000 00000000 00000000 08000000 "
     "09000800 00000000 00000000 00200000 "
     "01000000 00000000 08000100 01000100"},
};

TEST(Golden, EveryTierAOpcodeHasOne) {
  std::set<Opcode> have;
  for (const Golden& g : kGoldens) have.insert(g.op);
  for (Opcode op : SupportedOpcodes())
    if (InfoOf(op).tier == Tier::A) { EXPECT_TRUE(have.count(op)) << InfoOf(op).name; }
  EXPECT_EQ(have.size(), std::size(kGoldens));
}

TEST(Golden, BytesDecodeValidateAndRoundTrip) {
  for (const Golden& g : kGoldens) {
    SCOPED_TRACE(InfoOf(g.op).name);
    const std::vector<uint8_t> bytes = FromHex(g.hex);
    ASSERT_EQ(bytes.size(), 64u);
    EXPECT_EQ(ToHex(Base(g.op)), ToHex(*Decode(bytes)));  // the struct fill gives these bytes
    auto inst = Decode(bytes, 3);
    ASSERT_TRUE(inst.ok()) << inst.status();
    EXPECT_EQ(inst->opcode(), g.op);
    const auto enc = Encode(*inst);
    EXPECT_TRUE(std::equal(enc.begin(), enc.end(), bytes.begin()));
    for (Generation gen : kAllGenerations) {
      if (!IsGeneratable(g.op, gen)) continue;
      EXPECT_TRUE(Validate(*inst, gen, 3).ok()) << GenerationName(gen) << ": "
                                                << Validate(*inst, gen, 3);
      EXPECT_FALSE(CheckExecutable(*inst, gen).has_value()) << GenerationName(gen);
    }
  }
}

TEST(Golden, StreamRoundTrip) {
  std::vector<uint8_t> stream;
  for (const Golden& g : kGoldens) {
    const std::vector<uint8_t> b = FromHex(g.hex);
    stream.insert(stream.end(), b.begin(), b.end());
  }
  auto prog = DecodeStream(stream);
  ASSERT_TRUE(prog.ok()) << prog.status();
  EXPECT_EQ(prog->size(), std::size(kGoldens));
  EXPECT_EQ(EncodeStream(*prog), stream);
  EXPECT_TRUE(ValidateProgram(*prog, kCayman, /*for_execution=*/true).ok());
  // A trailing partial record is a decode error.
  stream.push_back(0);
  auto bad = DecodeStream(stream);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ErrorKindOf(bad.status()), ErrorKind::Decode);
}

TEST(Golden, FieldsSitAtTheirSpecOffsets) {
  // Spot checks straight from encoding.md §7, independent of structs.h.
  const auto tt = FromHex(kGoldens[0].hex);  // TensorTensorArith
  EXPECT_EQ(tt[0], 0x41);
  EXPECT_EQ(tt[1], 0x10);
  EXPECT_EQ(tt[12], 0xAA);  // in_dtypes
  EXPECT_EQ(tt[14], 0x04);  // op ADD
  EXPECT_EQ(tt[15], 64);    // num_active_channels
  const Instruction ga = Base(Opcode::BatchNormGradAccumulate);
  EXPECT_EQ(U32At(ga, 12), kPtrA);  // imm0
  EXPECT_EQ(U32At(ga, 56), kPtrB);  // imm1
  EXPECT_EQ(ga.bytes[63], 16);      // num_active_channels
  const Instruction ts = Base(Opcode::TensorScalarArith);
  EXPECT_EQ(ts.bytes[36], A(AluOp::MULT));
  EXPECT_EQ(U32At(ts, 40), Bits(2.0f));
  const Instruction pl2 = Base(Opcode::BatchNormParamLoad2);
  EXPECT_EQ(F32(U32At(pl2, 28)), 256.0f);
  EXPECT_EQ(pl2.bytes[48], 1);
  EXPECT_EQ(pl2.bytes[49], 1);
}

// ===================================================================================
// Negative cases: a valid record with exactly one field broken.
// ===================================================================================
using Mutation = std::function<void(Instruction&)>;
struct Case {
  Opcode op;
  std::string pred;
  std::string field;  // what the message must name
  Mutation mutate;
  ErrorKind kind = ErrorKind::Invalid;
  Generation gen = kCayman;
  bool execution = false;  // reported by CheckExecutable (ValidateProgram for_execution)
  std::string label;
};

#define MUT(S, ...)                      \
  Mutation([=](Instruction& i) {        \
    auto s = i.as<S>();                  \
    __VA_ARGS__;                         \
    StoreTo(s, i.bytes.data());          \
  })

std::string LowerStruct(StructKind k) {
  std::string s(StructName(k));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct TensorField {
  std::string name;
  int off;
  int dims;
  uint8_t dtype;
  bool is_dst;
};
std::vector<TensorField> TensorFieldsOf(const Instruction& inst) {
  std::vector<TensorField> out;
  const Operands ops = OperandsOf(inst);
  for (const FieldInfo& f : FieldsOf(inst.info().strct)) {
    const int dims = TensorDims(f.kind);
    if (dims == 0) continue;
    for (int k = 0; k < ops.num_tensors; ++k)
      if (ops.tensors[k].name == f.name)
        out.push_back({std::string(f.name), f.offset, dims, ops.tensors[k].dtype, ops.tensors[k].is_dst});
  }
  return out;
}
int NumOff(const TensorField& t, int d) { return t.off + 4 + 2 * t.dims + 2 * d; }
int StepOff(const TensorField& t, int d) { return t.off + 4 + 2 * d; }

// §2 cases derived for every opcode from the field table.
std::vector<Case> SharedCases() {
  std::vector<Case> cs;
  for (Opcode op : SupportedOpcodes()) {
    const Instruction base = Base(op);
    const StructKind sk = base.info().strct;
    auto add = [&](std::string pred, std::string field, Mutation m,
                   ErrorKind kind = ErrorKind::Invalid) {
      cs.push_back(Case{op, std::move(pred), std::move(field), std::move(m), kind});
    };
    // has_valid_neuron_header
    add("has_valid_neuron_header", "inst_word_len", [](Instruction& i) { i.bytes[1] = 0x08; });
    add("has_valid_neuron_header", "inst_word_len", [](Instruction& i) { i.bytes[1] = 0x00; });
    add("has_valid_neuron_header", "debug_cmd", [](Instruction& i) { i.bytes[2] = 2; });
    add("has_valid_neuron_header", "debug_cmd", [](Instruction& i) { i.bytes[2] = 0x89; });
    // has_valid_neuron_events
    add("has_valid_neuron_events", "wait_mode", [](Instruction& i) { i.bytes[4] = 8; });
    add("has_valid_neuron_events", "wait_mode", [](Instruction& i) { i.bytes[4] = 0x90; });
    add("has_valid_neuron_events", "update_mode", [](Instruction& i) { i.bytes[6] = 6; });
    add("has_valid_neuron_events", "update_mode", [](Instruction& i) { i.bytes[6] = 24; });
    add("has_valid_neuron_events", "wait_idx", [](Instruction& i) { i.bytes[4] = 1, i.bytes[5] = 32; });
    add("has_valid_neuron_events", "update_idx", [](Instruction& i) { i.bytes[6] = 17, i.bytes[7] = 200; });
    // register forms still bound the index, even with mode 0x80
    add("has_valid_neuron_events", "wait_idx", [](Instruction& i) { i.bytes[4] = 0x80, i.bytes[5] = 32; });
    // events_mode_supported
    add("events_mode_supported", "wait_mode",
        [](Instruction& i) { i.bytes[4] = 0x81, i.bytes[5] = 31; }, ErrorKind::Unsupported);
    add("events_mode_supported", "wait_mode", [](Instruction& i) { i.bytes[4] = 0x80; },
        ErrorKind::Unsupported);
    add("events_mode_supported", "update_mode",
        [](Instruction& i) { i.bytes[6] = 0x99, i.bytes[7] = 0; }, ErrorKind::Unsupported);
    // check_active_channels
    const Operands ops = OperandsOf(base);
    if (ops.has_channels) {
      const int ch = FindField(sk, "num_active_channels")->offset;
      for (int v : {0, 129, 255})
        add("check_active_channels", "num_active_channels",
            [ch, v](Instruction& i) { i.bytes[ch] = static_cast<uint8_t>(v); });
      // start_addr_active_channels: a start partition with p0 + n = 129
      const uint32_t p = static_cast<uint32_t>(kPartitions + 1 - ops.channels);
      if (ops.channels > 1) {
        for (const TensorField& t : TensorFieldsOf(base)) {
          const uint32_t off = ResolveImmediate(U32At(base, t.off), kCayman)->offset;
          add("start_addr_active_channels", t.name + " start partition",
              [t, p, off](Instruction& i) { SetU32(i, t.off, MakeAddress(Space::Sbuf, p, off, kCayman)); });
        }
        for (int k = 0; k < ops.num_pointers; ++k) {
          const PointerOperand& ptr = ops.pointers[k];
          if (ptr.is_register) continue;
          const int at = FindField(sk, ptr.name)->offset;
          const uint32_t off = ResolveImmediate(ptr.word, kCayman)->offset;
          add("start_addr_active_channels", std::string(ptr.name) + " start partition",
              [at, p, off](Instruction& i) { SetU32(i, at, MakeAddress(Space::Sbuf, p, off, kCayman)); });
        }
      }
    }
    // tensorNd_valid, on every tensor operand
    for (const TensorField& t : TensorFieldsOf(base)) {
      const std::string pred = Cat("tensor", t.dims, "d_valid");
      const int size = DtypeSize(static_cast<Dtype>(t.dtype));
      for (int d = 0; d < t.dims; ++d)
        add(pred, Cat(t.name, " num[", d, "]"), [t, d](Instruction& i) { SetU16(i, NumOff(t, d), 0); });
      add(pred, t.name + " address", [t](Instruction& i) { SetU32(i, t.off, 0x60000000u | 0x100); });
      add(pred, t.name + " address", [t](Instruction& i) { SetU32(i, t.off, 0x1FFFFFF0u); });
      add(pred, t.name + " address", [t](Instruction& i) { SetU32(i, t.off, 0x80000040u); });
      add(pred, t.name + " address", [t](Instruction& i) { SetU32(i, t.off, 0x80000105u); });
      add(pred, t.name + " bytes", [t](Instruction& i) { SetU32(i, t.off, 224 << 10); });
      if (U16At(base, NumOff(t, 0)) > 1)
        add(pred, t.name + " bytes", [t](Instruction& i) {
          SetU32(i, t.off, 0);
          SetU16(i, StepOff(t, 0), static_cast<uint16_t>(-1));
        });
      if (size >= 2)
        add(pred, t.name + " start offset",
            [t](Instruction& i) { SetU32(i, t.off, U32At(i, t.off) + 1); });
      if (t.is_dst && size != 4)
        add(pred, t.name + " dtype",
            [t](Instruction& i) { SetU32(i, t.off, kPsumBase + U32At(i, t.off)); });
      // counts >= 1 still apply to register and shape-register operands
      add(pred, t.name + " num[0]", [t](Instruction& i) {
        SetU32(i, t.off, 0x40000000u | 0x100);
        SetU16(i, NumOff(t, 0), 0);
      });
      add(pred, t.name + " num[0]", [t](Instruction& i) {
        SetU32(i, t.off, MakeRegisterAddress(7));
        SetU16(i, NumOff(t, 0), 0);
      });
      if (IsGeneratable(op, kMaverick)) {
        Case c{op, pred, t.name + " address",
               [t](Instruction& i) { SetU32(i, t.off, 0x08000000u); }};
        c.gen = kMaverick;
        cs.push_back(c);
      }
      // address_mode_supported (execution only)
      for (uint32_t marker : {0x40u, 0xC0u, 0x20u, 0xA0u}) {
        Case c{op, "address_mode_supported", t.name + " address",
               [t, marker](Instruction& i) { SetU32(i, t.off, marker << 24 | (U32At(i, t.off) & 0xFFFFFF)); },
               ErrorKind::Unsupported};
        c.execution = true;
        cs.push_back(c);
      }
    }
    // <struct>_reserved_zero / engine_nop_zero_payload
    if (op == Opcode::EngineNop) {
      for (int b = 12; b < 64; ++b)
        add("engine_nop_zero_payload", Cat("byte ", b), [b](Instruction& i) { i.bytes[b] = 0x01; });
    } else {
      for (const FieldInfo& f : FieldsOf(sk)) {
        if (f.kind != FieldKind::Reserved) continue;
        for (int b = f.offset; b < f.offset + f.size; ++b)
          add(LowerStruct(sk) + "_reserved_zero", Cat(f.name, " byte ", b),
              [b](Instruction& i) { i.bytes[b] = 0x80; });
      }
    }
  }
  // opcode_supported: every listed opcode outside tiers A/B.
  for (Opcode op : UnsupportedOpcodes())
    cs.push_back(Case{op, "opcode_supported", "opcode", [](Instruction&) {}, ErrorKind::Unsupported});
  // opcode_in_generation
  Case ga{Opcode::BatchNormGradAccumulate, "opcode_in_generation", "opcode", [](Instruction&) {}};
  ga.gen = kMaverick;
  cs.push_back(ga);
  Case ri{Opcode::DveReadIndices, "opcode_in_generation", "opcode", [](Instruction&) {}};
  ri.gen = kSunda;
  cs.push_back(ri);
  return cs;
}

// §3 cases, opcode by opcode, in the spec's row order.
constexpr float kInf = INFINITY, kNaN = NAN;
void Add(std::vector<Case>& cs, Opcode op, std::string pred, std::string field, Mutation m,
         Generation gen = kCayman) {
  Case c{op, std::move(pred), std::move(field), std::move(m)};
  c.gen = gen;
  cs.push_back(std::move(c));
}
#define add(...) Add(cs, __VA_ARGS__)

void S4D2Cases(std::vector<Case>& cs) {
  // ---- S4D2_BN family ----
  for (Opcode op : {Opcode::BatchNormStats2, Opcode::TransposeBatchNormStats2}) {
    add(op, "has_bnstats2_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[1] = 2; s.src.num[0] = 288));
    add(op, "has_bnstats2_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[0] = 544));
    add(op, "has_bnstats2_dst_element_cnt", "dst elements", MUT(S4D2_BN, s.dst.num[1] = 2));
    add(op, "has_bnstats2_dst_element_cnt", "dst elements", MUT(S4D2_BN, s.dst.num[0] = 5));
    add(op, "has_bns_finite_even_count", "even_count", MUT(S4D2_BN, s.even_count = kInf));
    add(op, "has_bns_finite_even_count", "even_count", MUT(S4D2_BN, s.even_count = kNaN));
    add(op, "has_bns_finite_odd_count", "odd_count", MUT(S4D2_BN, s.odd_count = -kInf));
    add(op, "s4d2_bn_stats_in_type", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::UINT8)));
    add(op, "s4d2_bn_stats_in_type", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::FP32R)));
    add(op, "s4d2_bn_stats_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::FP32R)));
    add(op, "s4d2_bn_stats_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::INT32)));
  }
  add(Opcode::TransposeBatchNormStats2, "has_transpose_src_element_cnt", "src elements",
      MUT(S4D2_BN, s.src.num[0] = 48));
  add(Opcode::TransposeBatchNormStats2, "has_transpose_src_element_cnt", "src elements",
      MUT(S4D2_BN, s.src.num[0] = 31));
  add(Opcode::TransposeBatchNormStats2, "has_multiple_32_channels", "num_active_channels",
      MUT(S4D2_BN, s.num_active_channels = 16));
  add(Opcode::TransposeBatchNormStats2, "has_multiple_32_channels", "num_active_channels",
      MUT(S4D2_BN, s.num_active_channels = 33));
  {
    const Opcode op = Opcode::BatchNormStats;
    add(op, "has_bnstats_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[1] = 2));
    add(op, "has_bnstats_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[0] = 257));
    add(op, "has_bnstats_dst_element_cnt", "dst elements", MUT(S4D2_BN, s.dst.num[0] = 6));
    add(op, "has_bns_finite_even_count", "even_count", MUT(S4D2_BN, s.even_count = kNaN));
    add(op, "has_bns_finite_odd_count", "odd_count", MUT(S4D2_BN, s.odd_count = kInf));
    add(op, "s4d2_bn_stats_in_type", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::FP8_EXP4)));
    add(op, "s4d2_bn_stats_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::INVALID)));
  }
  {
    const Opcode op = Opcode::BatchNormAggregate;
    add(op, "has_bnstats_agg_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[0] = 7));
    add(op, "has_bnstats_agg_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[0] = 1));
    add(op, "has_bnstats_agg_src_element_cnt", "src elements", MUT(S4D2_BN, s.src.num[0] = 2));
    add(op, "has_bnstats_agg_dst_element_cnt", "dst elements", MUT(S4D2_BN, s.dst.num[0] = 3));
    add(op, "s4d2_bn_zero_counts", "even_count", MUT(S4D2_BN, s.even_count = 1.0f));
    add(op, "s4d2_bn_zero_counts", "even_count", MUT(S4D2_BN, s.odd_count = 1e-45f));
    add(op, "s4d2_bn_zero_counts", "even_count", MUT(S4D2_BN, s.odd_count = kNaN));
    add(op, "s4d2_bn_agg_in_type", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::INT16)));
    add(op, "s4d2_bn_agg_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::UINT32)));
  }
  for (Opcode op : {Opcode::Max8, Opcode::FindIndex8}) {
    const bool m8 = op == Opcode::Max8;
    const std::string src_pred = m8 ? "has_max8_src_element_cnt" : "has_find_index8_src_element_cnt";
    const std::string dst_pred = m8 ? "has_max8_dst_element_cnt" : "has_find_index8_dst_element_cnt";
    add(op, src_pred, "src elements", MUT(S4D2_BN, s.src.num[0] = 7));
    add(op, src_pred, "src elements", MUT(S4D2_BN, s.src.num[0] = 16385));
    add(op, src_pred, "src elements", MUT(S4D2_BN, s.src.num[2] = 257));
    add(op, dst_pred, "dst elements", MUT(S4D2_BN, s.dst.num[0] = 9));
    add(op, dst_pred, "dst elements", MUT(S4D2_BN, s.dst.num[1] = 2));
    add(op, "s4d2_bn_zero_counts", "even_count", MUT(S4D2_BN, s.even_count = 2.0f));
    add(op, "s4d2_bn_zero_counts", "even_count", MUT(S4D2_BN, s.odd_count = -1.0f));
    add(op, "s4d2_bn_in_dtype", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::FP32R)));
    add(op, "s4d2_bn_in_dtype", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::INVALID)));
    add(op, "s4d2_bn_in_dtype", "in_dtype", MUT(S4D2_BN, s.in_dtype = D(Dtype::UINT64)));
    add(op, "s4d2_bn_in_dtype", "in_dtype", MUT(S4D2_BN, s.in_dtype = 0x13));
    if (m8) {
      add(op, "max8_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::INT64)));
      add(op, "max8_out_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = 0x10));
    } else {
      add(op, "has_find_index8_dst_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::INT32)));
      add(op, "has_find_index8_dst_type", "out_dtype", MUT(S4D2_BN, s.out_dtype = D(Dtype::FP32)));
    }
  }
}

void GradAccumCases(std::vector<Case>& cs) {
  // ---- GradAccum v1 / v2 ----
  for (Opcode op : {Opcode::BatchNormGradAccumulate, Opcode::BatchNormGradAccumulate2}) {
    const bool v2 = op == Opcode::BatchNormGradAccumulate2;
    add(op, "bnga_valid_input_type", "x dtype",
        MUT(S3S3D1_BN, s.in_dtypes = Pair(Dtype::UINT32, Dtype::FP32)));
    add(op, "bnga_valid_input_type", "dy dtype",
        MUT(S3S3D1_BN, s.in_dtypes = Pair(Dtype::FP32, Dtype::INT8)));
    add(op, "bnga_valid_input_type", "x dtype",
        MUT(S3S3D1_BN, s.in_dtypes = Pair(Dtype::FP32R, Dtype::FP32)));
    add(op, "bnga_src_element_cnt_check", "x elements vs dy elements",
        MUT(S3S3D1_BN, s.src1.num[1] = 2));
    add(op, "bnga_src_element_cnt_check", "x elements vs dy elements",
        MUT(S3S3D1_BN, s.src0.num[0] = 63));
    add(op, "bnga_dst_element_cnt_check", "dst num[0]", MUT(S3S3D1_BN, s.dst.num[0] = 4));
    add(op, "bnga_dst_element_cnt_check", "dst num[0]", MUT(S3S3D1_BN, s.dst.num[0] = 1));
    add(op, "tt_valid_partitions", "start partitions",
        MUT(S3S3D1_BN, s.src1.addr = MakeAddress(Space::Sbuf, 32, kSrcB, kCayman)));
    add(op, "tt_valid_partitions", "start partitions",
        MUT(S3S3D1_BN, s.src0.addr = MakeAddress(Space::Sbuf, 96, kSrcA, kCayman);
            s.src1.addr = MakeAddress(Space::Sbuf, 95, kSrcB, kCayman)));
    add(op, "tt_valid_partitions", "src0, src1",
        MUT(S3S3D1_BN, s.src0.addr = kPsumBase; s.src1.addr = kPsumBase + 0x1000));
    const std::string imm_pred = v2 ? "bnga2_imm_check" : "bnga_imm_check";
    add(op, imm_pred, "imm0 offset", MUT(S3S3D1_BN, s.imm0 = kPtrA + 2));
    add(op, imm_pred, "imm1 offset", MUT(S3S3D1_BN, s.imm1 = 224 << 10));
    add(op, imm_pred, "imm1 address", MUT(S3S3D1_BN, s.imm1 = 0x40003000));
    add(op, imm_pred, "imm0 address", MUT(S3S3D1_BN, s.imm0 = 0x20003000));
    add(op, imm_pred, "imm0 address", MUT(S3S3D1_BN, s.imm0 = 0x1FFFFFF0));
    add(op, imm_pred, "imm1 address", MUT(S3S3D1_BN, s.imm1 = 0x80000040));
    add(op, imm_pred, "imm0 address", MUT(S3S3D1_BN, s.imm0 = 0xE0000000));
    if (!v2) {
      add(op, "bnga_valid_output_type", "out dtype", MUT(S3S3D1_BN, s.out_dtype = D(Dtype::INT32)));
      add(op, "bnga_valid_output_type", "out dtype", MUT(S3S3D1_BN, s.out_dtype = D(Dtype::FP32R)));
      add(op, "bnga_valid_immediate_type", "immediate_dtype",
          MUT(S3S3D1_BN, s.immediate_dtype = D(Dtype::FP8_EXP4)));
      add(op, "bnga_valid_immediate_type", "immediate_dtype",
          MUT(S3S3D1_BN, s.immediate_dtype = D(Dtype::UINT32)));
      add(op, "bnga_imm_check", "imm1 offset",
          MUT(S3S3D1_BN, s.immediate_dtype = D(Dtype::FP16); s.imm1 = kPtrA + 5));
    } else {
      add(op, "bnga_valid_output_type", "out dtype",
          MUT(S3S3D1_BN2, s.imm_out_dtypes = Pair(Dtype::FP32, Dtype::INT32)));
      add(op, "bnga_valid_immediate_type", "immediate dtype",
          MUT(S3S3D1_BN2, s.imm_out_dtypes = Pair(Dtype::INVALID, Dtype::FP32)));
      add(op, "bnga_valid_immediate_type", "immediate dtype",
          MUT(S3S3D1_BN2, s.imm_out_dtypes = Pair(Dtype::UINT32, Dtype::FP32)));
      add(op, "bnga2_imm_check", "imm0 source", MUT(S3S3D1_BN2, s.imm_srcs = 0x10));
      add(op, "bnga2_imm_check", "imm1 source", MUT(S3S3D1_BN2, s.imm_srcs = 0x31));
      add(op, "bnga2_imm_check", "imm0 (IMM_REG)", MUT(S3S3D1_BN2, s.imm_srcs = 0x12; s.imm0 = 64));
      add(op, "bnga2_imm_check", "imm1 (IMM_REG)",
          MUT(S3S3D1_BN2, s.imm_srcs = 0x21; s.imm1 = 0x00010003));
      add(op, "bnga2_imm_check", "imm1 offset",
          MUT(S3S3D1_BN2, s.imm_out_dtypes = Pair(Dtype::BFLOAT16, Dtype::FP32); s.imm1 = kPtrA + 1));
    }
  }
}

void S2Cases(std::vector<Case>& cs) {
  // ---- S2_BN ----
  {
    const Opcode op = Opcode::BatchNormParamLoad;
    add(op, "has_bn_param_load_src_element_cnt", "src shape", MUT(S2_BN, s.src.num[1] = 3));
    add(op, "has_bn_param_load_src_element_cnt", "src shape", MUT(S2_BN, s.src.num[0] = 2));
    add(op, "has_bn_param_load_src_element_cnt", "src shape",
        MUT(S2_BN, s.src.num[0] = 1; s.src.num[1] = 1));
    add(op, "s2_bn_finite_n", "imm1 (N)", MUT(S2_BN, s.imm1 = 0x7F800000));
    add(op, "s2_bn_finite_n", "imm1 (N)", MUT(S2_BN, s.imm1 = 0xFFC00001));
    add(op, "has_valid_bn_param_load_imm0", "imm0_ptr source", MUT(S2_BN, s.imm0_src = 3));
    add(op, "has_valid_bn_param_load_imm0", "imm0_ptr offset",
        MUT(S2_BN, s.imm0_src = 0; s.imm0_ptr = kPtrA + 1));
    add(op, "has_valid_bn_param_load_imm0", "imm0_ptr (IMM_REG)",
        MUT(S2_BN, s.imm0_src = 2; s.imm0_ptr = 64));
    add(op, "has_valid_bn_param_load_imm0", "imm0_ptr address", MUT(S2_BN, s.imm0_ptr = 0xC0000000));
    add(op, "has_valid_bn_param_load_imm0", "imm0_ptr offset", MUT(S2_BN, s.imm0_ptr = 224 << 10));
    add(op, "s2_bn_dtype", "dtype", MUT(S2_BN, s.dtype = D(Dtype::INT32)));
    add(op, "s2_bn_dtype", "dtype", MUT(S2_BN, s.dtype = D(Dtype::FP32R)));
  }
  {
    const Opcode op = Opcode::MatchValueLoad;
    add(op, "has_match_value_load_src_element_cnt", "src elements", MUT(S2_BN, s.src.num[0] = 7));
    add(op, "has_match_value_load_src_element_cnt", "src elements", MUT(S2_BN, s.src.num[1] = 2));
    add(op, "has_s2_bn_zero_immediates", "imm0_ptr", MUT(S2_BN, s.imm0_ptr = 4));
    add(op, "has_s2_bn_zero_immediates", "imm0_src", MUT(S2_BN, s.imm0_src = 1));
    add(op, "has_s2_bn_zero_immediates", "imm1", MUT(S2_BN, s.imm1 = Bits(1.0f)));
    add(op, "s2_bn_mvl_dtype", "dtype", MUT(S2_BN, s.dtype = D(Dtype::FP32R)));
    add(op, "s2_bn_mvl_dtype", "dtype", MUT(S2_BN, s.dtype = D(Dtype::INVALID)));
  }
  for (Opcode op : {Opcode::TensorScalarImmLdArith, Opcode::TensorScalarImmLdBitvec}) {
    add(op, "has_tsm_immediates_load_src_element_cnt", "src elements",
        MUT(S2_BN, s.src.num[0] = 3; s.src.num[1] = 3));
    add(op, "has_tsm_immediates_load_src_element_cnt", "src elements", MUT(S2_BN, s.src.num[0] = 9));
    add(op, "has_s2_bn_zero_immediates", "imm1", MUT(S2_BN, s.imm1 = Bits(1.0f)));
    add(op, "has_s2_bn_zero_immediates", "imm0_ptr", MUT(S2_BN, s.imm0_ptr = kPtrA));
    add(op, "has_s2_bn_zero_immediates", "imm0_src", MUT(S2_BN, s.imm0_src = 2));
    add(op, "tsm_immld_dtypes", "dtype", MUT(S2_BN, s.dtype = D(Dtype::FP32R)));
    if (op == Opcode::TensorScalarImmLdBitvec) {
      add(op, "tsm_immld_dtypes", "dtype", MUT(S2_BN, s.dtype = D(Dtype::INT16)));
      add(op, "tsm_immld_dtypes", "dtype", MUT(S2_BN, s.dtype = D(Dtype::FP32)));
    }
  }
}

void ParamLoad2Cases(std::vector<Case>& cs) {
  // ---- ParamLoad2 ----
  {
    const Opcode op = Opcode::BatchNormParamLoad2;
    add(op, "has_bnpl2_src_element_cnt", "src shape", MUT(S2_BNPL2, s.src.num[1] = 2));
    add(op, "has_bnpl2_src_element_cnt", "src shape", MUT(S2_BNPL2, s.src.num[0] = 1));
    add(op, "has_bnpl2_src_element_cnt", "src shape", MUT(S2_BNPL2, s.src.num[0] = 1; s.src.num[1] = 3));
    add(op, "s2_bnpl2_finite_element_count", "element_count", MUT(S2_BNPL2, s.element_count = kNaN));
    add(op, "s2_bnpl2_finite_element_count", "element_count", MUT(S2_BNPL2, s.element_count = -kInf));
    add(op, "s2_bnpl2_src_dtype", "src_dtype", MUT(S2_BNPL2, s.src_dtype = D(Dtype::INT32)));
    add(op, "s2_bnpl2_immediate_dtype", "immediate_dtype",
        MUT(S2_BNPL2, s.immediate_dtype = D(Dtype::FP8_EXP5)));
    add(op, "s2_bnpl2_immediate_dtype", "immediate_dtype",
        MUT(S2_BNPL2, s.immediate_dtype = D(Dtype::INVALID)));
    add(op, "has_valid_s2_bnpl2_imm_ptr", "imm1_ptr source", MUT(S2_BNPL2, s.imm1_src = 5));
    add(op, "has_valid_s2_bnpl2_imm_ptr", "imm0_ptr offset",
        MUT(S2_BNPL2, s.imm0_src = 0; s.imm0_ptr = kPtrA + 2));
    add(op, "has_valid_s2_bnpl2_imm_ptr", "imm1_ptr (IMM_REG)",
        MUT(S2_BNPL2, s.imm1_src = 2; s.imm1_ptr = 0x100));
    add(op, "has_valid_s2_bnpl2_imm_ptr", "imm0_ptr address", MUT(S2_BNPL2, s.imm0_ptr = 0xA0000000));
    add(op, "has_valid_s2_bnpl2_imm_ptr", "imm1_ptr offset",
        MUT(S2_BNPL2, s.immediate_dtype = D(Dtype::BFLOAT16); s.imm1_ptr = kPtrA + 3));
  }
}

void TensorTensorCases(std::vector<Case>& cs) {
  // ---- S3S3D3_TT ----
  {
    const Opcode op = Opcode::TensorTensorArith;
    for (AluOp bad : {AluOp::DIVIDE, AluOp::RSQRT, AluOp::CRC32, AluOp::ABS_MAX, AluOp::AMAX_INT,
                      AluOp::ABS_VALUE_INT, AluOp::BITWISE_AND, AluOp::SYMMETRIC_CLAMP})
      add(op, "tensor_tensor_arith_op", "op", MUT(S3S3D3_TT, s.op = A(bad)));
    add(op, "tensor_tensor_arith_op", "op", MUT(S3S3D3_TT, s.op = 0x25));
    add(op, "tensor_tensor_arith_op", "op", MUT(S3S3D3_TT, s.op = 0x1E));
    add(op, "tensor_tensor_dtypes", "src0 dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::INVALID, Dtype::FP32)));
    add(op, "tensor_tensor_dtypes", "src1 dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::FP32, Dtype::FP32R)));
    add(op, "tensor_tensor_dtypes", "src1 dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::FP32, Dtype::UINT64)));
    add(op, "tensor_tensor_dtypes", "out dtype", MUT(S3S3D3_TT, s.out_dtype = D(Dtype::INT64)));
    add(op, "tensor_tensor_dtypes", "out dtype", MUT(S3S3D3_TT, s.out_dtype = 0x10));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::ADD_INT)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::MAX_UINT); s.in_dtypes = Pair(Dtype::INT32, Dtype::INT32);
            s.out_dtype = D(Dtype::INT32)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::MAX_INT); s.in_dtypes = Pair(Dtype::UINT32, Dtype::UINT32);
            s.out_dtype = D(Dtype::UINT32)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::MOD); s.in_dtypes = Pair(Dtype::INT32, Dtype::FP32)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::MOD); s.in_dtypes = Pair(Dtype::FP32, Dtype::UINT8);
            s.out_dtype = D(Dtype::UINT8)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::ADD_INT); s.in_dtypes = Pair(Dtype::INT32, Dtype::UINT32);
            s.out_dtype = D(Dtype::INT32)));
    add(op, "tensor_tensor_int_signedness", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.op = A(AluOp::DIVIDE_INT); s.in_dtypes = Pair(Dtype::INT8, Dtype::INT16);
            s.out_dtype = D(Dtype::UINT32)));
  }
  {
    const Opcode op = Opcode::TensorTensorBitvec;
    add(op, "tensor_tensor_bitvec_op", "op", MUT(S3S3D3_TT, s.op = A(AluOp::ADD)));
    add(op, "tensor_tensor_bitvec_op", "op", MUT(S3S3D3_TT, s.op = A(AluOp::CRC32)));
    add(op, "tensor_tensor_bitvec_op", "op", MUT(S3S3D3_TT, s.op = A(AluOp::ADD_INT)));
    add(op, "tensor_tensor_bitvec_dtypes", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::INT32, Dtype::UINT32)));
    add(op, "tensor_tensor_bitvec_dtypes", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.out_dtype = D(Dtype::UINT32)));
    add(op, "tensor_tensor_bitvec_dtypes", "src0, src1, out dtypes",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::FP32, Dtype::FP32); s.out_dtype = D(Dtype::FP32)));
  }
  {
    const Opcode op = Opcode::BatchNormBackProp;
    add(op, "s3s3d3_tt_is_zero_op", "op", MUT(S3S3D3_TT, s.op = A(AluOp::ADD)));
    add(op, "bn_backprop_dtypes", "x dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::INT32, Dtype::BFLOAT16)));
    add(op, "bn_backprop_dtypes", "dy dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::FP32, Dtype::FP8_EXP3)));
    add(op, "bn_backprop_dtypes", "out dtype", MUT(S3S3D3_TT, s.out_dtype = D(Dtype::FP32R)));
  }
  {
    const Opcode op = Opcode::CopyPredicated;
    add(op, "s3s3d3_tt_is_zero_op", "op", MUT(S3S3D3_TT, s.op = 1));
    add(op, "s3s3d3_copy_pred_src0_dtype", "predicate dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::FP32, Dtype::FP32)));
    add(op, "s3s3d3_copy_pred_src0_dtype", "predicate dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::INVALID, Dtype::FP32)));
    add(op, "s3s3d3_copy_cast_pred_src1_dst_dtype", "data dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::UINT8, Dtype::FP32R); s.out_dtype = D(Dtype::FP32R)));
    add(op, "s3s3d3_copy_cast_pred_src1_dst_dtype", "out dtype",
        MUT(S3S3D3_TT, s.out_dtype = D(Dtype::BFLOAT16)));
    add(op, "s3s3d3_copy_cast_pred_src1_dst_dtype", "out dtype",
        MUT(S3S3D3_TT, s.out_dtype = D(Dtype::FP32R)));
  }
  {
    const Opcode op = Opcode::CastPredicated;
    add(op, "s3s3d3_tt_is_zero_op", "op", MUT(S3S3D3_TT, s.op = A(AluOp::MULT)));
    add(op, "s3s3d3_copy_pred_src0_dtype", "predicate dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::BFLOAT16, Dtype::FP32)));
    add(op, "s3s3d3_copy_cast_pred_src1_dst_dtype", "data dtype",
        MUT(S3S3D3_TT, s.in_dtypes = Pair(Dtype::INT32, Dtype::INVALID)));
    add(op, "s3s3d3_copy_cast_pred_src1_dst_dtype", "out dtype",
        MUT(S3S3D3_TT, s.out_dtype = D(Dtype::FP32R)));
  }
  for (Opcode op : {Opcode::TensorTensorArith, Opcode::TensorTensorBitvec, Opcode::BatchNormBackProp,
                    Opcode::CopyPredicated, Opcode::CastPredicated}) {
    add(op, "s3s3d3_tt_src_element_cnt_check", "src0 elements vs src1 elements",
        MUT(S3S3D3_TT, s.src1.num[2] = 2));
    add(op, "s3s3d3_tt_dst_element_cnt_check", "dst elements vs src0 elements",
        MUT(S3S3D3_TT, s.dst.num[2] = 3));
    add(op, "s3s3d3_tt_dst_element_cnt_check", "dst elements vs src0 elements",
        MUT(S3S3D3_TT, s.dst.num[0] = 1));
    add(op, "tt_valid_partitions", "src0, src1 start partitions",
        MUT(S3S3D3_TT, s.src1.addr = MakeAddress(Space::Sbuf, 32, kSrcB, kCayman)));
    add(op, "tt_valid_partitions", "src0, src1 start partitions",
        MUT(S3S3D3_TT, s.src0.addr = MakeAddress(Space::Sbuf, 63, kSrcA, kCayman);
            s.src1.addr = MakeAddress(Space::Sbuf, 64, kSrcB, kCayman); s.num_active_channels = 1));
    add(op, "tt_valid_partitions", "src0, src1",
        MUT(S3S3D3_TT, s.src0.addr = kPsumBase + 0x100; s.src1.addr = kPsumBase + 0x1000));
  }
}

void TensorScalarCases(std::vector<Case>& cs) {
  // ---- S3D3_TS ----
  const std::vector<Opcode> ts_all = {Opcode::TensorScalarArith, Opcode::TensorScalarBitvec,
                                      Opcode::TensorScalarPtrArith, Opcode::TensorScalarPtrBitvec,
                                      Opcode::TransposeTensorScalarArith};
  for (Opcode op : ts_all) {
    const bool bv = InfoOf(op).alu_class == AluClass::Bitvec;
    const bool ptr = op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec;
    // tensor_scalar_valid_ops
    add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::DIVIDE)));
    add(op, "tensor_scalar_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::POW)));
    add(op, "tensor_scalar_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::MOD)));
    add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = 0x1E));
    add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::ABS_MAX)));
    add(op, "tensor_scalar_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::ADD_INT)));
    if (op != Opcode::TensorScalarArith)  // the RSQRT form is 0x43's only
      add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::RSQRT); s.op1 = 0;
                                                     s.imm0 = s.imm1 = 0; s.imm0_src = s.imm1_src = 0));
    add(op, "tensor_scalar_valid_ops", "op0, op1",
        MUT(S3D3_TS, s.op0 = 0; s.op1 = bv ? A(AluOp::BITWISE_AND) : A(AluOp::ADD)));
    if (bv) {
      add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::ADD)));
      add(op, "tensor_scalar_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::CRC32)));
    } else {
      add(op, "tensor_scalar_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::BITWISE_AND)));
      add(op, "tensor_scalar_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::RSQRT)));
    }
    // tensor_scalar_valid_types
    if (bv) {
      add(op, "tensor_scalar_valid_types", "in_dtype, out_dtype",
          MUT(S3D3_TS, s.out_dtype = s.in_dtype == D(Dtype::INT16) ? D(Dtype::UINT16) : D(Dtype::INT32)));
      add(op, "tensor_scalar_valid_types", "in_dtype, out_dtype",
          MUT(S3D3_TS, s.in_dtype = s.out_dtype = D(Dtype::FP32)));
    } else {
      add(op, "tensor_scalar_valid_types", "in_dtype", MUT(S3D3_TS, s.in_dtype = D(Dtype::FP32R)));
      add(op, "tensor_scalar_valid_types", "in_dtype", MUT(S3D3_TS, s.in_dtype = 0x10));
      add(op, "tensor_scalar_valid_types", "out_dtype", MUT(S3D3_TS, s.out_dtype = D(Dtype::UINT64)));
    }
    // immediates
    if (ptr) {
      add(op, "ts_ptr_imm_chk", "imm0_src", MUT(S3D3_TS, s.imm0_src = 1));
      add(op, "ts_ptr_imm_chk", "imm1_src", MUT(S3D3_TS, s.imm1_src = 2));
      add(op, "ts_ptr_imm_chk", "imm0 offset", MUT(S3D3_TS, s.imm0 = kPtrA + 1));
      add(op, "ts_ptr_imm_chk", "imm1 address", MUT(S3D3_TS, s.imm1 = 0x20003000));
      add(op, "ts_ptr_imm_chk", "imm0 address", MUT(S3D3_TS, s.imm0 = 0x1FFFFFFC));
      add(op, "ts_ptr_imm_chk", "imm1 offset", MUT(S3D3_TS, s.imm1 = 224 << 10));
      add(op, "ts_ptr_imm_chk", "imm1 address", MUT(S3D3_TS, s.imm1 = 0x80004000));
    } else {
      const char* p = "tensor_scalar_immediates_check";
      add(op, p, "imm0_src", MUT(S3D3_TS, s.imm0_src = 3));
      add(op, p, "imm1_src", MUT(S3D3_TS, s.imm1_src = 0xFF));
      add(op, p, "imm0 offset", MUT(S3D3_TS, s.imm0_src = 1; s.imm0 = kPtrA + 2));
      add(op, p, "imm1 (IMM_REG)", MUT(S3D3_TS, s.imm1_src = 2; s.imm1 = 65));
      add(op, p, "imm0 (IMM_REG)", MUT(S3D3_TS, s.imm0_src = 2; s.imm0 = 0x105));
      add(op, p, "imm1 address", MUT(S3D3_TS, s.imm1_src = 1; s.imm1 = 0x40003000));
      add(op, p, "imm0 address", MUT(S3D3_TS, s.imm0_src = 1; s.imm0 = 0x1FFFFFF0));
      add(op, p, "imm0 offset", MUT(S3D3_TS, s.imm0_src = 1; s.imm0 = 224 << 10));
      if (bv) {
        add(op, p, "imm0", MUT(S3D3_TS, s.in_dtype = s.out_dtype = D(Dtype::UINT8); s.imm0 = 0x100));
        add(op, p, "imm1",
            MUT(S3D3_TS, s.in_dtype = s.out_dtype = D(Dtype::INT16); s.imm1 = 0x10000));
      }
    }
    // tensor_scalar_shift_chk (bitvec only)
    if (bv) {
      add(op, "tensor_scalar_shift_chk", "in_dtype",
          MUT(S3D3_TS, s.op0 = A(AluOp::LOGICAL_SHIFT_LEFT); s.op1 = A(AluOp::LOGICAL_SHIFT_RIGHT);
              s.in_dtype = s.out_dtype = D(Dtype::UINT16)));
      add(op, "tensor_scalar_shift_chk", "in_dtype",
          MUT(S3D3_TS, s.op0 = A(AluOp::ARITH_SHIFT_LEFT); s.op1 = A(AluOp::ARITH_SHIFT_RIGHT);
              s.in_dtype = s.out_dtype = D(Dtype::INT8)));
      add(op, "tensor_scalar_shift_chk", "in_dtype",
          MUT(S3D3_TS, s.op0 = A(AluOp::ARITH_SHIFT_RIGHT); s.in_dtype = s.out_dtype = D(Dtype::INT16)));
      add(op, "tensor_scalar_shift_chk", "in_dtype",
          MUT(S3D3_TS, s.op1 = A(AluOp::ARITH_SHIFT_RIGHT); s.in_dtype = s.out_dtype = D(Dtype::UINT8)));
    }
    add(op, "tensor_scalar_tensor_chk", "dst elements", MUT(S3D3_TS, s.dst.num[1] = 2));
    add(op, "tensor_scalar_tensor_chk", "dst elements", MUT(S3D3_TS, s.src.num[0] = 16));
    add(op, "tensor_scalar_reverse_chk", "reverse_operands", MUT(S3D3_TS, s.reverse_operands = 4));
    add(op, "tensor_scalar_reverse_chk", "reverse_operands", MUT(S3D3_TS, s.reverse_operands = 0xFF));
    add(op, "has_zero_accum_cmd_field", "accumulator_cmd", MUT(S3D3_TS, s.accumulator_cmd = 2));
    add(op, "has_zero_accum_cmd_field", "accumulator_cmd", MUT(S3D3_TS, s.accumulator_cmd = 1));
  }
  // the RSQRT form requires reverse None
  add(Opcode::TensorScalarArith, "tensor_scalar_reverse_chk", "reverse_operands",
      MUT(S3D3_TS, s.op0 = A(AluOp::RSQRT); s.op1 = 0; s.imm0 = s.imm1 = 0; s.reverse_operands = 1));
  add(Opcode::TensorScalarArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::RSQRT); s.op1 = 0; s.imm0 = 0; s.imm1 = 0; s.imm1_src = 1));
  add(Opcode::TensorScalarArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::RSQRT); s.op1 = A(AluOp::ADD); s.imm0 = s.imm1 = 0));
  // the integer arm is MAVERICK's and 0x43's only
  add(Opcode::TensorScalarArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::ADD_INT); s.op1 = A(AluOp::MAX_INT)), kMariana);
  add(Opcode::TensorScalarPtrArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::ADD_INT); s.op1 = A(AluOp::MAX_INT)), kMaverick);
  add(Opcode::TensorScalarArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::DIVIDE_INT); s.op1 = A(AluOp::MAX_INT)), kMaverick);
  add(Opcode::TensorScalarArith, "tensor_scalar_valid_ops", "op0",
      MUT(S3D3_TS, s.op0 = A(AluOp::ADD_INT); s.op1 = A(AluOp::ADD)), kMaverick);
  {
    const Opcode op = Opcode::TransposeTensorScalarArith;
    add(op, "s3d3_transpose_check", "src elements",
        MUT(S3D3_TS, s.src.num[0] = 48; s.dst.num[0] = 48));
    add(op, "s3d3_transpose_check", "src elements", MUT(S3D3_TS, s.src.num[0] = 1; s.dst.num[0] = 1));
    add(op, "s3d3_transpose_check", "num_active_channels", MUT(S3D3_TS, s.num_active_channels = 16));
    add(op, "s3d3_transpose_check", "num_active_channels", MUT(S3D3_TS, s.num_active_channels = 1));
  }
  for (Opcode op : {Opcode::TensorScalarCacheReduce, Opcode::TensorScalarCacheCumulative}) {
    add(op, "ts_cache_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::DIVIDE)));
    add(op, "ts_cache_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::BITWISE_OR)));
    add(op, "ts_cache_valid_ops", "op0", MUT(S3D3_TS, s.op0 = A(AluOp::ABS_MIN)));
    add(op, "ts_cache_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::IS_EQ)));
    add(op, "ts_cache_valid_ops", "op1", MUT(S3D3_TS, s.op1 = A(AluOp::BYPASS)));
    add(op, "ts_cache_accum_cmd", "accumulator_cmd", MUT(S3D3_TS, s.accumulator_cmd = 0));
    add(op, "ts_cache_accum_cmd", "accumulator_cmd", MUT(S3D3_TS, s.accumulator_cmd = 1));
    add(op, "ts_cache_accum_cmd", "accumulator_cmd", MUT(S3D3_TS, s.accumulator_cmd = 5));
    add(op, "ts_cache_imm1", "imm1, imm1_src", MUT(S3D3_TS, s.imm1 = 1));
    add(op, "ts_cache_imm1", "imm1, imm1_src", MUT(S3D3_TS, s.imm1_src = 1));
    add(op, "ts_cache_imm1", "imm1, imm1_src",
        MUT(S3D3_TS, s.accumulator_cmd = 3; s.imm1 = Bits(-0.0f)));
    add(op, "ts_cache_dtypes", "in_dtype", MUT(S3D3_TS, s.in_dtype = D(Dtype::INT32)));
    add(op, "ts_cache_dtypes", "in_dtype", MUT(S3D3_TS, s.in_dtype = D(Dtype::UINT32)));
    add(op, "ts_cache_dtypes", "in_dtype", MUT(S3D3_TS, s.in_dtype = D(Dtype::FP32R)));
    add(op, "ts_cache_dtypes", "out_dtype", MUT(S3D3_TS, s.out_dtype = D(Dtype::INT64)));
    add(op, "tensor_scalar_reverse_chk", "reverse_operands", MUT(S3D3_TS, s.reverse_operands = 1));
    add(op, "tensor_scalar_reverse_chk", "reverse_operands", MUT(S3D3_TS, s.reverse_operands = 3));
    add(op, "tensor_scalar_immediates_check", "imm0 offset",
        MUT(S3D3_TS, s.imm0_src = 1; s.imm0 = kPtrA + 2));
    add(op, "tensor_scalar_immediates_check", "imm0_src", MUT(S3D3_TS, s.imm0_src = 3));
    add(op, "tensor_scalar_immediates_check", "imm1_src",
        MUT(S3D3_TS, s.accumulator_cmd = 4; s.imm1_src = 3));
    add(op, "tensor_scalar_tensor_chk", "dst elements", MUT(S3D3_TS, s.dst.num[1] = 2));
  }
}

void PtrMultiCases(std::vector<Case>& cs) {
  // ---- S4D4_TSM ----
  for (Opcode op : {Opcode::TensorScalarPtrMultiArith, Opcode::TensorScalarPtrMultiBitvec}) {
    const bool bv = op == Opcode::TensorScalarPtrMultiBitvec;
    add(op, "has_tsm_num_scalars", "W = src num[3]", MUT(S4D4_TSM, s.src.num[3] = 9; s.dst.num[0] = 36));
    add(op, "has_tsm_num_scalars", "W = src num[3]",
        MUT(S4D4_TSM, s.src.num[3] = 16; s.src.num[0] = 1; s.dst.num[0] = 16));
    add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = A(AluOp::DIVIDE)));
    add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = 0x26));
    if (bv) {
      add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = A(AluOp::ADD)));
      add(op, "tsm_valid_types", "in_dtype, out_dtype",
          MUT(S4D4_TSM, s.in_dtype = s.out_dtype = D(Dtype::INT16)));
      add(op, "tsm_valid_types", "in_dtype, out_dtype",
          MUT(S4D4_TSM, s.in_dtype = s.out_dtype = D(Dtype::INT8)));
      add(op, "tsm_valid_types", "in_dtype, out_dtype", MUT(S4D4_TSM, s.out_dtype = D(Dtype::UINT32)));
    } else {
      add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = A(AluOp::BITWISE_AND)));
      add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = A(AluOp::ABS_MAX)));
      add(op, "tsm_valid_op", "op", MUT(S4D4_TSM, s.op = A(AluOp::POW)));
      add(op, "tsm_valid_types", "in_dtype", MUT(S4D4_TSM, s.in_dtype = D(Dtype::FP32R)));
      add(op, "tsm_valid_types", "out_dtype", MUT(S4D4_TSM, s.out_dtype = D(Dtype::INVALID)));
    }
    add(op, "tsm_op_dim_xyz", "op_dim", MUT(S4D4_TSM, s.op_dim = 5));
    add(op, "tsm_op_dim_xyz", "op_dim", MUT(S4D4_TSM, s.op_dim = 0));
    add(op, "tsm_reverse_chk", "reverse_operands", MUT(S4D4_TSM, s.reverse_operands = 1));
    add(op, "tsm_reverse_chk", "reverse_operands", MUT(S4D4_TSM, s.reverse_operands = 2));
    add(op, "tsm_reverse_chk", "reverse_operands", MUT(S4D4_TSM, s.reverse_operands = 4));
    add(op, "same_element_count_t4d", "dst elements", MUT(S4D4_TSM, s.dst.num[0] = 9));
    add(op, "same_element_count_t4d", "dst elements", MUT(S4D4_TSM, s.src.num[3] = 1));
  }
}

void RestCases(std::vector<Case>& cs) {
  // ---- the rest ----
  {
    const Opcode op = Opcode::MatchReplace8;
    add(op, "has_match_replace8_src_element_cnt", "src elements", MUT(S4D4_MR, s.src.num[1] = 257));
    add(op, "has_match_replace8_src_element_cnt", "src elements",
        MUT(S4D4_MR, s.src.num[0] = 16385; s.dst.num[0] = 16385));
    add(op, "match_replace8_same_element_count", "dst elements", MUT(S4D4_MR, s.dst.num[0] = 63));
    add(op, "match_replace_dtypes", "in_dtype", MUT(S4D4_MR, s.in_dtype = D(Dtype::INT8)));
    add(op, "match_replace_dtypes", "in_dtype", MUT(S4D4_MR, s.in_dtype = D(Dtype::INVALID)));
    add(op, "match_replace_dtypes", "out_dtype", MUT(S4D4_MR, s.out_dtype = D(Dtype::FP8_EXP3)));
    add(op, "match_replace_dtypes", "out_dtype", MUT(S4D4_MR, s.out_dtype = D(Dtype::FP32R)));
  }
  for (Opcode op : {Opcode::Copy, Opcode::Cast, Opcode::Reciprocal}) {
    add(op, "s4d4_tr_zero_op", "op", MUT(S4D4_TR, s.op = A(AluOp::ADD)));
    add(op, "s4d4_tr_mask_disabled", "mask_enable", MUT(S4D4_TR, s.mask_enable = 1));
    add(op, "s4d4_tr_op_dim", "op_dim", MUT(S4D4_TR, s.op_dim = 3));
    add(op, "s4d4_tr_op_dim", "op_dim", MUT(S4D4_TR, s.op_dim = 1));
    add(op, "s4d4_tr_op_dim", "op_dim", MUT(S4D4_TR, s.op_dim = 4));
    add(op, "s4d4_tr_same_element_count", "dst elements", MUT(S4D4_TR, s.dst.num[1] = 2));
    add(op, "s4d4_tr_same_element_count", "dst elements", MUT(S4D4_TR, s.src.num[3] = 2));
    add(op, "s4d4_tr_dtypes", "in_dtype", MUT(S4D4_TR, s.in_dtype = D(Dtype::FP32R)));
    add(op, "s4d4_tr_dtypes", "in_dtype", MUT(S4D4_TR, s.in_dtype = 0x10));
    add(op, "s4d4_tr_dtypes", "out_dtype", MUT(S4D4_TR, s.out_dtype = D(Dtype::INVALID)));
    if (op == Opcode::Copy) {
      add(op, "s4d4_tr_dtypes", "out_dtype", MUT(S4D4_TR, s.out_dtype = D(Dtype::BFLOAT16)));
      add(op, "s4d4_tr_dtypes", "out_dtype", MUT(S4D4_TR, s.out_dtype = D(Dtype::FP32R)));
    }
    if (op == Opcode::Reciprocal) {
      add(op, "s4d4_tr_dtypes", "in_dtype", MUT(S4D4_TR, s.in_dtype = D(Dtype::INT32)));
      add(op, "s4d4_tr_dtypes", "out_dtype", MUT(S4D4_TR, s.out_dtype = D(Dtype::FP8_EXP4)));
      add(op, "s4d4_tr_dtypes", "out_dtype", MUT(S4D4_TR, s.out_dtype = D(Dtype::FP32R)));
      add(op, "s4d4_tr_negated", "negated", MUT(S4D4_TR, s.negated = 1));
    } else {
      add(op, "s4d4_tr_negated", "negated", MUT(S4D4_TR, s.negated = 2));
      add(op, "s4d4_tr_negated", "negated", MUT(S4D4_TR, s.negated = 0xFF));
    }
  }
  {
    const Opcode op = Opcode::Memset;
    add(op, "memset_dtype", "dtype", MUT(D4_MR, s.dtype = 0x11));
    add(op, "memset_dtype", "dtype", MUT(D4_MR, s.dtype = D(Dtype::INT64)));
    add(op, "memset_dtype", "dtype", MUT(D4_MR, s.dtype = D(Dtype::INVALID)));
    add(op, "d4_mr_element_count", "dst_element_count", MUT(D4_MR, s.dst_element_count = 31));
    add(op, "d4_mr_element_count", "dst_element_count", MUT(D4_MR, s.dst.num[2] = 2));
    add(op, "memset_value_width", "set_value", MUT(D4_MR, s.dtype = D(Dtype::BFLOAT16)));
    add(op, "memset_value_width", "set_value",
        MUT(D4_MR, s.dtype = D(Dtype::UINT16); s.set_value = 0x10000));
    add(op, "memset_value_width", "set_value", MUT(D4_MR, s.dtype = D(Dtype::INT8); s.set_value = 0x100));
    add(op, "d4_mr_serial_mode", "serialization_mode", MUT(D4_MR, s.serialization_mode = 1));
  }
  {
    const Opcode op = Opcode::DveReadIndices;
    add(op, "read_indices_dtype", "dtype", MUT(D4_MR, s.dtype = D(Dtype::INT32)));
    add(op, "read_indices_dtype", "dtype", MUT(D4_MR, s.dtype = D(Dtype::UINT8)));
    add(op, "d4_mr_element_count", "dst elements", MUT(D4_MR, s.dst.num[0] = 4));
    add(op, "d4_mr_element_count", "dst_element_count", MUT(D4_MR, s.dst_element_count = 7));
    add(op, "d4_mr_element_count", "dst elements",
        MUT(D4_MR, s.dst.num[0] = 16; s.dst_element_count = 16));
    add(op, "read_indices_zero_value", "set_value", MUT(D4_MR, s.set_value = 1));
    add(op, "d4_mr_serial_mode", "serialization_mode", MUT(D4_MR, s.serialization_mode = 2));
  }
  {
    const Opcode op = Opcode::DveReadAccumulator;
    add(op, "d1_rd_element_count", "dst_element_count", MUT(D1_RD, s.dst_element_count = 2));
    add(op, "d1_rd_element_count", "dst_element_count", MUT(D1_RD, s.dst_element_count = 0));
    add(op, "d1_rd_element_count", "dst elements", MUT(D1_RD, s.dst.num[0] = 2));
    add(op, "read_accumulator_dtype", "dtype", MUT(D1_RD, s.dtype = D(Dtype::INT32)));
    add(op, "read_accumulator_dtype", "dtype", MUT(D1_RD, s.dtype = D(Dtype::UINT8)));
    add(op, "read_accumulator_dtype", "dtype", MUT(D1_RD, s.dtype = D(Dtype::INVALID)));
    add(op, "d1_rd_negated", "negated", MUT(D1_RD, s.negated = 2));
  }
  {
    const Opcode op = Opcode::LoadParameterRam;
    add(op, "ctrl_im_imm_ptr_select_zero", "imm_ptr_select", MUT(CTRL_IM, s.imm_ptr_select = 1));
    add(op, "param_ram_offset_range", "param_ram_offset", MUT(CTRL_IM, s.param_ram_offset = 249));
    add(op, "param_ram_offset_range", "param_ram_offset", MUT(CTRL_IM, s.param_ram_offset = 0xFFFF));
  }
}

void ExecutionOnlyCases(std::vector<Case>& cs) {
  // ---- execution-only: alu_op_supported ----
  {
    Case c{Opcode::TensorScalarPtrMultiBitvec, "alu_op_supported", "op",
           MUT(S4D4_TSM, s.op = A(AluOp::CRC32)), ErrorKind::Unsupported};
    c.execution = true;
    for (Generation g : kAllGenerations) {
      c.gen = g;
      cs.push_back(c);
    }
    Case m{Opcode::TensorScalarArith, "alu_op_supported", "op0, op1",
           MUT(S3D3_TS, s.op0 = A(AluOp::ADD_INT); s.op1 = A(AluOp::MAX_INT)), ErrorKind::Unsupported};
    m.execution = true;
    m.gen = kMaverick;
    cs.push_back(m);
    m.mutate = MUT(S3D3_TS, s.op0 = A(AluOp::IS_LT_INT); s.op1 = A(AluOp::BYPASS));
    cs.push_back(m);
  }
}
#undef add

std::vector<Case> OpcodeCases() {
  std::vector<Case> cs;
  S4D2Cases(cs);
  GradAccumCases(cs);
  S2Cases(cs);
  ParamLoad2Cases(cs);
  TensorTensorCases(cs);
  TensorScalarCases(cs);
  PtrMultiCases(cs);
  RestCases(cs);
  ExecutionOnlyCases(cs);
  return cs;
}

std::vector<Case> AllCases() {
  std::vector<Case> cs = SharedCases();
  for (Case& c : OpcodeCases()) cs.push_back(std::move(c));
  std::map<std::string, int> seen;
  for (Case& c : cs) {
    std::string l = Cat(InfoOf(c.op).name, "_", c.pred, "_", GenerationName(c.gen));
    c.label = Cat(l, "_", seen[l]++);
  }
  return cs;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << InfoOf(c.op).name << " " << GenerationName(c.gen) << " " << c.pred << " [" << c.field << "]";
}

class NegativeTest : public ::testing::TestWithParam<Case> {};

TEST_P(NegativeTest, ReportsExactlyThisPredicate) {
  const Case& c = GetParam();
  Instruction inst = Base(c.op);
  if (IsGeneratable(c.op, c.gen)) {
    ASSERT_FALSE(CheckInstruction(inst, c.gen).has_value())
        << "base not valid: " << Describe(CheckInstruction(inst, c.gen));
  }
  c.mutate(inst);
  // Placed as record #5 of a program whose other records are valid.
  std::vector<Instruction> program(5, Base(Opcode::EngineNop));
  program.push_back(inst);
  program.push_back(Base(Opcode::EngineNop));
  if (c.execution) {
    EXPECT_FALSE(CheckInstruction(inst, c.gen).has_value()) << Describe(CheckInstruction(inst, c.gen));
    EXPECT_TRUE(ValidateProgram(program, c.gen, /*for_execution=*/false).ok());
  }
  const absl::Status st = c.execution ? ValidateProgram(program, c.gen, true)
                                      : ValidateProgram(program, c.gen, false);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(ErrorKindOf(st), c.kind) << st;
  EXPECT_EQ(PredicateOf(st), c.pred) << st;
  const std::string msg = st.ToString();
  const std::string op_label = Cat(InfoOf(c.op).name, " (", Hex(static_cast<uint8_t>(c.op), 2), ")");
  EXPECT_NE(msg.find(Cat(ErrorKindName(c.kind), ": #5 @0x140 ", op_label, ": ", c.pred, ": ")),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(c.field), std::string::npos) << "field '" << c.field << "' in " << msg;
  EXPECT_NE(msg.find(", expected "), std::string::npos) << msg;
  // The single-record forms agree.
  if (!c.execution) {
    const absl::Status one = Validate(inst, c.gen, 5);
    EXPECT_EQ(std::string(one.message()), std::string(st.message()));
    EXPECT_EQ(PredicateOf(one), PredicateOf(st));
    EXPECT_EQ(ErrorKindOf(one), ErrorKindOf(st));
    const auto v = CheckInstruction(inst, c.gen);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->predicate, c.pred);
    EXPECT_EQ(v->kind, c.kind);
  } else {
    const auto v = CheckExecutable(inst, c.gen);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->predicate, c.pred);
  }
}

INSTANTIATE_TEST_SUITE_P(Validation, NegativeTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.label;
                         });

// Every predicate of validation.md §2-§3 that the validator can report (the runtime ones and
// the device profile's opcode_in_table_set are not its business).
const std::set<std::string> kSpecPredicates = {
    "has_valid_neuron_header", "has_valid_neuron_events", "events_mode_supported",
    "opcode_in_generation", "opcode_supported", "check_active_channels",
    "start_addr_active_channels", "tensor1d_valid", "tensor2d_valid", "tensor3d_valid",
    "tensor4d_valid", "address_mode_supported", "s4d2_bn_reserved_zero",
    "s2_bn_reserved_zero", "s2_bnpl2_reserved_zero",
    "s3d3_ts_reserved_zero", "s4d4_tsm_reserved_zero", "s4d4_mr_reserved_zero",
    "s4d4_tr_reserved_zero", "d4_mr_reserved_zero", "d1_rd_reserved_zero", "ctrl_im_reserved_zero",
    "engine_nop_zero_payload", "tt_valid_partitions", "alu_op_supported",
    // S4D2_BN
    "has_bnstats2_src_element_cnt", "has_bnstats2_dst_element_cnt", "has_bns_finite_even_count",
    "has_bns_finite_odd_count", "s4d2_bn_stats_in_type", "s4d2_bn_stats_out_type",
    "has_transpose_src_element_cnt", "has_multiple_32_channels", "has_bnstats_src_element_cnt",
    "has_bnstats_dst_element_cnt", "has_bnstats_agg_src_element_cnt",
    "has_bnstats_agg_dst_element_cnt", "s4d2_bn_zero_counts", "s4d2_bn_agg_in_type",
    "s4d2_bn_agg_out_type", "has_max8_src_element_cnt", "has_max8_dst_element_cnt",
    "s4d2_bn_in_dtype", "max8_out_type", "has_find_index8_src_element_cnt",
    "has_find_index8_dst_element_cnt", "has_find_index8_dst_type",
    // GradAccum
    "bnga_valid_input_type", "bnga_valid_output_type", "bnga_valid_immediate_type",
    "bnga_src_element_cnt_check", "bnga_dst_element_cnt_check", "bnga_imm_check",
    "bnga2_imm_check",
    // S2_BN, ParamLoad2
    "has_bn_param_load_src_element_cnt", "s2_bn_finite_n", "has_valid_bn_param_load_imm0",
    "s2_bn_dtype", "has_match_value_load_src_element_cnt", "has_s2_bn_zero_immediates",
    "s2_bn_mvl_dtype", "has_tsm_immediates_load_src_element_cnt", "tsm_immld_dtypes",
    "has_bnpl2_src_element_cnt", "s2_bnpl2_finite_element_count", "s2_bnpl2_src_dtype",
    "s2_bnpl2_immediate_dtype", "has_valid_s2_bnpl2_imm_ptr",
    // S3S3D3_TT
    "tensor_tensor_arith_op", "tensor_tensor_dtypes", "tensor_tensor_int_signedness",
    "tensor_tensor_bitvec_op", "tensor_tensor_bitvec_dtypes", "s3s3d3_tt_src_element_cnt_check",
    "s3s3d3_tt_dst_element_cnt_check", "s3s3d3_tt_is_zero_op", "bn_backprop_dtypes",
    "s3s3d3_copy_pred_src0_dtype", "s3s3d3_copy_cast_pred_src1_dst_dtype",
    // S3D3_TS
    "tensor_scalar_valid_ops", "tensor_scalar_valid_types", "tensor_scalar_immediates_check",
    "ts_ptr_imm_chk", "tensor_scalar_shift_chk", "tensor_scalar_tensor_chk",
    "tensor_scalar_reverse_chk", "has_zero_accum_cmd_field", "s3d3_transpose_check",
    "ts_cache_valid_ops", "ts_cache_accum_cmd", "ts_cache_imm1", "ts_cache_dtypes",
    // S4D4_TSM
    "has_tsm_num_scalars", "tsm_valid_op", "tsm_valid_types", "tsm_op_dim_xyz", "tsm_reverse_chk",
    "same_element_count_t4d",
    // the rest
    "has_match_replace8_src_element_cnt", "match_replace8_same_element_count",
    "match_replace_dtypes", "s4d4_tr_zero_op", "s4d4_tr_mask_disabled", "s4d4_tr_op_dim",
    "s4d4_tr_same_element_count", "s4d4_tr_dtypes", "s4d4_tr_negated", "memset_dtype",
    "d4_mr_element_count", "memset_value_width", "d4_mr_serial_mode", "read_indices_dtype",
    "read_indices_zero_value", "d1_rd_element_count", "read_accumulator_dtype", "d1_rd_negated",
    "ctrl_im_imm_ptr_select_zero", "param_ram_offset_range"};

// The §3 rows of each opcode (validation.md), by name.
std::vector<std::string> SpecRows(Opcode op) {
  const std::vector<std::string> stats2 = {
      "has_bnstats2_src_element_cnt", "has_bnstats2_dst_element_cnt", "has_bns_finite_even_count",
      "has_bns_finite_odd_count", "s4d2_bn_stats_in_type", "s4d2_bn_stats_out_type"};
  const std::vector<std::string> tt_common = {"s3s3d3_tt_src_element_cnt_check",
                                              "s3s3d3_tt_dst_element_cnt_check", "tt_valid_partitions"};
  auto cat = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::string> ts = {"tensor_scalar_valid_ops", "tensor_scalar_valid_types",
                                       "tensor_scalar_tensor_chk", "tensor_scalar_reverse_chk",
                                       "has_zero_accum_cmd_field"};
  const std::vector<std::string> ga = {"bnga_valid_input_type", "bnga_valid_output_type",
                                       "bnga_valid_immediate_type", "bnga_src_element_cnt_check",
                                       "bnga_dst_element_cnt_check", "tt_valid_partitions"};
  switch (op) {
    case Opcode::BatchNormStats2: return stats2;
    case Opcode::TransposeBatchNormStats2:
      return cat(stats2, {"has_transpose_src_element_cnt", "has_multiple_32_channels"});
    case Opcode::BatchNormStats:
      return {"has_bnstats_src_element_cnt", "has_bnstats_dst_element_cnt",
              "has_bns_finite_even_count", "has_bns_finite_odd_count", "s4d2_bn_stats_in_type",
              "s4d2_bn_stats_out_type"};
    case Opcode::BatchNormAggregate:
      return {"has_bnstats_agg_src_element_cnt", "has_bnstats_agg_dst_element_cnt",
              "s4d2_bn_zero_counts", "s4d2_bn_agg_in_type", "s4d2_bn_agg_out_type"};
    case Opcode::Max8:
      return {"has_max8_src_element_cnt", "has_max8_dst_element_cnt", "s4d2_bn_zero_counts",
              "s4d2_bn_in_dtype", "max8_out_type"};
    case Opcode::FindIndex8:
      return {"has_find_index8_src_element_cnt", "has_find_index8_dst_element_cnt",
              "s4d2_bn_zero_counts", "s4d2_bn_in_dtype", "has_find_index8_dst_type"};
    case Opcode::BatchNormGradAccumulate: return cat(ga, {"bnga_imm_check"});
    case Opcode::BatchNormGradAccumulate2: return cat(ga, {"bnga2_imm_check"});
    case Opcode::BatchNormParamLoad:
      return {"has_bn_param_load_src_element_cnt", "s2_bn_finite_n",
              "has_valid_bn_param_load_imm0", "s2_bn_dtype"};
    case Opcode::MatchValueLoad:
      return {"has_match_value_load_src_element_cnt", "has_s2_bn_zero_immediates", "s2_bn_mvl_dtype"};
    case Opcode::TensorScalarImmLdArith:
    case Opcode::TensorScalarImmLdBitvec:
      return {"has_tsm_immediates_load_src_element_cnt", "has_s2_bn_zero_immediates",
              "tsm_immld_dtypes"};
    case Opcode::BatchNormParamLoad2:
      return {"has_bnpl2_src_element_cnt", "s2_bnpl2_finite_element_count", "s2_bnpl2_src_dtype",
              "s2_bnpl2_immediate_dtype", "has_valid_s2_bnpl2_imm_ptr"};
    case Opcode::TensorTensorArith:
      return cat({"tensor_tensor_arith_op", "tensor_tensor_dtypes", "tensor_tensor_int_signedness"},
                 tt_common);
    case Opcode::TensorTensorBitvec:
      return cat({"tensor_tensor_bitvec_op", "tensor_tensor_bitvec_dtypes"}, tt_common);
    case Opcode::BatchNormBackProp: return cat({"s3s3d3_tt_is_zero_op", "bn_backprop_dtypes"}, tt_common);
    case Opcode::CopyPredicated:
    case Opcode::CastPredicated:
      return cat({"s3s3d3_tt_is_zero_op", "s3s3d3_copy_pred_src0_dtype",
                  "s3s3d3_copy_cast_pred_src1_dst_dtype"},
                 tt_common);
    case Opcode::TensorScalarArith:
      return cat(ts, {"tensor_scalar_immediates_check"});
    case Opcode::TensorScalarBitvec:
      return cat(ts, {"tensor_scalar_immediates_check", "tensor_scalar_shift_chk"});
    case Opcode::TensorScalarPtrArith: return cat(ts, {"ts_ptr_imm_chk"});
    case Opcode::TensorScalarPtrBitvec: return cat(ts, {"ts_ptr_imm_chk", "tensor_scalar_shift_chk"});
    case Opcode::TransposeTensorScalarArith:
      return cat(ts, {"tensor_scalar_immediates_check", "s3d3_transpose_check"});
    case Opcode::TensorScalarCacheReduce:
    case Opcode::TensorScalarCacheCumulative:
      return {"ts_cache_valid_ops", "ts_cache_accum_cmd", "ts_cache_imm1", "ts_cache_dtypes",
              "tensor_scalar_reverse_chk", "tensor_scalar_immediates_check",
              "tensor_scalar_tensor_chk"};
    case Opcode::TensorScalarPtrMultiArith:
      return {"has_tsm_num_scalars", "tsm_valid_op", "tsm_valid_types", "tsm_op_dim_xyz",
              "tsm_reverse_chk", "same_element_count_t4d"};
    case Opcode::TensorScalarPtrMultiBitvec:
      return {"has_tsm_num_scalars", "tsm_valid_op", "tsm_valid_types", "tsm_op_dim_xyz",
              "tsm_reverse_chk", "same_element_count_t4d", "alu_op_supported"};
    case Opcode::MatchReplace8:
      return {"has_match_replace8_src_element_cnt", "match_replace8_same_element_count",
              "match_replace_dtypes"};
    case Opcode::Copy:
    case Opcode::Cast:
    case Opcode::Reciprocal:
      return {"s4d4_tr_zero_op", "s4d4_tr_mask_disabled", "s4d4_tr_op_dim",
              "s4d4_tr_same_element_count", "s4d4_tr_dtypes", "s4d4_tr_negated"};
    case Opcode::Memset:
      return {"memset_dtype", "d4_mr_element_count", "memset_value_width", "d4_mr_serial_mode"};
    case Opcode::DveReadIndices:
      return {"read_indices_dtype", "d4_mr_element_count", "read_indices_zero_value",
              "d4_mr_serial_mode"};
    case Opcode::DveReadAccumulator:
      return {"d1_rd_element_count", "read_accumulator_dtype", "d1_rd_negated"};
    case Opcode::LoadParameterRam: return {"ctrl_im_imm_ptr_select_zero", "param_ram_offset_range"};
    case Opcode::EngineNop: return {"engine_nop_zero_payload"};
    default: return {};
  }
}

TEST(NegativeCoverage, EveryPredicateOfEveryOpcodeHasACase) {
  std::set<std::pair<Opcode, std::string>> have;
  std::set<std::string> preds;
  for (const Case& c : AllCases()) {
    have.insert({c.op, c.pred});
    preds.insert(c.pred);
  }
  for (const std::string& p : kSpecPredicates) EXPECT_TRUE(preds.count(p)) << p;
  for (const std::string& p : preds) EXPECT_TRUE(kSpecPredicates.count(p)) << p;
  for (Opcode op : SupportedOpcodes()) {
    SCOPED_TRACE(InfoOf(op).name);
    std::vector<std::string> rows = SpecRows(op);
    rows.push_back("has_valid_neuron_header");
    rows.push_back("has_valid_neuron_events");
    rows.push_back("events_mode_supported");
    const Instruction base = Base(op);
    const Operands ops = OperandsOf(base);
    if (ops.has_channels) {
      rows.push_back("check_active_channels");
      rows.push_back("start_addr_active_channels");
    }
    for (const TensorField& t : TensorFieldsOf(base)) {
      rows.push_back(Cat("tensor", t.dims, "d_valid"));
      rows.push_back("address_mode_supported");
    }
    for (const FieldInfo& f : FieldsOf(base.info().strct))
      if (f.kind == FieldKind::Reserved && op != Opcode::EngineNop)
        rows.push_back(LowerStruct(base.info().strct) + "_reserved_zero");
    for (const std::string& r : rows) EXPECT_TRUE(have.count({op, r})) << r;
  }
  for (Opcode op : UnsupportedOpcodes()) EXPECT_TRUE(have.count({op, "opcode_supported"}));
  // tensor1d..4d_valid are each exercised on operands of that many dimensions.
  for (int d = 1; d <= 4; ++d) EXPECT_TRUE(preds.count(Cat("tensor", d, "d_valid")));
}

// ===================================================================================
// Positive edge cases: values at the edge of each rule are accepted.
// ===================================================================================
TEST(Positive, EdgeValuesAreAccepted) {
  struct P {
    Opcode op;
    Mutation m;
    Generation gen = kCayman;
  };
  const std::vector<P> ps = {
      {Opcode::BatchNormAggregate, MUT(S4D2_BN, s.even_count = -0.0f; s.odd_count = -0.0f)},
      {Opcode::BatchNormStats2, MUT(S4D2_BN, s.even_count = -3.4e38f; s.odd_count = 1e-45f)},
      {Opcode::MatchValueLoad, MUT(S2_BN, s.imm1 = Bits(-0.0f))},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.src.num[0] = 1; s.src.num[1] = 3)},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.imm0_src = 0)},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.imm0_src = 2; s.imm0_ptr = 63)},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.imm0_ptr = MakeRegisterAddress(9))},
      {Opcode::BatchNormParamLoad2, MUT(S2_BNPL2, s.src.num[0] = 1; s.src.num[1] = 2)},
      {Opcode::BatchNormParamLoad2,
       MUT(S2_BNPL2, s.imm0_src = 0; s.imm1_src = 2; s.imm1_ptr = 0; s.immediate_dtype = D(Dtype::FP16);
           s.imm0_ptr = kPsumBase + 2)},
      {Opcode::BatchNormGradAccumulate, MUT(S3S3D1_BN, s.imm0 = MakeRegisterAddress(63))},
      {Opcode::BatchNormGradAccumulate,
       MUT(S3S3D1_BN, s.src0.addr = kPsumBase; s.src1.addr = MakeAddress(Space::Sbuf, 100, 0, kCayman))},
      {Opcode::BatchNormGradAccumulate,
       MUT(S3S3D1_BN, s.src1.addr = MakeAddress(Space::Sbuf, 31, 0, kCayman);
           s.src0.addr = MakeAddress(Space::Sbuf, 17, 0, kCayman))},
      {Opcode::BatchNormGradAccumulate,
       MUT(S3S3D1_BN, s.immediate_dtype = D(Dtype::INT32); s.in_dtypes = Pair(Dtype::INT32, Dtype::FP16))},
      {Opcode::BatchNormGradAccumulate2, MUT(S3S3D1_BN2, s.imm_srcs = 0x22; s.imm0 = 5; s.imm1 = 63)},
      {Opcode::BatchNormGradAccumulate2, MUT(S3S3D1_BN2, s.imm_srcs = 0x21; s.imm1 = 0)},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.op = A(AluOp::ADD_INT);
                                      s.in_dtypes = Pair(Dtype::UINT8, Dtype::UINT16);
                                      s.out_dtype = D(Dtype::UINT32))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.op = A(AluOp::MOD))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.op = A(AluOp::MOD); s.in_dtypes = Pair(Dtype::INT8, Dtype::INT32);
                                      s.out_dtype = D(Dtype::INT16))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.op = A(AluOp::POW); s.out_dtype = D(Dtype::FP32R))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.op = A(AluOp::MIN_UINT);
                                      s.in_dtypes = Pair(Dtype::UINT32, Dtype::UINT32);
                                      s.out_dtype = D(Dtype::UINT8))},
      // tt_valid_partitions: a register source makes it true; one source in PSUM is fine
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.src0.addr = MakeRegisterAddress(3);
                                      s.src1.addr = MakeAddress(Space::Sbuf, 64, 0, kCayman))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.src0.addr = kPsumBase;
                                      s.src1.addr = MakeAddress(Space::Sbuf, 64, 0, kCayman))},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.dst.addr = kPsumBase + 0x100)},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op0 = A(AluOp::RSQRT); s.op1 = 0; s.imm0 = s.imm1 = 0)},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op0 = A(AluOp::ADD_INT); s.op1 = A(AluOp::MAX_INT)),
       kMaverick},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op0 = A(AluOp::SYMMETRIC_CLAMP)), kMaverick},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.reverse_operands = 3; s.imm0_src = 1; s.imm0 = kPtrA;
                                      s.imm1_src = 2; s.imm1 = 0)},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.imm1_src = 1; s.imm1 = MakeRegisterAddress(1))},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op1 = 0; s.imm1 = 0xFFFFFFFF)},  // unused, any value
      {Opcode::TensorScalarBitvec, MUT(S3D3_TS, s.in_dtype = s.out_dtype = D(Dtype::UINT8); s.imm0 = 0xFF)},
      {Opcode::TensorScalarBitvec, MUT(S3D3_TS, s.op0 = A(AluOp::ARITH_SHIFT_RIGHT);
                                       s.in_dtype = s.out_dtype = D(Dtype::INT32))},
      {Opcode::TensorScalarBitvec, MUT(S3D3_TS, s.op0 = A(AluOp::LOGICAL_SHIFT_RIGHT);
                                       s.op1 = A(AluOp::LOGICAL_SHIFT_LEFT);
                                       s.in_dtype = s.out_dtype = D(Dtype::UINT8))},
      {Opcode::TensorScalarPtrArith, MUT(S3D3_TS, s.imm0 = MakeRegisterAddress(2); s.imm1 = kPsumBase + 4)},
      {Opcode::TensorScalarCacheReduce,
       MUT(S3D3_TS, s.accumulator_cmd = 4; s.imm1_src = 0; s.imm1 = Bits(3.0f))},
      {Opcode::TensorScalarCacheCumulative, MUT(S3D3_TS, s.accumulator_cmd = 3; s.op0 = 0; s.op1 = A(AluOp::MIN))},
      {Opcode::TensorScalarPtrMultiBitvec, MUT(S4D4_TSM, s.op = A(AluOp::CRC32))},
      {Opcode::TensorScalarPtrMultiArith, MUT(S4D4_TSM, s.reverse_operands = 3; s.src.num[3] = 8;
                                              s.src.num[0] = 1; s.dst.num[0] = 8)},
      {Opcode::Cast, MUT(S4D4_TR, s.out_dtype = D(Dtype::FP32R); s.negated = 1; s.op_dim = 2)},
      {Opcode::Memset, MUT(D4_MR, s.dtype = D(Dtype::BFLOAT16); s.set_value = 0x3F80)},
      {Opcode::Memset, MUT(D4_MR, s.dtype = D(Dtype::FP32R))},
      {Opcode::DveReadAccumulator, MUT(D1_RD, s.dtype = D(Dtype::FP32R); s.negated = 1)},
      {Opcode::LoadParameterRam, MUT(CTRL_IM, s.param_ram_offset = 248)},
      {Opcode::Max8, MUT(S4D2_BN, s.src.num[0] = 8; s.in_dtype = D(Dtype::INT8); s.out_dtype = D(Dtype::FP32R))},
      {Opcode::Max8, MUT(S4D2_BN, s.src.num[0] = 16384)},
      {Opcode::BatchNormAggregate, MUT(S4D2_BN, s.src.num[0] = 3)},
      {Opcode::TransposeBatchNormStats2, MUT(S4D2_BN, s.num_active_channels = 128)},
  };
  for (size_t k = 0; k < ps.size(); ++k) {
    Instruction inst = Base(ps[k].op);
    ps[k].m(inst);
    EXPECT_FALSE(CheckInstruction(inst, ps[k].gen).has_value())
        << "#" << k << " " << InfoOf(ps[k].op).name << ": " << Describe(CheckInstruction(inst, ps[k].gen));
  }
}

TEST(Channels, CheckActiveChannels) {
  for (Opcode op : SupportedOpcodes()) {
    const Instruction base = Base(op);
    if (!OperandsOf(base).has_channels) continue;
    SCOPED_TRACE(InfoOf(op).name);
    const int at = FindField(base.info().strct, "num_active_channels")->offset;
    for (int n = 0; n < 256; ++n) {
      Instruction inst = base;
      inst.bytes[at] = static_cast<uint8_t>(n);
      const auto v = CheckInstruction(inst, kCayman);
      if (n == 0 || n > 128) {
        ASSERT_TRUE(v.has_value()) << n;
        EXPECT_EQ(v->predicate, "check_active_channels") << n;
      } else if (v.has_value()) {
        // In range: only the 32-channel rules of the transpose ops may object.
        EXPECT_TRUE(v->predicate == "has_multiple_32_channels" || v->predicate == "s3d3_transpose_check")
            << n << " " << Describe(v);
        EXPECT_NE(n % 32, 0);
      }
    }
  }
}

TEST(Channels, StartPartitionPlusChannels) {
  // p0 + n <= 128 exactly at the edge, for a tensor and for a pointer.
  for (uint32_t p0 : {0u, 1u, 64u, 112u, 113u, 127u}) {
    Instruction inst = Base(Opcode::BatchNormGradAccumulate);  // n = 16
    auto s = inst.as<S3S3D1_BN>();
    s.dst.addr = MakeAddress(Space::Sbuf, p0, kDstA, kCayman);
    StoreTo(s, inst.bytes.data());
    const auto v = CheckInstruction(inst, kCayman);
    if (p0 + 16 <= 128) { EXPECT_FALSE(v.has_value()) << p0 << Describe(v); }
    else { EXPECT_EQ(v ? v->predicate : "", "start_addr_active_channels") << p0; }
    Instruction ptr = Base(Opcode::BatchNormGradAccumulate);
    auto t = ptr.as<S3S3D1_BN>();
    t.imm1 = MakeAddress(Space::Psum, p0, 4, kCayman);
    StoreTo(t, ptr.bytes.data());
    const auto w = CheckInstruction(ptr, kCayman);
    if (p0 + 16 <= 128) { EXPECT_FALSE(w.has_value()) << p0 << Describe(w); }
    else { EXPECT_EQ(w ? w->predicate : "", "start_addr_active_channels") << p0; }
  }
}

// ===================================================================================
// Generation differences.
// ===================================================================================
TEST(Generations, OpcodesThatDoNotExist) {
  const Instruction ri = Base(Opcode::DveReadIndices);
  const Instruction ga = Base(Opcode::BatchNormGradAccumulate);
  const Instruction ga2 = Base(Opcode::BatchNormGradAccumulate2);
  for (Generation g : kAllGenerations) {
    SCOPED_TRACE(GenerationName(g));
    const auto v_ri = CheckInstruction(ri, g);
    const auto v_ga = CheckInstruction(ga, g);
    EXPECT_EQ(v_ri.has_value(), g == kSunda);
    EXPECT_EQ(v_ga.has_value(), g == kMaverick);
    if (v_ri) { EXPECT_EQ(v_ri->predicate, "opcode_in_generation"); }
    if (v_ga) { EXPECT_EQ(v_ga->predicate, "opcode_in_generation"); }
    EXPECT_FALSE(CheckInstruction(ga2, g).has_value());
    EXPECT_EQ(IsGeneratable(Opcode::DveReadIndices, g), g != kSunda);
    EXPECT_EQ(IsGeneratable(Opcode::BatchNormGradAccumulate, g), g != kMaverick);
  }
  EXPECT_EQ(GeneratableOpcodes(kSunda).size(), 35u);
  EXPECT_EQ(GeneratableOpcodes(kCayman).size(), 36u);
  EXPECT_EQ(GeneratableOpcodes(kMariana).size(), 36u);
  EXPECT_EQ(GeneratableOpcodes(kMaverick).size(), 35u);
  // opcode_in_generation is an `invalid` error, before opcode_supported / channel checks.
  Instruction bad = ri;
  bad.bytes[34] = 0;
  const absl::Status st = Validate(bad, kSunda, 0);
  EXPECT_EQ(ErrorKindOf(st), ErrorKind::Invalid);
  EXPECT_EQ(PredicateOf(st), "opcode_in_generation");
}

TEST(Generations, AluOpsAddedOnMarianaAndMaverick) {
  struct Site {
    Opcode op;
    std::string pred;
    std::function<void(Instruction&, uint8_t)> set;
  };
  const std::vector<Site> sites = {
      {Opcode::TensorTensorArith, "tensor_tensor_arith_op",
       [](Instruction& i, uint8_t o) { i.bytes[14] = o; }},
      {Opcode::TensorScalarArith, "tensor_scalar_valid_ops",
       [](Instruction& i, uint8_t o) { i.bytes[37] = o; }},
      {Opcode::TensorScalarPtrArith, "tensor_scalar_valid_ops",
       [](Instruction& i, uint8_t o) { i.bytes[36] = o; }},
      {Opcode::TransposeTensorScalarArith, "tensor_scalar_valid_ops",
       [](Instruction& i, uint8_t o) { i.bytes[36] = o; }},
      {Opcode::TensorScalarPtrMultiArith, "tsm_valid_op", [](Instruction& i, uint8_t o) { i.bytes[36] = o; }},
      {Opcode::TensorScalarCacheReduce, "ts_cache_valid_ops",
       [](Instruction& i, uint8_t o) { i.bytes[36] = o; }},
  };
  for (const Site& site : sites) {
    for (AluOp o : {AluOp::ABS_MAX, AluOp::ABS_MIN, AluOp::RE_LU, AluOp::SQUARE, AluOp::SYMMETRIC_CLAMP}) {
      for (Generation g : kAllGenerations) {
        SCOPED_TRACE(Cat(InfoOf(site.op).name, " ", AluOpName(A(o)), " ", GenerationName(g)));
        Instruction inst = Base(site.op);
        site.set(inst, A(o));
        const bool exists = o == AluOp::SYMMETRIC_CLAMP ? g == kMaverick : g >= kMariana;
        EXPECT_EQ(AluOpExists(A(o), g), exists);
        const auto v = CheckInstruction(inst, g);
        EXPECT_EQ(!v.has_value(), exists) << Describe(v);
        if (v) { EXPECT_EQ(v->predicate, site.pred); }
      }
    }
  }
}

TEST(Generations, IntegerBandOnSunda) {
  for (int code = 0xC4; code <= 0xE1; ++code) {
    const AluOpInfo* info = LookupAluOp(static_cast<uint8_t>(code));
    ASSERT_NE(info, nullptr);
    const bool in_sunda = code <= 0xC6;  // ADD_INT, MULT_INT, SUBTRACT_INT
    for (Generation g : kAllGenerations) {
      SCOPED_TRACE(Cat(info->name, " ", GenerationName(g)));
      EXPECT_EQ(AluOpExists(static_cast<uint8_t>(code), g), g != kSunda || in_sunda);
      Instruction inst = Base(Opcode::TensorTensorArith);
      auto s = inst.as<S3S3D3_TT>();
      s.op = static_cast<uint8_t>(code);
      const Dtype d = (info->flags & SGN) ? Dtype::INT32 : Dtype::UINT32;
      s.in_dtypes = Pair(d, d);
      s.out_dtype = D(d);
      StoreTo(s, inst.bytes.data());
      // valid for TensorTensorArith: existing and in is_valid_int_aluop
      const bool vint = code != 0xCE && code < 0xDE;
      const bool ok = (g != kSunda || in_sunda) && vint;
      const auto v = CheckInstruction(inst, g);
      EXPECT_EQ(!v.has_value(), ok) << Describe(v);
      if (v) { EXPECT_EQ(v->predicate, "tensor_tensor_arith_op"); }
    }
  }
}

TEST(Generations, ShapeFromRegisterEscape) {
  // Count rows that involve a shape-from-register operand are skipped, except on SUNDA.
  struct Esc {
    Opcode op;
    Mutation m;
    std::string pred;
  };
  const std::vector<Esc> es = {
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.src1.addr = 0x40001000; s.src1.num[2] = 2),
       "s3s3d3_tt_src_element_cnt_check"},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.dst.addr = 0xC0000000; s.dst.num[2] = 2),
       "s3s3d3_tt_dst_element_cnt_check"},
      {Opcode::Max8, MUT(S4D2_BN, s.src.addr = 0x40000000; s.src.num[0] = 4), "has_max8_src_element_cnt"},
      {Opcode::Memset, MUT(D4_MR, s.dst.addr = 0x40000000; s.dst_element_count = 5), "d4_mr_element_count"},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.src.addr = 0xC0000000; s.src.num[1] = 3),
       "has_bn_param_load_src_element_cnt"},
      {Opcode::BatchNormParamLoad2, MUT(S2_BNPL2, s.src.addr = 0x40000000; s.src.num[1] = 5),
       "has_bnpl2_src_element_cnt"},
      {Opcode::BatchNormGradAccumulate2, MUT(S3S3D1_BN2, s.dst.addr = 0x40000000; s.dst.num[0] = 5),
       "bnga_dst_element_cnt_check"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.src.addr = 0x40000000; s.src.num[0] = 5),
       "tensor_scalar_tensor_chk"},
      {Opcode::TensorScalarPtrMultiArith, MUT(S4D4_TSM, s.src.addr = 0x40000000; s.src.num[3] = 9),
       "has_tsm_num_scalars"},
      {Opcode::MatchReplace8, MUT(S4D4_MR, s.dst.addr = 0x40000000; s.dst.num[0] = 1),
       "match_replace8_same_element_count"},
      {Opcode::Copy, MUT(S4D4_TR, s.src.addr = 0xC0000000; s.src.num[0] = 3), "s4d4_tr_same_element_count"},
      {Opcode::TransposeBatchNormStats2, MUT(S4D2_BN, s.src.addr = 0x40000000; s.src.num[0] = 33),
       "has_transpose_src_element_cnt"},
  };
  for (const Esc& e : es) {
    Instruction inst = Base(e.op);
    e.m(inst);
    for (Generation g : kAllGenerations) {
      SCOPED_TRACE(Cat(InfoOf(e.op).name, " ", GenerationName(g)));
      const auto v = CheckInstruction(inst, g);
      if (g == kSunda) {
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(v->predicate, e.pred);
      } else {
        EXPECT_FALSE(v.has_value()) << Describe(v);
        const auto x = CheckExecutable(inst, g);
        ASSERT_TRUE(x.has_value());
        EXPECT_EQ(x->predicate, "address_mode_supported");
        EXPECT_EQ(x->kind, ErrorKind::Unsupported);
      }
    }
  }
  // Non-count rows still apply (here an op check), and so do counts >= 1.
  Instruction inst = Base(Opcode::TensorTensorArith);
  auto s = inst.as<S3S3D3_TT>();
  s.src0.addr = 0x40000000;
  s.op = A(AluOp::DIVIDE);
  StoreTo(s, inst.bytes.data());
  EXPECT_EQ(CheckInstruction(inst, kCayman)->predicate, "tensor_tensor_arith_op");
  s.op = A(AluOp::ADD);
  s.src0.num[1] = 0;
  StoreTo(s, inst.bytes.data());
  for (Generation g : kAllGenerations) EXPECT_EQ(CheckInstruction(inst, g)->predicate, "tensor3d_valid");
  // A register address (0x80) is not an escape: counts are checked on every generation.
  Instruction reg = Base(Opcode::TensorTensorArith);
  auto r = reg.as<S3S3D3_TT>();
  r.src1.addr = MakeRegisterAddress(4);
  r.src1.num[2] = 2;
  StoreTo(r, reg.bytes.data());
  for (Generation g : kAllGenerations)
    EXPECT_EQ(CheckInstruction(reg, g)->predicate, "s3s3d3_tt_src_element_cnt_check");
}

TEST(Generations, PartitionGeometry) {
  struct Geo {
    Generation g;
    uint32_t stride, active;
  };
  const Geo geos[] = {{kSunda, 256 << 10, 192 << 10},
                      {kCayman, 256 << 10, 224 << 10},
                      {kMariana, 256 << 10, 256 << 10},
                      {kMaverick, 1 << 20, 512 << 10}};
  auto memset_at = [](uint32_t addr, uint16_t count, Dtype d = Dtype::FP32) {
    Instruction inst = Base(Opcode::Memset);
    auto s = inst.as<D4_MR>();
    s.dst = T<4>(addr, {1, 0, 0, 0}, {count, 1, 1, 1});
    s.dst_element_count = count;
    s.dtype = D(d);
    s.set_value = 0;
    s.num_active_channels = 1;
    StoreTo(s, inst.bytes.data());
    return inst;
  };
  for (const Geo& geo : geos) {
    SCOPED_TRACE(GenerationName(geo.g));
    EXPECT_EQ(GeometryOf(geo.g).sbuf_active_bytes, geo.active);
    EXPECT_EQ(GeometryOf(geo.g).sbuf_partition_stride, geo.stride);
    for (uint32_t p : {0u, 1u, 127u}) {
      const uint32_t base = p * geo.stride;
      EXPECT_FALSE(CheckInstruction(memset_at(base + geo.active - 4, 1), geo.g).has_value()) << p;
      EXPECT_EQ(CheckInstruction(memset_at(base + geo.active - 4, 2), geo.g)->predicate, "tensor4d_valid");
      if (geo.active < geo.stride) {
        EXPECT_EQ(CheckInstruction(memset_at(base + geo.active, 1), geo.g)->predicate, "tensor4d_valid");
      }
    }
    // Beyond the last partition of SBUF (and of PSUM).
    const uint32_t sbuf_end = 128 * geo.stride;
    EXPECT_EQ(CheckInstruction(memset_at(sbuf_end + (geo.g == kMaverick ? 0 : 0x400000), 1), geo.g)->predicate,
              "tensor4d_valid");
    // PSUM: 16 KiB active of a 32 KiB stride; none on MAVERICK.
    const Instruction psum_last = memset_at(kPsumBase + (16 << 10) - 4, 1);
    const Instruction psum_out = memset_at(kPsumBase + (16 << 10), 1);
    const Instruction psum_bf16 = memset_at(kPsumBase, 1, Dtype::BFLOAT16);
    if (geo.g != kMaverick) {
      EXPECT_EQ(ResolveImmediate(kPsumBase + 5 * (32 << 10), geo.g)->space, Space::Psum);
      EXPECT_EQ(ResolveImmediate(kPsumBase + 5 * (32 << 10), geo.g)->partition, 5u);
      EXPECT_FALSE(CheckInstruction(psum_last, geo.g).has_value());
      EXPECT_EQ(CheckInstruction(psum_out, geo.g)->predicate, "tensor4d_valid");
      EXPECT_EQ(CheckInstruction(psum_bf16, geo.g)->predicate, "tensor4d_valid");  // PSUM dst: 4-byte
    } else {
      // 0x2000000 is SBUF partition 32 on MAVERICK: the same bytes are an SBUF record there.
      EXPECT_EQ(ResolveImmediate(kPsumBase, geo.g)->space, Space::Sbuf);
      EXPECT_EQ(ResolveImmediate(kPsumBase, geo.g)->partition, 32u);
      EXPECT_FALSE(CheckInstruction(psum_bf16, geo.g).has_value());
      EXPECT_FALSE(CheckInstruction(psum_out, geo.g).has_value());
      for (uint32_t a = 0x8000000; a < 0x20000000; a += 0x1000000)
        EXPECT_FALSE(ResolveImmediate(a, geo.g).has_value()) << Hex(a);
    }
  }
}

// ===================================================================================
// Validation order: the first failing check is the one reported.
// ===================================================================================
TEST(Order, FirstFailingCheckIsReported) {
  struct O {
    Opcode op;
    Mutation m;
    std::string pred;
    std::string field;
    Generation gen = kCayman;
  };
  const std::vector<O> os = {
      // header before everything
      {Opcode::TensorTensorArith, [](Instruction& i) { i.bytes[1] = 0; i.bytes[4] = 8; i.bytes[15] = 0; },
       "has_valid_neuron_header", "inst_word_len"},
      {Opcode::TensorTensorArith, [](Instruction& i) { i.bytes[2] = 4; i.bytes[4] = 8; },
       "has_valid_neuron_header", "debug_cmd"},
      // events before opcode_in_generation; wait before update
      {Opcode::BatchNormGradAccumulate, [](Instruction& i) { i.bytes[4] = 8; }, "has_valid_neuron_events",
       "wait_mode", kMaverick},
      {Opcode::TensorTensorArith, [](Instruction& i) { i.bytes[4] = 8; i.bytes[6] = 8; },
       "has_valid_neuron_events", "wait_mode"},
      {Opcode::TensorTensorArith, [](Instruction& i) { i.bytes[6] = 8; i.bytes[5] = 77; },
       "has_valid_neuron_events", "update_mode"},
      // events_mode_supported before opcode_in_generation and opcode_supported
      {Opcode::DveReadIndices, [](Instruction& i) { i.bytes[6] = 0x81; }, "events_mode_supported",
       "update_mode", kSunda},
      {Opcode::Exponential, [](Instruction& i) { i.bytes[4] = 0x86; }, "events_mode_supported", "wait_mode"},
      // opcode_in_generation before check_active_channels
      {Opcode::BatchNormGradAccumulate, [](Instruction& i) { i.bytes[63] = 0; }, "opcode_in_generation",
       "opcode", kMaverick},
      // check_active_channels before the tensors
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.num_active_channels = 0; s.src0.num[0] = 0),
       "check_active_channels", "num_active_channels"},
      // start_addr_active_channels before tensorNd_valid, across operands
      {Opcode::TensorTensorArith,
       MUT(S3S3D3_TT, s.src0.num[0] = 0; s.dst.addr = MakeAddress(Space::Sbuf, 65, 0, kCayman)),
       "start_addr_active_channels", "dst start partition"},
      // tensors in struct order
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.dst.num[0] = 0; s.src1.num[1] = 0), "tensor3d_valid",
       "src1 num[1]"},
      {Opcode::TensorTensorArith, MUT(S3S3D3_TT, s.dst.num[0] = 0; s.src0.addr = 1), "tensor3d_valid",
       "src0 start offset"},
      {Opcode::BatchNormStats2, MUT(S4D2_BN, s.dst.num[0] = 0; s.src.num[3] = 0), "tensor4d_valid", "src num[3]"},
      // within one tensor: address, counts, bounds, alignment, PSUM dtype
      {Opcode::Cast, MUT(S4D4_TR, s.dst.addr = kPsumBase + (16 << 10) - 1), "tensor4d_valid", "dst bytes"},
      {Opcode::Cast, MUT(S4D4_TR, s.dst.addr = kPsumBase + 1), "tensor4d_valid", "dst start offset"},
      {Opcode::Cast, MUT(S4D4_TR, s.dst.addr = 0x60000000; s.dst.num[0] = 0), "tensor4d_valid", "dst address"},
      // tensorNd_valid before reserved bytes
      {Opcode::BatchNormStats, MUT(S4D2_BN, s.dst.num[1] = 0; s.reserved1[0] = 1), "tensor2d_valid",
       "dst num[1]"},
      // reserved bytes before the opcode's rows
      {Opcode::BatchNormStats, MUT(S4D2_BN, s.reserved0[4] = 1; s.src.num[0] = 1000),
       "s4d2_bn_reserved_zero", "reserved0 byte 39"},
      {Opcode::BatchNormParamLoad2, MUT(S2_BNPL2, s.reserved2[13] = 1; s.element_count = NAN),
       "s2_bnpl2_reserved_zero", "reserved2 byte 63"},
      // §3 rows top to bottom
      {Opcode::TensorTensorArith,
       MUT(S3S3D3_TT, s.op = A(AluOp::DIVIDE); s.out_dtype = 0; s.dst.num[1] = 1;
           s.src1.addr = MakeAddress(Space::Sbuf, 32, 0, kCayman)),
       "tensor_tensor_arith_op", "op"},
      {Opcode::TensorTensorArith,
       MUT(S3S3D3_TT, s.out_dtype = 0; s.dst.num[1] = 1; s.src1.addr = MakeAddress(Space::Sbuf, 32, 0, kCayman)),
       "tensor_tensor_dtypes", "out dtype"},
      {Opcode::TensorTensorArith,
       MUT(S3S3D3_TT, s.dst.num[1] = 1; s.src1.num[1] = 1; s.src1.addr = MakeAddress(Space::Sbuf, 32, 0, kCayman)),
       "s3s3d3_tt_src_element_cnt_check", "src0 elements vs src1 elements"},
      {Opcode::TensorTensorArith,
       MUT(S3S3D3_TT, s.dst.num[1] = 1; s.src1.addr = MakeAddress(Space::Sbuf, 32, 0, kCayman)),
       "s3s3d3_tt_dst_element_cnt_check", "dst elements"},
      {Opcode::BatchNormStats2, MUT(S4D2_BN, s.even_count = INFINITY; s.odd_count = NAN; s.in_dtype = 0),
       "has_bns_finite_even_count", "even_count"},
      {Opcode::BatchNormStats2, MUT(S4D2_BN, s.odd_count = NAN; s.in_dtype = 0), "has_bns_finite_odd_count",
       "odd_count"},
      {Opcode::BatchNormStats2, MUT(S4D2_BN, s.in_dtype = 0; s.out_dtype = 0), "s4d2_bn_stats_in_type",
       "in_dtype"},
      {Opcode::TransposeBatchNormStats2, MUT(S4D2_BN, s.src.num[0] = 33; s.num_active_channels = 33),
       "has_transpose_src_element_cnt", "src elements"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.reverse_operands = 4; s.accumulator_cmd = 2),
       "tensor_scalar_reverse_chk", "reverse_operands"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op0 = A(AluOp::POW); s.in_dtype = 0; s.imm0_src = 7),
       "tensor_scalar_valid_ops", "op0"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.op1 = A(AluOp::POW); s.op0 = 0x30), "tensor_scalar_valid_ops",
       "op0"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.in_dtype = 0; s.imm0_src = 7), "tensor_scalar_valid_types",
       "in_dtype"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.imm1_src = 7; s.dst.num[0] = 1), "tensor_scalar_immediates_check",
       "imm1_src"},
      {Opcode::TensorScalarArith, MUT(S3D3_TS, s.imm1_src = 7; s.imm0_src = 9), "tensor_scalar_immediates_check",
       "imm0_src"},
      {Opcode::TensorScalarBitvec,
       MUT(S3D3_TS, s.op0 = A(AluOp::ARITH_SHIFT_RIGHT); s.in_dtype = s.out_dtype = D(Dtype::INT16);
           s.dst.num[0] = 1),
       "tensor_scalar_shift_chk", "in_dtype"},
      {Opcode::BatchNormGradAccumulate,
       MUT(S3S3D1_BN, s.imm0 = 1; s.src1.addr = MakeAddress(Space::Sbuf, 32, kSrcB, kCayman)), "bnga_imm_check",
       "imm0"},
      {Opcode::BatchNormGradAccumulate, MUT(S3S3D1_BN, s.imm1 = 1; s.imm0 = 2), "bnga_imm_check", "imm0"},
      {Opcode::BatchNormGradAccumulate, MUT(S3S3D1_BN, s.dst.num[0] = 1; s.src0.num[0] = 1),
       "bnga_src_element_cnt_check", "x elements"},
      {Opcode::BatchNormParamLoad, MUT(S2_BN, s.dtype = 0; s.imm0_src = 5; s.imm1 = 0x7F800000),
       "s2_bn_finite_n", "imm1 (N)"},
      {Opcode::Copy, MUT(S4D4_TR, s.negated = 5; s.op_dim = 9), "s4d4_tr_op_dim", "op_dim"},
      {Opcode::Memset, MUT(D4_MR, s.serialization_mode = 1; s.dtype = D(Dtype::UINT8)), "memset_value_width",
       "set_value"},
      {Opcode::TensorScalarPtrMultiArith, MUT(S4D4_TSM, s.reverse_operands = 1; s.op_dim = 1; s.op = 7),
       "tsm_valid_op", "op"},
      // pointers: start_addr_active_channels (§2) comes before the immediate predicate
      {Opcode::TensorScalarPtrArith,
       MUT(S3D3_TS, s.imm0_src = 1; s.imm1 = MakeAddress(Space::Sbuf, 100, 0, kCayman)),
       "start_addr_active_channels", "imm1 start partition"},
  };
  for (size_t k = 0; k < os.size(); ++k) {
    Instruction inst = Base(os[k].op);
    os[k].m(inst);
    const absl::Status st = Validate(inst, os[k].gen, 2);
    SCOPED_TRACE(Cat("#", k, " ", InfoOf(os[k].op).name));
    EXPECT_EQ(PredicateOf(st), os[k].pred) << st;
    EXPECT_NE(st.ToString().find(os[k].field), std::string::npos) << st;
  }
}

TEST(Order, ProgramStopsAtTheFirstBadRecord) {
  std::vector<Instruction> prog;
  for (const Golden& g : kGoldens) prog.push_back(*Decode(FromHex(g.hex)));
  const size_t n = prog.size();
  Instruction bad1 = Base(Opcode::Copy);
  bad1.bytes[38] = 1;  // mask_enable
  Instruction bad2 = Base(Opcode::Memset);
  bad2.bytes[1] = 0;
  prog.push_back(bad1);
  prog.push_back(bad2);
  const absl::Status st = ValidateProgram(prog, kCayman);
  EXPECT_EQ(PredicateOf(st), "s4d4_tr_mask_disabled");
  EXPECT_NE(st.ToString().find(Cat("#", n, " @", Hex(n * 64))), std::string::npos) << st;
  // for_execution: a valid but unexecutable record earlier wins.
  Instruction crc = Base(Opcode::TensorScalarPtrMultiBitvec);
  crc.bytes[36] = A(AluOp::CRC32);
  prog.insert(prog.begin() + 1, crc);
  EXPECT_EQ(PredicateOf(ValidateProgram(prog, kCayman, false)), "s4d4_tr_mask_disabled");
  const absl::Status ex = ValidateProgram(prog, kCayman, true);
  EXPECT_EQ(PredicateOf(ex), "alu_op_supported");
  EXPECT_EQ(ErrorKindOf(ex), ErrorKind::Unsupported);
  EXPECT_NE(ex.ToString().find("#1 @0x40 TensorScalarPtrMultiBitvec (0x5F)"), std::string::npos) << ex;
}

TEST(Messages, CarryKindIndexOpcodePredicateFieldAndExpectation) {
  Instruction inst = Base(Opcode::BatchNormStats2);
  auto s = inst.as<S4D2_BN>();
  s.src.num[0] = 600;
  StoreTo(s, inst.bytes.data());
  const absl::Status st = Validate(inst, kCayman, 17);
  EXPECT_EQ(std::string(st.message()),
            "invalid: #17 @0x440 BatchNormStats2 (0x61): has_bnstats2_src_element_cnt: "
            "src elements = 600, expected <= 512");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  const absl::Status un = Validate(MakeInstruction(Opcode::Pool), kCayman, 0);
  EXPECT_EQ(ErrorKindOf(un), ErrorKind::Unsupported);
  EXPECT_EQ(un.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(un.message()).find("Pool (0x45): opcode_supported"), std::string::npos) << un;
  // decode errors: unlisted opcode bytes and 0xFF
  for (int b : {0x00, 0x40, 0x50, 0xFF}) {
    std::vector<uint8_t> rec(64, 0);
    rec[0] = static_cast<uint8_t>(b);
    rec[1] = 0x10;
    auto d = Decode(rec, 4);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(ErrorKindOf(d.status()), ErrorKind::Decode);
    EXPECT_NE(std::string(d.status().message()).find("#4"), std::string::npos);
    // the validator itself never crashes on such bytes
    Instruction raw;
    std::copy(rec.begin(), rec.end(), raw.bytes.begin());
    const auto v = CheckInstruction(raw, kCayman);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->kind, ErrorKind::Decode);
    const auto x = CheckExecutable(raw, kCayman);
    ASSERT_TRUE(x.has_value());
    EXPECT_EQ(x->kind, ErrorKind::Decode);
    EXPECT_EQ(ErrorKindOf(ValidateProgram(std::vector<Instruction>{raw}, kCayman, true)), ErrorKind::Decode);
  }
}

// ===================================================================================
// Generator properties.
// ===================================================================================
GeneratorOptions Full(Generation g) {
  GeneratorOptions o;
  o.gen = g;
  o.allow_register_addresses = true;
  o.allow_unexecutable = true;
  return o;
}

TEST(GeneratorProperty, EveryGeneratedRecordValidates) {
  std::mt19937_64 rng(0xD1E5EED);
  for (Generation g : kAllGenerations) {
    std::vector<GeneratorOptions> variants;
    variants.push_back(Full(g));
    GeneratorOptions plain;
    plain.gen = g;
    variants.push_back(plain);
    GeneratorOptions narrow = plain;
    narrow.allow_psum = narrow.allow_negative_steps = narrow.allow_broadcast = narrow.allow_events = false;
    narrow.max_channels = 3;
    narrow.max_elements = 40;
    narrow.sbuf_lo = 1000;
    narrow.sbuf_hi = 1400;
    variants.push_back(narrow);
    GeneratorOptions big = Full(g);
    big.max_elements = 65535;
    big.sbuf_lo = 4096;
    variants.push_back(big);
    GeneratorOptions tiny = Full(g);
    tiny.max_channels = 1;
    tiny.max_elements = 1;
    tiny.sbuf_lo = 100;
    tiny.sbuf_hi = 110;
    variants.push_back(tiny);
    for (size_t vi = 0; vi < variants.size(); ++vi) {
      const GeneratorOptions& o = variants[vi];
      for (Opcode op : GeneratableOpcodes(g)) {
        const int count = vi == 0 ? 1500 : 300;
        for (int k = 0; k < count; ++k) {
          const Instruction inst = GenerateValid(op, rng, o);
          ASSERT_EQ(inst.opcode(), op);
          const auto v = CheckInstruction(inst, g);
          ASSERT_FALSE(v.has_value()) << GenerationName(g) << " variant " << vi << " " << InfoOf(op).name
                                      << " " << Describe(v) << "\n"
                                      << ToHex(inst);
          if (!o.allow_unexecutable) {
            const auto x = CheckExecutable(inst, g);
            ASSERT_FALSE(x.has_value()) << InfoOf(op).name << " " << Describe(x);
          }
        }
      }
    }
  }
}

TEST(GeneratorProperty, Deterministic) {
  for (Generation g : kAllGenerations) {
    std::mt19937_64 a(42), b(42);
    for (int k = 0; k < 500; ++k) {
      const Instruction x = GenerateRandomValid(a, Full(g));
      const Instruction y = GenerateRandomValid(b, Full(g));
      ASSERT_EQ(x, y);
    }
  }
  // Not generatable on this generation: a header-only record that does not validate.
  std::mt19937_64 r(1);
  GeneratorOptions o;
  o.gen = kMaverick;
  const Instruction ga = GenerateValid(Opcode::BatchNormGradAccumulate, r, o);
  EXPECT_EQ(ga, MakeInstruction(Opcode::BatchNormGradAccumulate));
  EXPECT_TRUE(CheckInstruction(ga, kMaverick).has_value());
  o.gen = kCayman;
  EXPECT_EQ(GenerateValid(Opcode::Pool, r, o), MakeInstruction(Opcode::Pool));
}

// Bytes [lo, hi] touched by an immediate operand in its partition, or nullopt.
struct Touch {
  Space space;
  uint32_t p0;
  int64_t lo, hi;
};
std::optional<Touch> Touched(const Pattern& p, uint8_t dtype, Generation g) {
  if (AddrModeOf(p.addr) != AddrMode::Immediate) return std::nullopt;
  const auto place = ResolveImmediate(p.addr, g);
  const int size = DtypeSize(static_cast<Dtype>(dtype));
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < p.dims; ++d) {
    const int64_t span = int64_t{p.step[d]} * (p.num[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  return Touch{place->space, place->partition, place->offset + lo * size, place->offset + hi * size + size - 1};
}

TEST(GeneratorProperty, OptionsAreHonoured) {
  std::mt19937_64 rng(7);
  for (Generation g : kAllGenerations) {
    GeneratorOptions o;
    o.gen = g;
    o.allow_psum = o.allow_negative_steps = o.allow_broadcast = o.allow_events = false;
    o.max_channels = 40;
    o.max_elements = 100;
    o.sbuf_lo = 0x1000;
    o.sbuf_hi = 0x3000;
    for (Opcode op : GeneratableOpcodes(g)) {
      for (int k = 0; k < 200; ++k) {
        const Instruction inst = GenerateValid(op, rng, o);
        SCOPED_TRACE(Cat(GenerationName(g), " ", InfoOf(op).name, " ", ToHex(inst)));
        for (int b = 4; b < 12; ++b) ASSERT_EQ(inst.bytes[b], 0) << "events";
        const Operands ops = OperandsOf(inst);
        if (ops.has_channels) {
          const bool x32 = op == Opcode::TransposeBatchNormStats2 || op == Opcode::TransposeTensorScalarArith;
          ASSERT_LE(ops.channels, x32 ? 32 : 40);
        }
        for (int t = 0; t < ops.num_tensors; ++t) {
          const Pattern& p = ops.tensors[t].pattern;
          ASSERT_EQ(AddrModeOf(p.addr), AddrMode::Immediate);
          for (int d = 0; d < p.dims; ++d) {
            ASSERT_GE(p.step[d], 0);
            if (p.num[d] > 1) { ASSERT_NE(p.step[d], 0); }
          }
          // Counts are capped where the op allows more than the cap.
          const int64_t floor = op == Opcode::Max8 || op == Opcode::FindIndex8 ? 8
                                : op == Opcode::TransposeBatchNormStats2 ||
                                        op == Opcode::TransposeTensorScalarArith
                                    ? 32
                                : op == Opcode::TensorScalarPtrMultiArith || op == Opcode::TensorScalarPtrMultiBitvec
                                    ? 8
                                    : 1;
          ASSERT_LE(p.Count(), std::max<int64_t>(100, floor));
          const auto touch = Touched(p, ops.tensors[t].dtype, g);
          ASSERT_TRUE(touch.has_value());
          ASSERT_EQ(touch->space, Space::Sbuf);
          ASSERT_GE(touch->lo, 0x1000);
          ASSERT_LE(touch->hi, 0x2FFF);
        }
        for (int q = 0; q < ops.num_pointers; ++q) {
          ASSERT_FALSE(ops.pointers[q].is_register);
          const auto place = ResolveImmediate(ops.pointers[q].word, g);
          ASSERT_TRUE(place.has_value());
          ASSERT_EQ(place->space, Space::Sbuf);
          ASSERT_GE(place->offset, 0x1000u);
          ASSERT_LE(place->offset + DtypeSize(static_cast<Dtype>(ops.pointers[q].dtype)), 0x3000u);
        }
      }
    }
  }
}

// Over many generated records: every value of every enumerated byte field that the validator
// accepts next to some generated record is also generated, and the structural features
// (channel extremes, PSUM, registers, steps, dims, sources, forms) all show up.
TEST(GeneratorProperty, CoversTheValidSpace) {
  std::mt19937_64 rng(2024);
  for (Generation g : kAllGenerations) {
    const GeneratorOptions o = Full(g);
    for (Opcode op : GeneratableOpcodes(g)) {
      SCOPED_TRACE(Cat(GenerationName(g), " ", InfoOf(op).name));
      const StructKind sk = InfoOf(op).strct;
      std::vector<int> offsets = {2, 4, 6};  // debug_cmd, wait_mode, update_mode
      for (const FieldInfo& f : FieldsOf(sk)) {
        switch (f.kind) {
          case FieldKind::Dtype: case FieldKind::DtypePair: case FieldKind::AluOp:
          case FieldKind::ImmSrc: case FieldKind::ImmSrcPair: case FieldKind::Reverse:
          case FieldKind::AccumCmd: case FieldKind::Subdim:
            offsets.push_back(f.offset);
            break;
          case FieldKind::U8:
            if (f.name != "num_active_channels") offsets.push_back(f.offset);
            break;
          default: break;
        }
      }
      std::map<int, std::set<int>> generated, accepted;
      std::set<int> channels, dims, imm_srcs;
      bool edge_partition = false, psum = false, reg = false, neg = false, zero = false, marker = false;
      bool rsqrt = false, reg_ptr = false, psum_ptr = false, events = false;
      for (int k = 0; k < 3000; ++k) {
        const Instruction inst = GenerateValid(op, rng, o);
        for (int off : offsets) generated[off].insert(inst.bytes[off]);
        if (k < 12) {
          for (int off : offsets)
            for (int v = 0; v < 256; ++v) {
              Instruction n = inst;
              n.bytes[off] = static_cast<uint8_t>(v);
              if (!CheckInstruction(n, g)) accepted[off].insert(v);
            }
        }
        events |= inst.bytes[4] != 0 && inst.bytes[6] != 0;
        const Operands ops = OperandsOf(inst);
        if (ops.has_channels) channels.insert(ops.channels);
        for (int t = 0; t < ops.num_tensors; ++t) {
          const Pattern& p = ops.tensors[t].pattern;
          const AddrMode m = AddrModeOf(p.addr);
          reg |= m == AddrMode::Register;
          marker |= m != AddrMode::Immediate && m != AddrMode::Register;
          int active = 0;
          for (int d = 0; d < p.dims; ++d) {
            active += p.num[d] > 1;
            neg |= p.step[d] < 0 && p.num[d] > 1;
            zero |= p.step[d] == 0 && p.num[d] > 1;
          }
          if (p.dims == 4) dims.insert(active);
          if (m == AddrMode::Immediate) {
            const auto place = ResolveImmediate(p.addr, g);
            psum |= place->space == Space::Psum;
            edge_partition |= static_cast<int>(place->partition) + ops.channels == kPartitions;
          }
        }
        for (int q = 0; q < ops.num_pointers; ++q) {
          reg_ptr |= ops.pointers[q].is_register || AddrModeOf(ops.pointers[q].word) == AddrMode::Register;
          const auto place = ResolveImmediate(ops.pointers[q].word, g);
          psum_ptr |= place && place->space == Space::Psum;
        }
        if (sk == StructKind::S3D3_TS) {
          const auto s = inst.as<S3D3_TS>();
          imm_srcs.insert(s.imm0_src);
          imm_srcs.insert(s.imm1_src);
          rsqrt |= s.op0 == A(AluOp::RSQRT);
        }
      }
      for (int off : offsets)
        for (int v : accepted[off])
          EXPECT_TRUE(generated[off].count(v)) << "byte " << off << " value " << Hex(v, 2) << " never generated";
      EXPECT_TRUE(events);
      if (op == Opcode::EngineNop || op == Opcode::LoadParameterRam) continue;
      const bool x32 = op == Opcode::TransposeBatchNormStats2 || op == Opcode::TransposeTensorScalarArith;
      EXPECT_TRUE(channels.count(x32 ? 32 : 1));
      EXPECT_TRUE(channels.count(128));
      if (!x32) { EXPECT_GT(channels.size(), 60u); }
      EXPECT_TRUE(edge_partition);
      EXPECT_EQ(psum, g != kMaverick);
      EXPECT_TRUE(reg);
      EXPECT_TRUE(marker);
      if (op != Opcode::DveReadAccumulator) {  // its only pattern has one element
        EXPECT_TRUE(neg);
        EXPECT_TRUE(zero);
      }
      if (sk == StructKind::S4D2_BN || sk == StructKind::S4D4_TR || sk == StructKind::S4D4_MR ||
          sk == StructKind::D4_MR) {
        // (DveReadIndices' 8 elements split into at most 3 dimensions > 1)
        for (int d = 1; d <= (op == Opcode::DveReadIndices ? 3 : 4); ++d)
          EXPECT_TRUE(dims.count(d)) << d << " non-trivial dims of a 4D pattern";
      }
      const OpcodeInfo& info = InfoOf(op);
      if (sk == StructKind::S3D3_TS && op != Opcode::TensorScalarPtrArith &&
          op != Opcode::TensorScalarPtrBitvec) {
        EXPECT_EQ(imm_srcs, (std::set<int>{0, 1, 2}));
      }
      if (op == Opcode::TensorScalarArith) { EXPECT_TRUE(rsqrt); }
      const bool has_ptrs = op == Opcode::BatchNormGradAccumulate || op == Opcode::BatchNormGradAccumulate2 ||
                            op == Opcode::BatchNormParamLoad || op == Opcode::BatchNormParamLoad2 ||
                            (sk == StructKind::S3D3_TS);
      if (has_ptrs) {
        EXPECT_TRUE(reg_ptr) << info.name;
        EXPECT_EQ(psum_ptr, g != kMaverick);
      }
    }
  }
}

// Random single-byte mutations of valid records: the validator always answers with a value,
// and every failure names a predicate of validation.md (or is a decode error).
TEST(MutationProperty, NeverCrashesAndAlwaysNamesASpecPredicate) {
  std::mt19937_64 rng(99);
  std::map<std::string, int> hits;
  for (Generation g : kAllGenerations) {
    const GeneratorOptions o = Full(g);
    for (int k = 0; k < 25000; ++k) {
      Instruction inst = GenerateRandomValid(rng, o);
      const int at = static_cast<int>(rng() % 64);
      inst.bytes[at] = static_cast<uint8_t>(rng());
      if (k % 7 == 0) inst.bytes[rng() % 64] = static_cast<uint8_t>(rng());  // sometimes two bytes
      const auto d = Decode(std::span<const uint8_t>(inst.bytes.data(), 64), k);
      const auto v = CheckInstruction(inst, g);
      const auto x = CheckExecutable(inst, g);
      if (!d.ok()) {
        EXPECT_EQ(ErrorKindOf(d.status()), ErrorKind::Decode);
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(v->kind, ErrorKind::Decode);
        ASSERT_TRUE(x.has_value());
        continue;
      }
      for (const auto* r : {&v, &x}) {
        if (!r->has_value()) continue;
        ++hits[(*r)->predicate];
        ASSERT_TRUE(kSpecPredicates.count((*r)->predicate)) << (*r)->predicate << ": " << (*r)->detail;
        ASSERT_FALSE((*r)->detail.empty());
        const bool unsupported = (*r)->predicate == "events_mode_supported" ||
                                 (*r)->predicate == "opcode_supported" ||
                                 (*r)->predicate == "address_mode_supported" ||
                                 (*r)->predicate == "alu_op_supported";
        EXPECT_EQ((*r)->kind, unsupported ? ErrorKind::Unsupported : ErrorKind::Invalid);
      }
      const absl::Status st = Validate(inst, g, k);
      EXPECT_EQ(st.ok(), !v.has_value());
    }
  }
  EXPECT_GT(hits.size(), 60u);  // the mutations reach a broad set of predicates
}
}  // namespace
}  // namespace dvejit
