// The error model of validation.md §1: every failure is a value carrying its kind, where it
// happened (instruction index, byte offset, opcode), the predicate, the field, the value and
// what was expected. Carried inside absl::Status (message + payloads) across every API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace dvejit {

// Syntax: assembly text that does not parse; Usage: bad arguments to a tool or API call.
enum class ErrorKind : uint8_t { Decode, Invalid, Unsupported, Runtime, Syntax, Usage };
std::string_view ErrorKindName(ErrorKind k);

// One failed check of one instruction, before it is placed in a stream.
struct Violation {
  ErrorKind kind = ErrorKind::Invalid;
  std::string predicate;  // exactly as validation.md spells it
  std::string detail;     // "<field> = <value>, expected <expectation>"
};

Violation MakeViolation(ErrorKind kind, std::string_view predicate, std::string_view field,
                        std::string_view value, std::string_view expected);

// Where a violation happened; index < 0 means "not in a stream".
struct Location {
  int64_t index = -1;
  int opcode = -1;  // the opcode byte, -1 when unknown
};

// "<kind>: #<index> @0x<offset> <Name> (0x<hex>): <predicate>: <detail>"
absl::Status ToStatus(const Violation& v, const Location& where);

// Read back what ToStatus stored (for tests, the CLI and bindings).
std::optional<ErrorKind> ErrorKindOf(const absl::Status& s);
std::string PredicateOf(const absl::Status& s);

std::string Hex(uint64_t v, int min_digits = 0);

}  // namespace dvejit
