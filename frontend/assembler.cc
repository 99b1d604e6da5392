#include "frontend/assembler.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "frontend/address.h"
#include "frontend/diag.h"
#include "frontend/disassembler.h"
#include "frontend/fields.h"
#include "frontend/strcat.h"

namespace dvejit {
namespace {

#define DVE_ASM_TRY(expr)                                 \
  do {                                                    \
    if (absl::Status st_ = (expr); !st_.ok()) return st_; \
  } while (0)

using asm_detail::ImmForm;
using asm_detail::NamedCode;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool IsDelim(char c) {
  return IsSpace(c) || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' || c == '=';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_'; }
bool IsNumChar(char c) { return IsIdentChar(c) || c == '.' || c == '+' || c == '-'; }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool IEq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (Lower(a[i]) != Lower(b[i])) return false;
  return true;
}
bool StartsWithI(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && IEq(s.substr(0, prefix.size()), prefix);
}

// Any value beyond every field's range; magnitudes saturate here so that huge numbers are range
// errors, never wrapped.
constexpr int64_t kHuge = int64_t{1} << 40;

// A whole word as an integer: decimal or 0x hex, optional leading '-' or '+'.
std::optional<int64_t> NumberWord(std::string_view w) {
  bool neg = false;
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) {
    neg = w[0] == '-';
    w.remove_prefix(1);
  }
  int base = 10;
  if (w.size() >= 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
    base = 16;
    w.remove_prefix(2);
  }
  if (w.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : w) {
    int d;
    if (IsDigit(c))
      d = c - '0';
    else if (base == 16 && Lower(c) >= 'a' && Lower(c) <= 'f')
      d = Lower(c) - 'a' + 10;
    else
      return std::nullopt;
    v = v * base + d;
    if (v > kHuge) v = kHuge;
  }
  return neg ? -v : v;
}

bool IsDecimalInt(std::string_view w) {
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) w.remove_prefix(1);
  if (w.empty()) return false;
  for (char c : w)
    if (!IsDigit(c)) return false;
  return true;
}

std::optional<uint32_t> SpecialF32(std::string_view w) {
  if (IEq(w, "inf") || IEq(w, "+inf") || IEq(w, "infinity") || IEq(w, "+infinity"))
    return 0x7F800000u;
  if (IEq(w, "-inf") || IEq(w, "-infinity")) return 0xFF800000u;
  if (IEq(w, "nan") || IEq(w, "+nan")) return 0x7FC00000u;
  if (IEq(w, "-nan")) return 0xFFC00000u;
  return std::nullopt;
}

// A word that can only be an fp32 (not an integer or hex bits).
bool LooksFloat(std::string_view w) {
  if (StartsWithI(w, "f32:") || SpecialF32(w)) return true;
  std::string_view body = w;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body.empty() || StartsWithI(body, "0x")) return false;
  if (!IsDigit(body[0]) && body[0] != '.') return false;
  return body.find_first_of(".eE") != std::string_view::npos;
}

