// libFuzzer target: arbitrary bytes through decode, validation (every generation), the
// execution-only checks, disassembly and re-assembly. Nothing may crash, and a decoded record
// must survive the text round trip bit for bit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "frontend/assembler.h"
#include "frontend/disassembler.h"
#include "frontend/instruction.h"
#include "frontend/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dvejit;
  auto program = DecodeStream(std::span<const uint8_t>(data, size));
  if (!program.ok()) return 0;
  for (Generation gen : kAllGenerations) {
    (void)ValidateProgram(*program, gen, /*for_execution=*/true);
    const std::string text = DisassembleStream(*program, gen);
    auto again = Assemble(text, gen);
    if (!again.ok() || *again != *program) std::abort();  // dis must be lossless
  }
  return 0;
}
