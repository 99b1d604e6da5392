// Evaluation of one ALU op on one pair of operands (semantics.md §4): arith on fp32 values,
// bitvec on raw 32-bit patterns, the integer band on 32-bit integers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "frontend/isa.h"
#include "kernels/numerics.h"

namespace dvejit::alu {

// True for the ops that read only the value entering the stage (semantics.md §4.1).
inline bool IsUnary(uint8_t op) {
  return op == 0x00 || op == 0x01 || op == 0x19 || op == 0x22 || op == 0x23;
}

// Arith op on fp32 values; a NaN produced here is the canonical quiet NaN. For unary ops `a`
// is the value entering the stage.
inline float Arith(uint8_t op, float a, float b) {
  float r;
  switch (static_cast<AluOp>(op)) {
    case AluOp::BYPASS: return a;
    case AluOp::ADD: r = a + b; break;
    case AluOp::SUBTRACT: r = a - b; break;
    case AluOp::MULT: r = a * b; break;
    case AluOp::MAX: r = num::MaxNum(a, b); break;
    case AluOp::MIN: r = num::MinNum(a, b); break;
    case AluOp::LOGICAL_AND: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case AluOp::LOGICAL_OR: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    case AluOp::LOGICAL_XOR: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
    case AluOp::IS_EQ: return a == b ? 1.0f : 0.0f;
    case AluOp::IS_GT: return a > b ? 1.0f : 0.0f;
    case AluOp::IS_GE: return a >= b ? 1.0f : 0.0f;
    case AluOp::IS_LE: return a <= b ? 1.0f : 0.0f;
    case AluOp::IS_LT: return a < b ? 1.0f : 0.0f;
    case AluOp::IS_NE: return a != b ? 1.0f : 0.0f;
    case AluOp::ABSOLUTE_DIFF: r = std::fabs(a - b); break;
    case AluOp::ABSOLUTE_VALUE: r = std::fabs(a); break;
    case AluOp::POW: r = num::PowF(a, b); break;
    case AluOp::MOD: r = std::fmod(a, b); break;
    case AluOp::ABS_MAX: r = num::MaxNum(std::fabs(a), std::fabs(b)); break;
    case AluOp::ABS_MIN: r = num::MinNum(std::fabs(a), std::fabs(b)); break;
    case AluOp::RE_LU: r = num::MaxNum(a, 0.0f); break;
    case AluOp::SQUARE: r = a * a; break;
    case AluOp::SYMMETRIC_CLAMP:
      r = std::copysign(num::MaxNum(std::fabs(a), std::fabs(b)), a);
      break;
    default: r = std::numeric_limits<float>::quiet_NaN(); break;  // unreachable after validation
  }
  return num::Canon(r);
}

// Bitvec op on 32-bit patterns (already sign/zero-extended); shift amounts modulo 32.
inline uint32_t Bitvec(uint8_t op, uint32_t a, uint32_t b) {
  const uint32_t sh = b & 31;
  switch (static_cast<AluOp>(op)) {
    case AluOp::BYPASS: return a;
    case AluOp::BITWISE_NOT: return ~a;
    case AluOp::ARITH_SHIFT_LEFT:
    case AluOp::LOGICAL_SHIFT_LEFT: return a << sh;
    case AluOp::ARITH_SHIFT_RIGHT: return static_cast<uint32_t>(static_cast<int32_t>(a) >> sh);
    case AluOp::LOGICAL_SHIFT_RIGHT: return a >> sh;
    case AluOp::BITWISE_AND: return a & b;
    case AluOp::BITWISE_OR: return a | b;
    case AluOp::BITWISE_XOR: return a ^ b;
    default: return 0;  // unreachable after validation (CRC32 is rejected before execution)
  }
}

// Integer band op (semantics.md §4.3) on 32-bit operands of the op's signedness (`is_signed`).
// Returns the exact result as int64 before the final saturation into the output dtype:
// wrapped modulo 2^32 (or clamped to 32 bits under the saturate table set).
int64_t IntegerOp(uint8_t op, bool is_signed, uint32_t a, uint32_t b, bool saturate);

}  // namespace dvejit::alu