void Store(uint8_t* p, uint32_t v, int size) {
  for (int i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

constexpr std::string_view kF32Expect =
    "expected an fp32 value (1.5, -0, 3e-5, inf, -inf, nan or f32:0xBITS)";
constexpr std::string_view kAddrExpect =
    "expected an address (sbuf[P]+0xOFF, psum[P]+0xOFF, reg(N) or addr:0xWORD)";
constexpr std::string_view kDtypeExpect =
    "expected a dtype name (fp32, bf16, fp16, fp32r, fp8e3, fp8e4, fp8e5, int8, uint8, int16, "
    "uint16, int32, uint32, int64, uint64, invalid) or dtype:0xNN";
constexpr std::string_view kAluExpect =
    "expected an ALU op name (bypass, add, subtract, mult, max, min, bitwise_and, is_ge, "
    "add_int, is_ge_int, ...) or alu:0xNN";

template <size_t N>
std::string NameList(const NamedCode (&names)[N]) {
  std::string s;
  for (const NamedCode& n : names) s += Cat(s.empty() ? "" : ", ", n.name);
  return s;
}

class LineAssembler {
 public:
  LineAssembler(std::string_view line, int lineno, Generation gen)
      : s_(line), lineno_(lineno), gen_(gen) {}

  absl::Status Run(std::vector<Instruction>* out);

 private:
  // ---- cursor ----
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(s_[pos_])) ++pos_;
  }
  std::string_view ScanWhile(bool (*pred)(char)) {
    const size_t b = pos_;
    while (!AtEnd() && pred(s_[pos_])) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  std::string_view ScanWord() {
    return ScanWhile([](char c) { return !IsDelim(c); });
  }
  std::string_view ScanIdent() { return ScanWhile(IsIdentChar); }
  std::string_view ScanNumToken() { return ScanWhile(IsNumChar); }

  // ---- errors ----
  std::string Describe(size_t at) const {
    if (at >= s_.size()) return "end of line";
    size_t e = at;
    while (e < s_.size() && !IsDelim(s_[e]) && e - at < 40) ++e;
    const bool more = e > at && e < s_.size() && !IsDelim(s_[e]);
    if (e == at) e = at + 1;
    std::string out = "'";
    for (size_t i = at; i < e; ++i) {
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      if (c >= 0x20 && c < 0x7F && c != '\'')
        out += static_cast<char>(c);
      else
        out += Cat("\\x", Hex(c, 2).substr(2));
    }
    if (more) out += "...";
    return out + "'";
  }
  absl::Status Error(size_t at, std::string_view msg) const {
    std::string text = Cat("line ", lineno_, ", column ", at + 1, ": ");
    if (!context_.empty()) text += Cat(context_, ": ");
    text += msg;
    return ToStatus(Violation{ErrorKind::Syntax, "", text}, Location{});
  }
  // "expected X, got 'token'"
  absl::Status Fail(size_t at, std::string_view expected) const {
    return Error(at, Cat(expected, ", got ", Describe(at)));
  }
  absl::Status Expect(char c, std::string_view expected) {
    if (Peek() != c) return Fail(pos_, expected);
    ++pos_;
    return absl::OkStatus();
  }

  // ---- values ----
  absl::Status Integer(int64_t lo, int64_t hi, int64_t* out, std::string_view what = {}) {
    const size_t at = pos_;
    const std::optional<int64_t> v = NumberWord(ScanNumToken());
    if (!v || *v < lo || *v > hi)
      return Fail(at, what.empty() ? Cat("expected an integer ", lo, "..", hi) : std::string(what));
    *out = *v;
    return absl::OkStatus();
  }
  absl::Status UnsignedWord(uint32_t hi, uint32_t* out) {
    const size_t at = pos_;
    const std::optional<int64_t> v = NumberWord(ScanWord());
    if (!v || *v < 0 || *v > hi)
      return Fail(at, Cat("expected an integer 0..", hi, " (decimal or 0x hex)"));
    *out = static_cast<uint32_t>(*v);
    return absl::OkStatus();
  }
  absl::Status F32Word(size_t at, std::string_view w, uint32_t* bits);
  absl::Status F32(uint32_t* bits) {
    const size_t at = pos_;
    return F32Word(at, ScanWord(), bits);
  }
  template <size_t N>
  absl::Status Code(const NamedCode (&names)[N], uint32_t hi, uint8_t* out);
  absl::Status DtypeCode(uint32_t hi, uint8_t* out);
  absl::Status AluCode(uint8_t* out);
  bool AtAddress() const;
  absl::Status Address(uint32_t* word);
  absl::Status Tensor(int dims, uint8_t* p);
  absl::Status Immediate(const OpcodeInfo& info, const FieldInfo& f, uint8_t* p, ImmForm* form);
  absl::Status Mode(std::optional<uint8_t> (*parse)(std::string_view), std::string_view what,
                    uint8_t* mode, uint8_t* idx);
  absl::Status Field(const OpcodeInfo& info, const FieldInfo& f, uint8_t* rec, ImmForm* form);

  absl::Status Directive(std::vector<Instruction>* out);

  std::string_view s_;
  size_t pos_ = 0;
  int lineno_;
  Generation gen_;
  std::string context_;  // the field being parsed, for messages
};

absl::Status LineAssembler::F32Word(size_t at, std::string_view w, uint32_t* bits) {
  if (const std::optional<uint32_t> special = SpecialF32(w)) {
    *bits = *special;
    return absl::OkStatus();
  }
  if (StartsWithI(w, "f32:")) {
    const std::optional<int64_t> v = NumberWord(w.substr(4));
    if (!v || *v < 0 || *v > 0xFFFFFFFFll)
      return Fail(at, "expected f32:0xBITS with BITS a 32-bit number");
    *bits = static_cast<uint32_t>(*v);
    return absl::OkStatus();
  }
  std::string_view s = w;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  std::string_view body = s;
  if (!body.empty() && body[0] == '-') body.remove_prefix(1);
  if (body.empty() || (!IsDigit(body[0]) && body[0] != '.') || StartsWithI(body, "0x"))
    return Fail(at, kF32Expect);
  float f = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), f, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range)
    return Fail(at,
                "expected an fp32 value that neither overflows nor rounds to 0 (write inf or "
                "f32:0xBITS for others)");
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return Fail(at, kF32Expect);
  *bits = std::bit_cast<uint32_t>(f);
  return absl::OkStatus();
}

