// libFuzzer target: arbitrary bytes executed by the reference interpreter. Byte 0 picks the
// generation (bits 0-1) and the profile (bit 2); the rest are 64-byte records. A stream that
// validates for execution (CheckInstruction, CheckExecutable) runs instruction by instruction on
// a machine whose memory is exactly the partitions' active bytes: the line between partitions is
// poisoned, so a kernel that touches a byte validation did not prove in bounds is an ASan report.
// Register-addressed records (resolved by the runtime first) and operands of more than
// kMaxFuzzElements elements per channel (slow, not different) are skipped.
// Seeds: with DVEJIT_FUZZ_WRITE_SEEDS=DIR the target writes execution_input.h's seeds into DIR
// and exits; scripts/fuzz.sh starts from those.
#include <sanitizer/asan_interface.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "frontend/address.h"
#include "frontend/generator.h"
#include "frontend/instruction.h"
#include "frontend/operands.h"
#include "frontend/validate.h"
#include "kernels/interpreter.h"
#include "kernels/state.h"
#include "test/fuzz/execution_input.h"

namespace {

using namespace dvejit;

constexpr int64_t kMaxFuzzElements = 1 << 14;
constexpr size_t kMaxRecords = 8;

// One generation's memory, allocated and filled once: the contents only steer numerics, and
// every address an instruction touches comes from its own fields.
struct Memory {
  std::unique_ptr<uint8_t[]> sbuf, psum;
  MachineState state;

  explicit Memory(Generation gen) {
    state.gen = gen;
    state.sbuf_pitch = HostPitch(Space::Sbuf, gen);
    state.psum_pitch = HostPitch(Space::Psum, gen);
    sbuf = Allocate(Space::Sbuf, gen, state.sbuf_pitch);
    psum = Allocate(Space::Psum, gen, state.psum_pitch);
    state.sbuf = sbuf.get();
    state.psum = psum.get();
    for (int k = 0; k < kParamRamEntries; ++k) state.pram[k] = 1.0f / static_cast<float>(k + 1);
  }

  static std::unique_ptr<uint8_t[]> Allocate(Space s, Generation gen, uint32_t pitch) {
    if (pitch == 0) return nullptr;
    const size_t bytes = static_cast<size_t>(pitch) * kPartitions;
    auto p = std::make_unique<uint8_t[]>(bytes);
    // Every byte pattern somewhere (NaNs, infinities, subnormals, integer extremes).
    uint32_t x = 0x9E3779B9u;
    for (size_t i = 0; i < bytes; ++i) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      p[i] = static_cast<uint8_t>(x);
    }
    const uint32_t active = ActiveBytes(s, gen);
    for (int part = 0; part < kPartitions; ++part)
      ASAN_POISON_MEMORY_REGION(p.get() + static_cast<size_t>(part) * pitch + active, pitch - active);
    return p;
  }
};

Memory& MemoryOf(Generation gen) {
  static std::unique_ptr<Memory> memories[std::size(kAllGenerations)];
  const size_t i = static_cast<size_t>(gen) % std::size(kAllGenerations);
  if (!memories[i]) memories[i] = std::make_unique<Memory>(gen);
  return *memories[i];
}

bool Runnable(const Instruction& inst, Generation gen) {
  return !CheckInstruction(inst, gen) && !CheckExecutable(inst, gen) && !UsesRegisters(inst) &&
         fuzz::OperandsWithin(inst, kMaxFuzzElements);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::WriteSeedsIfAsked();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto input = fuzz::ParseInput(data, size, kMaxRecords, Runnable);
  if (!input) return 0;
  MachineState& m = MemoryOf(input->gen).state;
  for (const Instruction& inst : input->program) (void)ExecuteInstruction(inst, m, input->profile);
  return 0;
}
