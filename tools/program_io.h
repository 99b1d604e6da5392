// Loading DVE programs for the CLI: a binary stream of 64-byte records or assembly text,
// recognised by extension (.bin / .s, .asm, .dve) or, failing that, by content.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/instruction.h"

namespace dvejit {

inline constexpr size_t kMaxProgramBytes = size_t{256} << 20;

absl::StatusOr<std::vector<Instruction>> LoadProgram(const std::string& path, Generation gen);
// True when the file's bytes look like assembly text rather than binary records.
bool LooksLikeText(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace dvejit