template <size_t N>
absl::Status LineAssembler::Code(const NamedCode (&names)[N], uint32_t hi, uint8_t* out) {
  const size_t at = pos_;
  const std::string_view w = ScanWord();
  for (const NamedCode& n : names)
    if (IEq(n.name, w)) {
      *out = n.value;
      return absl::OkStatus();
    }
  const std::optional<int64_t> v = NumberWord(w);
  if (!v || *v < 0 || *v > hi)
    return Fail(at, Cat("expected one of ", NameList(names), " or a number 0..", hi));
  *out = static_cast<uint8_t>(*v);
  return absl::OkStatus();
}

absl::Status LineAssembler::DtypeCode(uint32_t hi, uint8_t* out) {
  const size_t at = pos_;
  const std::string_view w = ScanWord();
  if (const std::optional<Dtype> d = ParseDtypeName(w)) {
    *out = static_cast<uint8_t>(*d);
    return absl::OkStatus();
  }
  const std::optional<int64_t> v = NumberWord(StartsWithI(w, "dtype:") ? w.substr(6) : w);
  if (!v || *v < 0 || *v > hi)
    return Fail(at, hi == 0xFF ? std::string(kDtypeExpect)
                               : Cat(kDtypeExpect, " with a code 0..", hi, " in a pair"));
  *out = static_cast<uint8_t>(*v);
  return absl::OkStatus();
}

absl::Status LineAssembler::AluCode(uint8_t* out) {
  const size_t at = pos_;
  const std::string_view w = ScanWord();
  if (const std::optional<AluOp> op = ParseAluOpName(w)) {
    *out = static_cast<uint8_t>(*op);
    return absl::OkStatus();
  }
  const std::optional<int64_t> v = NumberWord(StartsWithI(w, "alu:") ? w.substr(4) : w);
  if (!v || *v < 0 || *v > 0xFF) return Fail(at, kAluExpect);
  *out = static_cast<uint8_t>(*v);
  return absl::OkStatus();
}

bool LineAssembler::AtAddress() const {
  size_t e = pos_;
  while (e < s_.size() && IsIdentChar(s_[e])) ++e;
  const std::string_view id = s_.substr(pos_, e - pos_);
  const char next = e < s_.size() ? s_[e] : '\0';
  return ((IEq(id, "sbuf") || IEq(id, "psum")) && next == '[') || (IEq(id, "reg") && next == '(') ||
         (IEq(id, "addr") && next == ':');
}

