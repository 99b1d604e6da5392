// Where two machines of one generation first differ: the differential tests and the JIT
// fuzzer compare the interpreter's machine with the JIT's this way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/machine.h"

namespace dvejit {

// "" when equal, else the first difference: the first `sbuf_bytes` and `psum_bytes` of every
// partition (clamped to the active bytes), registers, Parameter RAM, semaphores, events and
// every lane's state, bit for bit.
inline std::string MachineDifference(Machine& a, Machine& b, uint32_t sbuf_bytes, uint32_t psum_bytes) {
  for (Space space : {Space::Sbuf, Space::Psum}) {
    const uint32_t n = std::min(space == Space::Sbuf ? sbuf_bytes : psum_bytes, a.ActiveBytes(space));
    for (uint32_t p = 0; p < kPartitions && n > 0; ++p) {
      auto x = a.PartitionBytes(space, p);
      auto y = b.PartitionBytes(space, p);
      if (!x.ok() || !y.ok() || std::memcmp(x->data(), y->data(), n) == 0) continue;
      for (uint32_t i = 0; i < n; ++i)
        if ((*x)[i] != (*y)[i])
          return std::string(space == Space::Sbuf ? "sbuf" : "psum") + " partition " + std::to_string(p) +
                 " byte " + std::to_string(i);
    }
  }
  const MachineState& s = a.state();
  const MachineState& t = b.state();
  if (std::memcmp(s.regs, t.regs, sizeof s.regs) != 0) return "registers";
  if (std::memcmp(s.pram, t.pram, sizeof s.pram) != 0) return "parameter RAM";
  if (std::memcmp(s.semaphores, t.semaphores, sizeof s.semaphores) != 0) return "semaphores";
  if (std::memcmp(s.events, t.events, sizeof s.events) != 0) return "events";
  for (int c = 0; c < kPartitions; ++c)
    if (!SameBits(s.lanes[c], t.lanes[c])) return "lane " + std::to_string(c);
  return "";
}

}  // namespace dvejit
