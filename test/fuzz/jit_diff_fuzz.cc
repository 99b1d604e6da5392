// libFuzzer target: the JIT tier against the reference interpreter on arbitrary streams. Byte 0
// picks the generation (bits 0-1) and the profile (bit 2); the rest are up to 8 64-byte
// records. Two machines of that generation start with the same contents; each input runs on
// one interpreted and on the other through the JIT tier (jit_diff_test's generator covers the
// streams a compiler emits; this covers whatever validates). Any difference in the status, the
// executed count, memory (every active byte of SBUF and PSUM) or state aborts. While the runs
// agree the machines stay equal, so they are filled once, and each input starts from what the
// previous ones left. Operands of more than kMaxFuzzElements elements per channel are skipped
// (slow, not different).
// Seeds: DVEJIT_FUZZ_WRITE_SEEDS=DIR writes seeds.h's inputs into DIR and exits.
// Not in CI's bounded run (each new stream shape costs an LLVM compile); run it with
// `scripts/fuzz.sh SECONDS jit_diff_fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "frontend/address.h"
#include "frontend/instruction.h"
#include "frontend/operands.h"
#include "frontend/validate.h"
#include "runtime/executor.h"
#include "runtime/machine.h"
#include "test/fuzz/seeds.h"

namespace {

using namespace dvejit;

constexpr int64_t kMaxFuzzElements = 1 << 12;
constexpr size_t kMaxRecords = 8;

struct Pair {
  Machine interp, jit;
  explicit Pair(Generation gen) : interp(gen), jit(gen) {
    for (Machine* m : {&interp, &jit}) {
      uint32_t x = 0x9E3779B9u;  // every byte pattern somewhere: NaNs, infinities, subnormals
      for (Space s : {Space::Sbuf, Space::Psum})
        for (uint32_t p = 0; p < kPartitions; ++p) {
          auto bytes = m->PartitionBytes(s, p);
          if (!bytes.ok()) continue;
          for (uint8_t& b : *bytes) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            b = static_cast<uint8_t>(x);
          }
        }
      for (int r = 0; r < kRegisters; ++r)  // valid SBUF addresses, so register operands resolve
        (void)m->SetRegister(r, MakeAddress(Space::Sbuf, static_cast<uint32_t>(r * 5) % kPartitions,
                                            static_cast<uint32_t>(r) * 256, gen));
      m->PreloadReciprocals();
    }
  }
};

Pair& PairOf(Generation gen) {
  static std::unique_ptr<Pair> pairs[std::size(kAllGenerations)];
  const size_t i = static_cast<size_t>(gen) % std::size(kAllGenerations);
  if (!pairs[i]) pairs[i] = std::make_unique<Pair>(gen);
  return *pairs[i];
}

// "" when the machines are equal, else where they first differ.
std::string Difference(Machine& a, Machine& b) {
  for (Space s : {Space::Sbuf, Space::Psum})
    for (uint32_t p = 0; p < kPartitions; ++p) {
      auto x = a.PartitionBytes(s, p);
      auto y = b.PartitionBytes(s, p);
      if (!x.ok() || !y.ok()) continue;
      if (std::memcmp(x->data(), y->data(), x->size()) == 0) continue;
      for (size_t i = 0; i < x->size(); ++i)
        if ((*x)[i] != (*y)[i])
          return std::string(s == Space::Sbuf ? "sbuf" : "psum") + " partition " + std::to_string(p) +
                 " byte " + std::to_string(i);
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

bool Small(const Instruction& inst) {
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i)
    if (ops.tensors[i].pattern.Count() > kMaxFuzzElements) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("DVEJIT_FUZZ_WRITE_SEEDS")) {
    fuzz::WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 + 64) return 0;
  const Generation gen = kAllGenerations[data[0] & 3];
  const size_t records = std::min((size - 1) / 64, kMaxRecords);
  auto program = DecodeStream(std::span<const uint8_t>(data + 1, records * 64));
  if (!program.ok()) return 0;
  for (const Instruction& inst : *program)
    if (!CheckInstruction(inst, gen) && !Small(inst)) return 0;
  Pair& pair = PairOf(gen);
  RunOptions interp, jit;
  interp.profile = jit.profile = data[0] & 4 ? Profile::Device : Profile::Contract;
  interp.tier = ExecutionTier::Interp;
  jit.tier = ExecutionTier::Jit;
  const RunReport a = RunProgram(pair.interp, *program, interp);
  const RunReport b = RunProgram(pair.jit, *program, jit);
  std::string diff;
  if (a.status != b.status)
    diff = "status: interpreter '" + a.status.ToString() + "', jit '" + b.status.ToString() + "'";
  else if (a.executed != b.executed)
    diff = "executed: interpreter " + std::to_string(a.executed) + ", jit " + std::to_string(b.executed);
  else
    diff = Difference(pair.interp, pair.jit);
  if (!diff.empty()) {
    std::fprintf(stderr, "jit_diff_fuzz: the JIT (tier '%s') differs from the interpreter: %s\n",
                 b.tier.c_str(), diff.c_str());
    std::abort();
  }
  return 0;
}