absl::Status LineAssembler::Address(uint32_t* word) {
  const size_t at = pos_;
  if (!AtAddress()) return Fail(at, kAddrExpect);
  const std::string_view id = ScanIdent();
  int64_t v = 0;
  if (IEq(id, "reg")) {
    ++pos_;  // '('
    DVE_ASM_TRY(Integer(0, kRegisters - 1, &v, "expected a register number 0..63 in reg(N)"));
    DVE_ASM_TRY(Expect(')', "expected ')' after reg(N"));
    *word = MakeRegisterAddress(static_cast<uint8_t>(v));
    return absl::OkStatus();
  }
  if (IEq(id, "addr")) {
    ++pos_;  // ':'
    DVE_ASM_TRY(Integer(0, 0xFFFFFFFFll, &v, "expected a 32-bit ADDR4 word after addr:"));
    *word = static_cast<uint32_t>(v);
    return absl::OkStatus();
  }
  const Space space = IEq(id, "sbuf") ? Space::Sbuf : Space::Psum;
  const Geometry& geo = GeometryOf(gen_);
  if (space == Space::Psum && geo.psum_size == 0)
    return Error(at, Cat("psum does not exist on ", GenerationName(gen_),
                         " (write addr:0xWORD for a raw address word)"));
  ++pos_;  // '['
  int64_t partition = 0, offset = 0;
  DVE_ASM_TRY(Integer(0, geo.partitions - 1, &partition,
                      Cat("expected a partition number 0..", geo.partitions - 1)));
  DVE_ASM_TRY(Expect(']', "expected ']' after the partition number"));
  const uint32_t stride = PartitionStride(space, gen_);
  if (Peek() == '+') {
    ++pos_;
    DVE_ASM_TRY(
        Integer(0, stride - 1, &offset,
                Cat("expected an offset 0..", Hex(stride - 1),
                    " within the partition (the partition stride on ", GenerationName(gen_), ")")));
  }
  const uint32_t w =
      MakeAddress(space, static_cast<uint32_t>(partition), static_cast<uint32_t>(offset), gen_);
  const std::optional<Place> place = ResolveImmediate(w, gen_);
  if (!place || place->space != space || place->partition != partition || place->offset != offset)
    return Error(at, "address does not resolve back to itself (write addr:0xWORD)");
  *word = w;
  return absl::OkStatus();
}

absl::Status LineAssembler::Tensor(int dims, uint8_t* p) {
  uint32_t addr = 0;
  DVE_ASM_TRY(Address(&addr));
  DVE_ASM_TRY(Expect('[', Cat("expected '[' and the dims num:step,... (dimension 0 first) of a ",
                              dims, "-dim tensor")));
  int64_t num[4] = {1, 1, 1, 1}, step[4] = {0, 0, 0, 0};
  SkipSpace();
  if (Peek() == ']') {
    ++pos_;
  } else {
    for (int d = 0;; ++d) {
      if (d == dims)
        return Fail(pos_, Cat("expected ']': a Tensor", dims, "D has ", dims, " dims"));
      DVE_ASM_TRY(
          Integer(0, 0xFFFF, &num[d], "expected a dim count num 0..65535 (dims are num:step)"));
      SkipSpace();
      DVE_ASM_TRY(Expect(':', "expected ':' between a dim's num and step"));
      SkipSpace();
      DVE_ASM_TRY(Integer(-32768, 32767, &step[d], "expected a dim step -32768..32767"));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        continue;
      }
      DVE_ASM_TRY(Expect(']', "expected ',' or ']' after a num:step dim"));
      break;
    }
  }
  Store(p, addr, 4);
  for (int d = 0; d < dims; ++d) {
    Store(p + 4 + 2 * d, static_cast<uint32_t>(step[d]) & 0xFFFF, 2);
    Store(p + 4 + 2 * dims + 2 * d, static_cast<uint32_t>(num[d]), 2);
  }
  return absl::OkStatus();
}

