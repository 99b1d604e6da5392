// The mutable machine state the interpreter kernels operate on (semantics.md §1). Storage is
// owned by runtime::Machine; this is the plain view of it that the kernels (and the JIT's
// compiled code) receive.
#pragma once

#include <cstdint>
#include <cstring>

#include "frontend/address.h"
#include "frontend/isa.h"

namespace dvejit {

// Per-lane state, indexed by channel number c (semantics.md §1).
struct LaneState {
  float bn_n = 0, bn_mean = 0, bn_a = 0, bn_b = 0, bn_c = 0;  // ParamLoad(2) → BackProp
  uint32_t imm[8] = {};                                        // ImmLd → PtrMulti
  uint32_t imm_count = 0;
  bool imm_bitvec = false;
  float mv[8] = {};                                            // MatchValueLoad
  uint32_t idx[8] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                     0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
  float acc = 0;                                               // CacheReduce/Cumulative
};

// Every field equal bit for bit (NaN payloads and signed zeros included). Not memcmp over the
// struct: its padding bytes are defined by no tier.
inline bool SameBits(const LaneState& x, const LaneState& y) {
  auto same = [](const auto& a, const auto& b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  return same(x.bn_n, y.bn_n) && same(x.bn_mean, y.bn_mean) && same(x.bn_a, y.bn_a) &&
         same(x.bn_b, y.bn_b) && same(x.bn_c, y.bn_c) && same(x.imm, y.imm) &&
         same(x.imm_count, y.imm_count) && x.imm_bitvec == y.imm_bitvec && same(x.mv, y.mv) &&
         same(x.idx, y.idx) && same(x.acc, y.acc);
}

struct MachineState {
  Generation gen = Generation::Cayman;
  // SBUF and PSUM, 128 partitions each, `*_pitch` bytes apart (HostPitch: the active bytes and
  // one cache line).
  uint8_t* sbuf = nullptr;
  uint8_t* psum = nullptr;  // nullptr on generations without PSUM
  uint32_t sbuf_pitch = 0, psum_pitch = 0;
  uint32_t regs[kRegisters] = {};
  float pram[kParamRamEntries] = {};
  LaneState lanes[kPartitions];
  uint32_t semaphores[32] = {};
  bool events[32] = {};
  bool saturate = false;  // the microcode `saturate` table set: integer ALU ops clamp

  uint8_t* PartitionBase(Space s, uint32_t p) const {
    return s == Space::Sbuf ? sbuf + static_cast<size_t>(p) * sbuf_pitch
                            : psum + static_cast<size_t>(p) * psum_pitch;
  }
  // Host pointer of an immediate ADDR4 that validation proved in bounds, for channel c.
  uint8_t* At(uint32_t word, int c) const {
    const Place pl = *ResolveImmediate(word, gen);
    return PartitionBase(pl.space, pl.partition + c) + pl.offset;
  }
};

}  // namespace dvejit
