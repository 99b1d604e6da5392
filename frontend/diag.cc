#include "frontend/diag.h"

#include <cstdio>

#include "absl/strings/cord.h"
#include "frontend/strcat.h"
#include "frontend/isa.h"

namespace dvejit {
namespace {
constexpr char kKindUrl[] = "dvejit.dev/kind";
constexpr char kPredicateUrl[] = "dvejit.dev/predicate";

absl::StatusCode CodeOf(ErrorKind k) {
  switch (k) {
    case ErrorKind::Decode:
    case ErrorKind::Invalid:
    case ErrorKind::Syntax:
    case ErrorKind::Usage: return absl::StatusCode::kInvalidArgument;
    case ErrorKind::Unsupported: return absl::StatusCode::kUnimplemented;
    case ErrorKind::Runtime: return absl::StatusCode::kFailedPrecondition;
  }
  return absl::StatusCode::kUnknown;
}
}  // namespace

std::string_view ErrorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::Decode: return "decode";
    case ErrorKind::Invalid: return "invalid";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Runtime: return "runtime";
    case ErrorKind::Syntax: return "syntax";
    case ErrorKind::Usage: return "usage";
  }
  return "?";
}

std::string Hex(uint64_t v, int min_digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llX", min_digits, static_cast<unsigned long long>(v));
  return buf;
}

Violation MakeViolation(ErrorKind kind, std::string_view predicate, std::string_view field,
                        std::string_view value, std::string_view expected) {
  return Violation{kind, std::string(predicate),
                   Cat(field, " = ", value, ", expected ", expected)};
}

absl::Status ToStatus(const Violation& v, const Location& where) {
  std::string msg = Cat(ErrorKindName(v.kind), ":");
  if (where.index >= 0)
    msg += Cat(" #", where.index, " @", Hex(static_cast<uint64_t>(where.index) * 64));
  if (where.opcode >= 0) {
    const OpcodeInfo* info = LookupOpcode(static_cast<uint8_t>(where.opcode));
    msg += Cat(" ", info ? info->name : std::string_view("opcode"), " (",
                    Hex(static_cast<uint64_t>(where.opcode), 2), ")");
  }
  if (where.index >= 0 || where.opcode >= 0) msg += ":";
  if (!v.predicate.empty()) msg += Cat(" ", v.predicate, ":");
  msg += Cat(" ", v.detail);
  absl::Status s(CodeOf(v.kind), msg);
  s.SetPayload(kKindUrl, absl::Cord(std::string(ErrorKindName(v.kind))));
  s.SetPayload(kPredicateUrl, absl::Cord(v.predicate));
  return s;
}

std::optional<ErrorKind> ErrorKindOf(const absl::Status& s) {
  auto p = s.GetPayload(kKindUrl);
  if (!p) return std::nullopt;
  const std::string k(*p);
  for (ErrorKind e : {ErrorKind::Decode, ErrorKind::Invalid, ErrorKind::Unsupported,
                      ErrorKind::Runtime, ErrorKind::Syntax, ErrorKind::Usage})
    if (k == ErrorKindName(e)) return e;
  return std::nullopt;
}

std::string PredicateOf(const absl::Status& s) {
  auto p = s.GetPayload(kPredicateUrl);
  return p ? std::string(*p) : std::string();
}

}  // namespace dvejit