absl::Status LineAssembler::Immediate(const OpcodeInfo& info, const FieldInfo& f, uint8_t* p,
                                      ImmForm* form) {
  const size_t at = pos_;
  uint32_t bits = 0;
  if (AtAddress()) {
    DVE_ASM_TRY(Address(&bits));
    *form = ImmForm::Address;
  } else {
    const std::string_view w = ScanWord();
    const bool is_reg =
        w.size() >= 2 && (w[0] == 'r' || w[0] == 'R') && IsDecimalInt(w.substr(1)) && IsDigit(w[1]);
    if (is_reg) {
      const std::optional<int64_t> v = NumberWord(w.substr(1));
      if (!v || *v >= kRegisters) return Fail(at, "expected a register r0..r63");
      bits = static_cast<uint32_t>(*v);
      *form = ImmForm::Register;
    } else if (f.kind == FieldKind::ImmPointer) {
      const std::optional<int64_t> v = NumberWord(w);
      if (!v || *v < 0 || *v > 0xFFFFFFFFll)
        return Fail(at,
                    "expected a pointer (sbuf[P]+0xOFF, psum[P]+0xOFF, reg(N), addr:0xWORD), a "
                    "register rN or raw bits 0xWORD");
      bits = static_cast<uint32_t>(*v);
      *form = ImmForm::Raw;
    } else {
      const bool fp_default =
          info.alu_class == AluClass::Arith && !asm_detail::SourceZeroIsPointer(info.opcode);
      if (LooksFloat(w) || (fp_default && IsDecimalInt(w))) {
        DVE_ASM_TRY(F32Word(at, w, &bits));
      } else {
        const std::optional<int64_t> v = NumberWord(w);
        if (!v || *v < std::numeric_limits<int32_t>::min() || *v > 0xFFFFFFFFll)
          return Fail(at,
                      "expected an immediate: a value (1.5, -3, 0x1F, nan, f32:0xBITS), an "
                      "address (sbuf[P]+0xOFF, psum[P]+0xOFF, reg(N), addr:0xWORD) or a "
                      "register rN");
        bits = static_cast<uint32_t>(*v);
      }
      *form = ImmForm::Value;
    }
  }
  Store(p, bits, 4);
  return absl::OkStatus();
}

absl::Status LineAssembler::Mode(std::optional<uint8_t> (*parse)(std::string_view),
                                 std::string_view what, uint8_t* mode, uint8_t* idx) {
  const size_t at = pos_;
  const std::string_view w = ScanIdent();
  if (const std::optional<uint8_t> m = parse(w)) {
    *mode = *m;
  } else {
    const std::optional<int64_t> v = NumberWord(w);
    if (!v || *v < 0 || *v > 0xFF) return Fail(at, Cat("expected ", what, " or a number 0..255"));
    *mode = static_cast<uint8_t>(*v);
  }
  DVE_ASM_TRY(Expect(':', "expected ':' and an index after the mode (e.g. wait=SEM_EQ_IMM:5)"));
  int64_t v = 0;
  DVE_ASM_TRY(Integer(0, 255, &v, "expected an index 0..255"));
  *idx = static_cast<uint8_t>(v);
  return absl::OkStatus();
}

