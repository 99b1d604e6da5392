// Loading DVE programs for the CLI: a binary stream of 64-byte records or assembly text,
// recognised by extension (.bin / .s, .asm, .dve) or, failing that, by content; and the options
// several commands share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/instruction.h"

namespace dvejit {

inline constexpr size_t kMaxProgramBytes = size_t{256} << 20;

absl::StatusOr<std::vector<Instruction>> LoadProgram(const std::string& path, Generation gen);
// True when the file's bytes look like assembly text rather than binary records.
bool LooksLikeText(const std::string& path, const std::vector<uint8_t>& bytes);

// The value of a `--threads` option: a whole number from 1 to kMaxThreads, else nullopt.
std::optional<int> ParseThreadCount(const std::optional<std::string>& text);
inline constexpr char kThreadsRange[] = "--threads needs a whole number from 1 to 256";

}  // namespace dvejit
