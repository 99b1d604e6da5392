// The memory operands of an instruction, struct-independent: its tensor access patterns (with
// their dtypes and roles) and its live pointer immediates. Shared by validation, the interpreter
// and the JIT's lowering, so that "which bytes does this instruction touch" has one home.
#pragma once

#include <cstdint>
#include <string_view>

#include "frontend/instruction.h"

namespace dvejit {

struct Pattern {
  uint32_t addr = 0;  // ADDR4
  int dims = 0;
  int16_t step[4] = {0, 0, 0, 0};
  uint16_t num[4] = {1, 1, 1, 1};
  // Elements in iteration order, exactly: up to (2^16 − 1)^4, which needs all 64 bits (a valid
  // pattern with step-0 dimensions can name that many; the runtime refuses more than 2^24).
  uint64_t Count() const {
    uint64_t c = 1;
    for (int d = 0; d < dims; ++d) c *= num[d];
    return c;
  }
};

template <int D>
Pattern PatternOf(const TensorPattern<D>& t) {
  Pattern p;
  p.addr = t.addr;
  p.dims = D;
  for (int d = 0; d < D; ++d) {
    p.step[d] = t.step[d];
    p.num[d] = t.num[d];
  }
  return p;
}

struct TensorOperand {
  std::string_view name;  // the struct's field name: src, src0, src1, dst
  Pattern pattern;
  uint8_t dtype = 0;
  bool is_dst = false;
};

// A pointer immediate actually used as a pointer (source 1, or always-pointer fields) or as a
// register pointer (source 2).
struct PointerOperand {
  std::string_view name;  // imm0, imm1, imm0_ptr, imm1_ptr
  uint32_t word = 0;      // ADDR4 (pointer) or IMM_REG (register pointer)
  bool is_register = false;
  uint8_t dtype = 0;      // the dtype read through the pointer
};

struct Operands {
  TensorOperand tensors[3];
  int num_tensors = 0;
  PointerOperand pointers[2];
  int num_pointers = 0;
  int channels = 0;       // num_active_channels; 0 for CTRL_IM
  bool has_channels = false;
};

// Operands of a supported (tier A/B) opcode; empty for the others.
Operands OperandsOf(const Instruction& inst);

// Whether any operand of `inst` takes its address from a register (the runtime resolves those
// before the interpreter, whose precondition is immediate addresses only).
bool UsesRegisters(const Instruction& inst);

}  // namespace dvejit