absl::Status LineAssembler::Field(const OpcodeInfo& info, const FieldInfo& f, uint8_t* rec,
                                  ImmForm* form) {
  uint8_t* p = rec + f.offset;
  switch (f.kind) {
    case FieldKind::U8:
    case FieldKind::U16:
    case FieldKind::U32: {
      uint32_t v = 0;
      DVE_ASM_TRY(UnsignedWord(static_cast<uint32_t>((uint64_t{1} << (8 * f.size)) - 1), &v));
      Store(p, v, f.size);
      return absl::OkStatus();
    }
    case FieldKind::F32: {
      uint32_t bits = 0;
      DVE_ASM_TRY(F32(&bits));
      Store(p, bits, 4);
      return absl::OkStatus();
    }
    case FieldKind::F32x8: {
      DVE_ASM_TRY(Expect('[', "expected '[' and up to 8 fp32 values"));
      SkipSpace();
      if (Peek() == ']') {
        ++pos_;
        return absl::OkStatus();
      }
      for (int i = 0;; ++i) {
        if (i == 8) return Fail(pos_, "expected ']' after 8 fp32 values");
        uint32_t bits = 0;
        DVE_ASM_TRY(F32(&bits));
        Store(p + 4 * i, bits, 4);
        SkipSpace();
        if (Peek() == ',') {
          ++pos_;
          SkipSpace();
          continue;
        }
        DVE_ASM_TRY(Expect(']', "expected ',' or ']' in the list of fp32 values"));
        return absl::OkStatus();
      }
    }
    case FieldKind::Dtype:
      return DtypeCode(0xFF, p);
    case FieldKind::DtypePair: {
      uint8_t lo = 0, hi = 0;
      DVE_ASM_TRY(DtypeCode(0xF, &lo));
      DVE_ASM_TRY(Expect(',', "expected ',' and the second dtype of the pair (e.g. fp32,bf16)"));
      SkipSpace();
      DVE_ASM_TRY(DtypeCode(0xF, &hi));
      *p = static_cast<uint8_t>(lo | (hi << 4));
      return absl::OkStatus();
    }
    case FieldKind::AluOp:
      return AluCode(p);
    case FieldKind::ImmSrc:
      return Code(asm_detail::kImmSrcNames, 0xFF, p);
    case FieldKind::ImmSrcPair: {
      uint8_t lo = 0, hi = 0;
      DVE_ASM_TRY(Code(asm_detail::kImmSrcNames, 0xF, &lo));
      DVE_ASM_TRY(Expect(',', "expected ',' and the second source of the pair (e.g. ptr,reg)"));
      SkipSpace();
      DVE_ASM_TRY(Code(asm_detail::kImmSrcNames, 0xF, &hi));
      *p = static_cast<uint8_t>(lo | (hi << 4));
      return absl::OkStatus();
    }
    case FieldKind::Reverse:
      return Code(asm_detail::kReverseNames, 0xFF, p);
    case FieldKind::AccumCmd:
      return Code(asm_detail::kAccumNames, 0xFF, p);
    case FieldKind::Subdim:
      return Code(asm_detail::kSubdimNames, 0xFF, p);
    case FieldKind::Tensor1D:
    case FieldKind::Tensor2D:
    case FieldKind::Tensor3D:
    case FieldKind::Tensor4D:
      return Tensor(TensorDims(f.kind), p);
    case FieldKind::ImmPointer:
    case FieldKind::ImmValue:
      return Immediate(info, f, p, form);
    case FieldKind::Reserved:
      break;
  }
  return Error(pos_, Cat("field '", f.name, "' is reserved"));
}

absl::Status LineAssembler::Directive(std::vector<Instruction>* out) {
  const size_t at = pos_;
  ++pos_;  // '.'
  const std::string_view name = ScanIdent();
  if (!IEq(name, "recip_table")) {
    pos_ = at;
    return Fail(at, "expected a directive (.recip_table)");
  }
  SkipSpace();
  if (!AtEnd())
    return Fail(pos_, "expected end of line after .recip_table (it takes no arguments)");
  // Parameter RAM entry k = fp32(1/(k+1)), 8 entries per LoadParameterRam.
  for (int i = 0; i < kParamRamEntries / 8; ++i) {
    Instruction inst = MakeInstruction(Opcode::LoadParameterRam);
    CTRL_IM c = inst.as<CTRL_IM>();
    c.param_ram_offset = static_cast<uint16_t>(8 * i);
    for (int j = 0; j < 8; ++j) c.immediate[j] = 1.0f / static_cast<float>(8 * i + j + 1);
    StoreTo(c, inst.bytes.data());
    out->push_back(inst);
  }
  return absl::OkStatus();
}

