// The input format of the execution fuzzers (interpreter_fuzz, jit_diff_fuzz): byte 0 picks the
// generation (bits 0-1) and the profile (bit 2); the rest are 64-byte records. Their seeds are
// random valid records of every opcode of every generation (frontend/generator.h), written
// into a directory on request, so no binary corpus is kept in the tree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "frontend/generator.h"
#include "frontend/instruction.h"
#include "frontend/operands.h"

namespace dvejit::fuzz {

// Three records of each opcode per generation, each alone in an input, and 32 two- to
// four-record streams per generation.
inline void WriteSeeds(const std::string& dir) {
  std::mt19937_64 rng(20261201);
  int n = 0;
  auto write = [&](Generation gen, const std::vector<Instruction>& program) {
    std::ofstream out(dir + "/seed" + std::to_string(n++), std::ios::binary);
    out.put(static_cast<char>(gen));
    for (const Instruction& inst : program)
      out.write(reinterpret_cast<const char*>(inst.bytes.data()), static_cast<std::streamsize>(inst.bytes.size()));
  };
  for (Generation gen : kAllGenerations) {
    GeneratorOptions opt;
    opt.gen = gen;
    opt.max_elements = 512;
    opt.allow_events = false;
    for (Opcode op : GeneratableOpcodes(gen))
      for (int k = 0; k < 3; ++k) {
        opt.sbuf_hi = k == 2 ? 2048 : 0;  // a small window makes operands overlap
        write(gen, {GenerateValid(op, rng, opt)});
      }
    for (int k = 0; k < 32; ++k) {
      std::vector<Instruction> program;
      for (int i = 0; i < 2 + k % 3; ++i) program.push_back(GenerateRandomValid(rng, opt));
      write(gen, program);
    }
  }
}

// For LLVMFuzzerInitialize: with DVEJIT_FUZZ_WRITE_SEEDS=DIR, writes the seeds and exits.
inline void WriteSeedsIfAsked() {
  if (const char* dir = std::getenv("DVEJIT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
}

struct ExecutionInput {
  Generation gen;
  Profile profile;
  std::vector<Instruction> program;
};

// The input's generation, profile and first `max_records` records, if it has one, they decode
// and keep(record, generation) holds for each.
template <typename Keep>
std::optional<ExecutionInput> ParseInput(const uint8_t* data, size_t size, size_t max_records, Keep keep) {
  if (size < 1 + kRecordBytes) return std::nullopt;
  const size_t records = std::min((size - 1) / kRecordBytes, max_records);
  auto program = DecodeStream(std::span<const uint8_t>(data + 1, records * kRecordBytes));
  if (!program.ok()) return std::nullopt;
  const Generation gen = kAllGenerations[data[0] & 3];
  for (const Instruction& inst : *program)
    if (!keep(inst, gen)) return std::nullopt;
  return ExecutionInput{gen, data[0] & 4 ? Profile::Device : Profile::Contract, std::move(*program)};
}

// Whether every operand of `inst` has at most `max_elements` elements per channel (larger ones
// are slow to run, not different).
inline bool OperandsWithin(const Instruction& inst, int64_t max_elements) {
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i)
    if (ops.tensors[i].pattern.Count() > static_cast<uint64_t>(max_elements)) return false;
  return true;
}

}  // namespace dvejit::fuzz
