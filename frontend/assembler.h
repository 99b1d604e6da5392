// The text assembler (docs/asm.md): one instruction per line, `OpcodeName field=value ...`,
// generated from the field table (fields.def). Accepts everything the disassembler prints
// (Assemble(Disassemble(x)) == x for every decodable record) plus friendlier input forms:
// hex numbers, fewer tensor dims, `n=` for num_active_channels, immediate sources inferred from
// the value form, and the `.recip_table` directive.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"

namespace dvejit {

// Errors are ErrorKind::Syntax, with "line L, column C: expected ..., got '...'" in the message.
// Addresses are resolved with gen's geometry (sbuf[P]+0xOFF, psum[P]+0xOFF).
absl::StatusOr<std::vector<Instruction>> Assemble(std::string_view text, Generation gen);

}  // namespace dvejit
