// libFuzzer target: the JIT tier against the reference interpreter on arbitrary streams. Byte 0
// picks the generation (bits 0-1) and the profile (bit 2), and with bit 3 the JIT splits every
// region of several channel blocks across three threads; the rest are up to 8 64-byte
// records. Two machines of that generation start with the same contents; each input runs on
// one interpreted and on the other through the JIT tier (jit_diff_test's generator covers the
// streams a compiler emits; this covers whatever validates). Any difference in the status, the
// executed count, memory (every active byte of SBUF and PSUM) or state aborts, and so does a
// stream the JIT fails to compile. While the runs agree the machines stay equal, so they are
// filled once, and each input starts from what the previous ones left. Operands of more than
// kMaxFuzzElements elements per channel are skipped (slow, not different).
// Seeds: DVEJIT_FUZZ_WRITE_SEEDS=DIR writes execution_input.h's seeds into DIR and exits.
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
#include "frontend/validate.h"
#include "runtime/executor.h"
#include "runtime/machine.h"
#include "test/fuzz/execution_input.h"
#include "test/machine_difference.h"

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

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::WriteSeedsIfAsked();
  setenv("DVEJIT_VERIFY_EACH_PASS", "1", /*overwrite=*/0);  // name the pass that breaks the IR
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Invalid records stay (both tiers must refuse them alike); valid ones must be small.
  const auto input = fuzz::ParseInput(data, size, kMaxRecords, [](const Instruction& inst, Generation gen) {
    return CheckInstruction(inst, gen).has_value() || fuzz::OperandsWithin(inst, kMaxFuzzElements);
  });
  if (!input) return 0;
  Pair& pair = PairOf(input->gen);
  RunOptions interp, jit;
  interp.profile = jit.profile = input->profile;
  interp.tier = ExecutionTier::Interp;
  jit.tier = ExecutionTier::Jit;
  if (data[0] & 8) {
    jit.threads = 3;
    jit.min_split_bytes = 0;
  }
  const RunReport a = RunProgram(pair.interp, input->program, interp);
  const RunReport b = RunProgram(pair.jit, input->program, jit);
  std::string diff;
  if (a.status != b.status)
    diff = "status: interpreter '" + a.status.ToString() + "', jit '" + b.status.ToString() + "'";
  else if (a.executed != b.executed)
    diff = "executed: interpreter " + std::to_string(a.executed) + ", jit " + std::to_string(b.executed);
  else
    diff = MachineDifference(pair.interp, pair.jit, UINT32_MAX, UINT32_MAX);
  // A valid stream the JIT fails to compile runs interpreted and agrees; it is still a defect.
  if (diff.empty() && !b.jit_failure.empty()) diff = "jit failed: " + b.jit_failure;
  if (!diff.empty()) {
    std::fprintf(stderr, "jit_diff_fuzz: the JIT (tier '%s') differs from the interpreter: %s\n",
                 b.tier.c_str(), diff.c_str());
    std::abort();
  }
  return 0;
}
