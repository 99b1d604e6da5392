// A decoded DVE instruction (its 64 bytes plus the opcode's table row) and the decoding and
// encoding of byte streams (encoding.md §1, §8).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/isa.h"
#include "frontend/structs.h"

namespace dvejit {

inline constexpr int kRecordBytes = 64;

struct Instruction {
  std::array<uint8_t, kRecordBytes> bytes{};

  Opcode opcode() const { return static_cast<Opcode>(bytes[0]); }
  const OpcodeInfo& info() const { return InfoOf(opcode()); }
  template <typename S>
  S as() const { return ViewAs<S>(bytes.data()); }
  Header header() const { return ViewAs<Header>(bytes.data()); }
  Events events() const { return ViewAs<Events>(bytes.data() + 4); }
  bool operator==(const Instruction&) const = default;
};

// A record decodes when the opcode byte is listed in encoding.md §8 (supported or not).
// `index` only labels the error.
absl::StatusOr<Instruction> Decode(std::span<const uint8_t> record, int64_t index = 0);
std::array<uint8_t, kRecordBytes> Encode(const Instruction& inst);

// A stream is records back to back; its size must be a multiple of 64.
absl::StatusOr<std::vector<Instruction>> DecodeStream(std::span<const uint8_t> bytes);
std::vector<uint8_t> EncodeStream(std::span<const Instruction> program);

// Builds a zeroed record with the opcode and the mandatory inst_word_len = 0x10.
Instruction MakeInstruction(Opcode op);
// Builds a record from a filled struct view (its header is overwritten: opcode, 0x10).
template <typename S>
Instruction MakeInstruction(Opcode op, const S& s) {
  Instruction inst;
  StoreTo(s, inst.bytes.data());
  inst.bytes[0] = static_cast<uint8_t>(op);
  inst.bytes[1] = 0x10;
  return inst;
}

}  // namespace dvejit
