#include "frontend/instruction.h"

#include "frontend/strcat.h"
#include "frontend/diag.h"

namespace dvejit {

absl::StatusOr<Instruction> Decode(std::span<const uint8_t> record, int64_t index) {
  if (record.size() != kRecordBytes)
    return ToStatus(MakeViolation(ErrorKind::Decode, "", "record size",
                                  Cat(record.size(), " bytes"), "64 bytes"),
                    Location{index, -1});
  if (LookupOpcode(record[0]) == nullptr)
    return ToStatus(MakeViolation(ErrorKind::Decode, "", "opcode", Hex(record[0], 2),
                                  "an opcode listed in encoding.md section 8"),
                    Location{index, -1});
  Instruction inst;
  std::copy(record.begin(), record.end(), inst.bytes.begin());
  return inst;
}

std::array<uint8_t, kRecordBytes> Encode(const Instruction& inst) { return inst.bytes; }

absl::StatusOr<std::vector<Instruction>> DecodeStream(std::span<const uint8_t> bytes) {
  if (bytes.size() % kRecordBytes != 0)
    return ToStatus(
        MakeViolation(ErrorKind::Decode, "", "stream length", Cat(bytes.size(), " bytes"),
                      Cat("a multiple of 64 (", bytes.size() % kRecordBytes,
                                   " trailing bytes after record #",
                                   bytes.size() / kRecordBytes, ")")),
        Location{});
  std::vector<Instruction> out;
  out.reserve(bytes.size() / kRecordBytes);
  for (size_t i = 0; i < bytes.size(); i += kRecordBytes) {
    auto inst = Decode(bytes.subspan(i, kRecordBytes), static_cast<int64_t>(i / kRecordBytes));
    if (!inst.ok()) return inst.status();
    out.push_back(*inst);
  }
  return out;
}

std::vector<uint8_t> EncodeStream(std::span<const Instruction> program) {
  std::vector<uint8_t> out;
  out.reserve(program.size() * kRecordBytes);
  for (const Instruction& inst : program) out.insert(out.end(), inst.bytes.begin(), inst.bytes.end());
  return out;
}

Instruction MakeInstruction(Opcode op) {
  Instruction inst;
  inst.bytes[0] = static_cast<uint8_t>(op);
  inst.bytes[1] = 0x10;
  return inst;
}

}  // namespace dvejit
