// Seed inputs for the execution fuzzers (byte 0: the generation, then 64-byte records): random
// valid records of every opcode of every generation (frontend/generator.h), written into a
// directory, so no binary corpus is kept in the tree.
#pragma once

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "frontend/generator.h"
#include "frontend/instruction.h"

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

}  // namespace dvejit::fuzz