absl::Status LineAssembler::Run(std::vector<Instruction>* out) {
  // Comments: '#' or '//' to the end of the line (no value contains either).
  for (size_t i = 0; i < s_.size(); ++i)
    if (s_[i] == '#' || (s_[i] == '/' && i + 1 < s_.size() && s_[i + 1] == '/')) {
      s_ = s_.substr(0, i);
      break;
    }
  SkipSpace();
  if (AtEnd()) return absl::OkStatus();
  if (Peek() == '.') return Directive(out);

  // The opcode.
  const size_t op_at = pos_;
  const std::string_view opword = ScanWord();
  const OpcodeInfo* info = nullptr;
  if (const std::optional<Opcode> op = ParseOpcodeName(opword)) {
    info = &InfoOf(*op);
  } else if (StartsWithI(opword, "opcode:")) {
    const std::optional<int64_t> v = NumberWord(opword.substr(7));
    if (!v || *v < 0 || *v > 0xFF) return Fail(op_at, "expected opcode:0xNN with NN a byte");
    info = LookupOpcode(static_cast<uint8_t>(*v));
    if (info == nullptr)
      return Error(op_at, Cat("opcode ", Hex(*v, 2),
                              " is not listed in encoding.md section 8 (not decodable)"));
  } else {
    return Fail(op_at,
                "expected an opcode name (TensorTensorArith, TensorScalarArith, BatchNormStats2, "
                "LoadParameterRam, ...) or a directive (.recip_table)");
  }
  const bool has_fields = info->tier != Tier::Unsupported;
  Instruction inst = MakeInstruction(info->opcode);
  uint8_t* rec = inst.bytes.data();

  std::map<std::string, size_t, std::less<>> given;  // key -> column of its first use
  bool given_offset[kRecordBytes] = {};
  std::vector<std::pair<int, uint8_t>> raws;
  std::vector<std::pair<const FieldInfo*, ImmForm>> imms;

  for (;;) {
    context_.clear();
    if (!AtEnd() && !IsSpace(Peek()))
      return Fail(pos_, given.empty() ? std::string("expected whitespace after the opcode")
                                      : "expected whitespace or end of line after a value");
    SkipSpace();
    if (AtEnd()) break;

    // The key.
    const size_t key_at = pos_;
    std::string key;
    int raw_offset = -1;
    if (StartsWithI(s_.substr(pos_), "raw@")) {
      pos_ += 4;
      int64_t off = 0;
      DVE_ASM_TRY(Integer(1, kRecordBytes - 1, &off,
                          "expected a byte offset 1..63 after raw@ (byte 0, the opcode, is "
                          "set by the opcode name)"));
      raw_offset = static_cast<int>(off);
      key = Cat("raw@", raw_offset);
    } else {
      key = std::string(ScanIdent());
      if (key.empty())
        return Fail(key_at, "expected a field name (field=value), a comment or end of line");
    }
    const std::string written = key;  // as written, for messages
    if (key == "n") key = "num_active_channels";
    SkipSpace();
    context_ = written;
    DVE_ASM_TRY(Expect('=', "expected '=' after the field name"));
    SkipSpace();
    if (auto it = given.find(key); it != given.end())
      return Error(key_at, Cat("duplicate field (first given at column ", it->second + 1, ")"));
    given.emplace(key, key_at);

    if (raw_offset >= 0) {
      uint32_t v = 0;
      DVE_ASM_TRY(UnsignedWord(0xFF, &v));
      raws.emplace_back(raw_offset, static_cast<uint8_t>(v));
    } else if (key == "word_len" || key == "hint") {
      uint32_t v = 0;
      DVE_ASM_TRY(UnsignedWord(0xFF, &v));
      rec[key == "word_len" ? 1 : 3] = static_cast<uint8_t>(v);
    } else if (key == "debug") {
      const size_t at = pos_;
      const std::string_view w = ScanWord();
      if (const std::optional<uint8_t> d = ParseDebugCmd(w)) {
        rec[2] = *d;
      } else {
        const std::optional<int64_t> v = NumberWord(w);
        if (!v || *v < 0 || *v > 0xFF)
          return Fail(at,
                      "expected a debug command (NONE, NOTIFY, START, END, START_END, "
                      "INS_FIELD) or a number 0..255");
        rec[2] = static_cast<uint8_t>(*v);
      }
    } else if (key == "wait") {
      DVE_ASM_TRY(Mode(ParseWaitMode,
                       "a wait mode (NONE, SEM_EQ_IMM, SEM_LT_IMM, SEM_LE_IMM, SEM_GT_IMM, "
                       "SEM_GE_IMM, EVT_SET, EVT_SET_THEN_CLEAR, EVT_CLEAR, EVT_CLEAR_THEN_SET)",
                       &rec[4], &rec[5]));
    } else if (key == "update") {
      DVE_ASM_TRY(Mode(ParseUpdateMode,
                       "an update mode (NONE, EVT_SET_READ, SEM_INC_READ, SEM_DEC_READ, ..., "
                       "SEM_WR_IMM_COMPLETE)",
                       &rec[6], &rec[7]));
    } else if (key == "semval") {
      uint32_t v = 0;
      DVE_ASM_TRY(UnsignedWord(0xFFFFFFFFu, &v));
      Store(rec + 8, v, 4);
    } else {
      const FieldInfo* f = has_fields ? FindField(info->strct, key) : nullptr;
      if (f == nullptr) {
        context_.clear();
        if (!has_fields)
          return Error(key_at, Cat("unknown field '", written, "': ", info->name,
                                   " is not supported by dvejit and has no fields; set payload "
                                   "bytes with raw@OFF=0xHH"));
        std::string names;
        for (const FieldInfo& g : FieldsOf(info->strct))
          if (g.kind != FieldKind::Reserved) names += Cat(g.name, ", ");
        return Error(key_at, Cat("unknown field '", written, "' for ", info->name, " (",
                                 StructName(info->strct), "); expected one of ", names,
                                 "n, word_len, debug, hint, wait, update, semval or raw@OFF"));
      }
      if (f->kind == FieldKind::Reserved)
        return Error(key_at, "reserved field: set its bytes with raw@OFF=0xHH");
      ImmForm form = ImmForm::Value;
      DVE_ASM_TRY(Field(*info, *f, rec, &form));
      given_offset[f->offset] = true;
      if (f->kind == FieldKind::ImmPointer || f->kind == FieldKind::ImmValue)
        imms.emplace_back(f, form);
    }
  }

  // Immediate sources that were not given are inferred from the immediates' value forms:
  // address -> ptr, rN -> reg, anything else -> inst.
  for (const auto& [f, form] : imms) {
    uint8_t src = 0;
    if (form == ImmForm::Address)
      src = f->kind == FieldKind::ImmValue && asm_detail::SourceZeroIsPointer(info->opcode) ? 0 : 1;
    else if (form == ImmForm::Register)
      src = 2;
    switch (f->src) {
      case ImmSrcAt::SrcByte35:
      case ImmSrcAt::SrcByte39:
      case ImmSrcAt::SrcByte48:
      case ImmSrcAt::SrcByte49: {
        const int off = f->src == ImmSrcAt::SrcByte35   ? 35
                        : f->src == ImmSrcAt::SrcByte39 ? 39
                        : f->src == ImmSrcAt::SrcByte48 ? 48
                                                        : 49;
        if (!given_offset[off]) rec[off] = src;
        break;
      }
      case ImmSrcAt::SrcByte62Low:
        if (!given_offset[62]) rec[62] = static_cast<uint8_t>((rec[62] & 0xF0) | src);
        break;
      case ImmSrcAt::SrcByte62High:
        if (!given_offset[62]) rec[62] = static_cast<uint8_t>((rec[62] & 0x0F) | (src << 4));
        break;
      case ImmSrcAt::SrcNone:
      case ImmSrcAt::SrcAlwaysPointer:
        break;
    }
  }
  for (const auto& [off, v] : raws) rec[off] = v;
  out->push_back(inst);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Instruction>> Assemble(std::string_view text, Generation gen) {
  std::vector<Instruction> out;
  int lineno = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++lineno;
    LineAssembler line(text.substr(start, end - start), lineno, gen);
    DVE_ASM_TRY(line.Run(&out));
    start = end + 1;
  }
  return out;
}

}  // namespace dvejit
