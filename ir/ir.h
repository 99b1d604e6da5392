// The dvejit IR: a stream of DVE instructions lowered to typed SSA statements over per-channel
// scalar values (lane state, pointer reads, constants) and memory effects through access
// patterns, grouped into regions that run channel-block-major. Built by Lower(), transformed by
// the passes of passes.h, checked by Verify(), printed by Print(), compiled by jit/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontend/address.h"
#include "frontend/instruction.h"
#include "frontend/operands.h"

namespace dvejit::ir {

enum class Op : uint8_t {
#define IR_OP(name, text, has_value, global) name,
#include "ir/ops.def"
};
const char* OpName(Op op);
bool ProducesValue(Op op);
bool IsGlobal(Op op);  // runs on its own, never inside a channel-block-major region

// Lane-state fields that the IR forwards as SSA values (semantics.md §1): `bn` (ParamLoad →
// BackProp), the match keys `mv`, the found indices `idx` and the PtrMulti scalars `imm` (8 slots
// each; idx and bitvec imm values are 32-bit integers carried as f32 bits).
enum class LaneField : uint8_t { N, Mean, A, B, C, Mv0, Idx0 = Mv0 + 8, Imm0 = Idx0 + 8, kCount = Imm0 + 8 };
inline constexpr int kLaneFields = static_cast<int>(LaneField::kCount);
inline LaneField Mv(int slot) { return static_cast<LaneField>(static_cast<int>(LaneField::Mv0) + slot); }
inline LaneField Idx(int slot) { return static_cast<LaneField>(static_cast<int>(LaneField::Idx0) + slot); }
inline LaneField Imm(int slot) { return static_cast<LaneField>(static_cast<int>(LaneField::Imm0) + slot); }
std::string LaneFieldName(LaneField f);

// A tensor operand: where it lives is an argument (the host address of channel 0's start
// element); its shape, dtype and channel count are compile-time.
struct TensorRef {
  int arg = -1;         // argument slot of the start address
  Dtype dtype = Dtype::FP32;
  Pattern pattern;      // addr field unused
  Space space = Space::Sbuf;
};

using ValueId = int32_t;  // index of the statement that produced it
inline constexpr ValueId kNoValue = -1;

struct Stmt {
  Op op = Op::Interp;
  int source = -1;       // index of the DVE instruction it came from
  int channels = 0;      // active channels
  std::vector<ValueId> operands;
  std::vector<TensorRef> tensors;  // sources first, destination last (when any)
  // Op-specific attributes.
  int arg = -1;          // Const: argument slot (32-bit value); PramLoad: first of 8 slots
  Dtype dtype = Dtype::FP32;  // PtrRead: dtype read; Const: FP32 value
  int64_t element = 0;   // ElemRead: element index; PramLoad: first entry; PtrMulti: elements per scalar
  LaneField field = LaneField::N;  // LaneGet / LaneSet
  uint8_t alu0 = 0, alu1 = 0, reverse = 0;  // TensorScalar ops / TensorTensor alu0
  bool flag = false;     // Stats: parity split; TensorScalar: rsqrt form; Copy, Cast: negate;
                         // PtrRead: the raw bits extended to 32 (bitvec scalars), not fp32;
                         // IntTensor: signed; Predicated: cast; Find8: replace (MatchReplace8);
                         // ImmLoad, PtrMulti: bitvec
  bool dead = false;     // removed by a pass (kept so ValueIds stay stable)
  // Element-wise chains (FuseElementwiseChains): the statement runs in the row loop of the
  // element-wise statement before it; forward[i] ≥ 0 names the earlier statement of the chain
  // whose result source i reads (no load); dead_store: a later statement of the chain overwrites
  // the whole destination before anyone else reads it.
  bool fused_with_previous = false;
  std::vector<ValueId> forward;
  bool dead_store = false;
};
// Whether the statement writes lane field f: a lane.set of it, find8 for the idx slots, imm.load
// for the imm slots.
bool WritesLaneField(const Stmt& s, LaneField f);
// The element-wise ops that can join a chain through memory (FuseElementwiseChains): the
// statements whose value is computed per element from fp32 sources.
bool ChainsThroughMemory(Op op);
// Whether element k of the pattern is at element offset k (a contiguous row).
bool IsContiguousRow(const Pattern& p);

// `count` back-to-back copies of the `period` statements from `begin` that differ only in
// their argument slots (copy r uses slot + r · arg_stride) and in operands that point into their
// own copy (shifted by r · period): the tiles of one op over a tensor. Compiled as one loop.
struct Repeat {
  int begin = 0, period = 0, count = 0, arg_stride = 0;
  int end() const { return begin + period * count; }
};

// Consecutive statements that run channel-block-major: for each block of channels, every
// statement of the region runs back to back (design.md, "Channels are independent").
struct Region {
  int begin = 0, end = 0;  // statement indices [begin, end)
  bool channel_major = false;  // false: a global statement run once, in order
  std::vector<Repeat> repeats;  // in order, disjoint, inside [begin, end)
};

struct Function {
  Generation gen = Generation::Cayman;
  std::vector<Stmt> stmts;
  std::vector<Region> regions;
  int num_args = 0;
  // What each argument slot holds, for the runtime to fill: a tensor/pointer start address
  // (host pointer, resolved per run) or a 32-bit immediate copied from a record.
  struct ArgSource {
    bool is_address = false;  // an ADDR4 → the host address of channel 0; else the 32-bit value
    int instruction = 0;
    int byte_offset = 0;      // where in the (register-resolved) record the 32-bit word lives
  };
  std::vector<ArgSource> args;
  std::vector<std::string> fallback_reasons;  // why statements run interpreted
  // Instructions the `device` profile turns into no-ops (ImmLd, PtrMulti): no statements; the
  // runtime reports them as skipped.
  std::vector<int> device_noops;
};

std::string Print(const Function& f);
absl::Status Verify(const Function& f);
// Whether copy `copy` of a repeat's period (statements begin + copy · period ...) matches copy 0
// with argument slots shifted by copy · arg_stride and own-copy operands by copy · period.
bool RepeatCopyMatches(const Function& f, const Repeat& r, int copy);

// Lowers a validated, register-resolved stream: every instruction the code generator covers
// becomes typed statements; any other becomes an Interp statement (reason recorded). Under the
// `device` profile ImmLd and PtrMulti become no statements (Function::device_noops).
Function Lower(std::span<const Instruction> program, Generation gen, Profile profile = Profile::Contract);
// The ALU ops the code generator implements (the others run interpreted).
bool JitSupportsAluOp(uint8_t op);
bool JitSupportsBitvecOp(uint8_t op);
bool JitSupportsDtype(Dtype d);

}  // namespace dvejit::ir
