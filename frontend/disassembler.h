// The text disassembler (docs/asm.md): one canonical line per 64-byte record, generated from the
// field table (fields.def). Lossless for every decodable record, valid or not:
// Assemble(Disassemble(x)) == x bytewise.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "frontend/fields.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"

namespace dvejit {

// One line, no trailing newline. A record whose opcode byte is not listed (not decodable) is
// printed as `opcode:0xNN raw@...`, which Assemble rejects.
std::string Disassemble(const Instruction& inst, Generation gen);
// One line per record, each followed by '\n'.
std::string DisassembleStream(std::span<const Instruction> prog, Generation gen);

// Shared by the assembler and the disassembler; not a public API.
namespace asm_detail {

struct NamedCode {
  uint8_t value;
  std::string_view name;
};
inline constexpr NamedCode kImmSrcNames[] = {{0, "inst"}, {1, "ptr"}, {2, "reg"}};
inline constexpr NamedCode kReverseNames[] = {
    {0, "none"}, {1, "first"}, {2, "second"}, {3, "both"}};
inline constexpr NamedCode kAccumNames[] = {
    {0, "idle"}, {1, "zero"}, {2, "accumulate"}, {3, "zero_accumulate"}, {4, "load_accumulate"}};
inline constexpr NamedCode kSubdimNames[] = {
    {0x00, "unused"}, {0x02, "x"}, {0x03, "xy"}, {0x04, "xyz"}, {0x05, "xyzw"}};

// How the 4 bytes of an immediate field (ImmPointer / ImmValue) are written.
enum class ImmForm : uint8_t {
  Value,     // an instruction value: fp32 (Arith opcodes) or hex bits (others)
  Address,   // an ADDR4 (sbuf[P]+0xOFF, psum[..], reg(N), addr:0xWORD)
  Register,  // rN (an IMM_REG, well formed: bytes 1..3 zero, N < 64)
  Raw,       // 0xWORD
};
ImmForm ImmFormOf(const OpcodeInfo& info, const FieldInfo& f, const uint8_t* record);

// TensorScalarPtrArith / TensorScalarPtrBitvec: their immediates are pointers although their
// sources MUST be 0 (validation.md, ts_ptr_imm_chk). Source 0 is printed as an address there.
bool SourceZeroIsPointer(Opcode op);

// Shortest round-tripping decimal when finite, else f32:0xBITS.
std::string FormatF32(uint32_t bits);
// sbuf[P]+0xOFF / psum[P]+0xOFF when MakeAddress gives back the word, reg(N) for a well-formed
// register form, else addr:0xWORD.
std::string FormatAddress(uint32_t word, Generation gen);

}  // namespace asm_detail
}  // namespace dvejit
