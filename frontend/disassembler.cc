#include "frontend/disassembler.h"

#include <bit>
#include <charconv>
#include <cmath>

#include "frontend/address.h"
#include "frontend/diag.h"
#include "frontend/strcat.h"

namespace dvejit {
namespace asm_detail {

ImmForm ImmFormOf(const OpcodeInfo& info, const FieldInfo& f, const uint8_t* record) {
  const uint8_t src = ImmSourceOf(f, record);
  uint32_t word = 0;
  for (int i = 3; i >= 0; --i) word = (word << 8) | record[f.offset + i];
  const ImmForm reg = word < static_cast<uint32_t>(kRegisters) ? ImmForm::Register : ImmForm::Raw;
  if (f.kind == FieldKind::ImmPointer) return src == 2 ? reg : ImmForm::Address;
  switch (src) {
    case 0:
      return SourceZeroIsPointer(info.opcode) ? ImmForm::Address : ImmForm::Value;
    case 1:
      return ImmForm::Address;
    case 2:
      return reg;
    default:
      return ImmForm::Raw;
  }
}

bool SourceZeroIsPointer(Opcode op) {
  return op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec;
}

std::string FormatF32(uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  if (!std::isfinite(f)) return Cat("f32:", Hex(bits, 8));
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

std::string FormatAddress(uint32_t word, Generation gen) {
  if (auto place = ResolveImmediate(word, gen);
      place && MakeAddress(place->space, place->partition, place->offset, gen) == word)
    return Cat(SpaceName(place->space), "[", place->partition, "]+", Hex(place->offset));
  if (AddrModeOf(word) == AddrMode::Register) return Cat("reg(", AddrRegister(word), ")");
  return Cat("addr:", Hex(word, 8));
}

}  // namespace asm_detail

namespace {

using asm_detail::FormatAddress;
using asm_detail::FormatF32;
using asm_detail::ImmForm;
using asm_detail::NamedCode;

uint32_t Load(const uint8_t* p, int size) {
  uint32_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

template <size_t N>
std::string CodeName(const NamedCode (&names)[N], uint8_t v) {
  for (const NamedCode& n : names)
    if (n.value == v) return std::string(n.name);
  return Cat(static_cast<int>(v));
}

std::string DtypeText(uint8_t code) {
  const DtypeInfo* d = LookupDtype(code);
  return d != nullptr ? std::string(d->asmname) : Cat("dtype:", Hex(code, 2));
}

std::string AluText(uint8_t code) {
  const AluOpInfo* a = LookupAluOp(code);
  return a != nullptr ? std::string(a->asmname) : Cat("alu:", Hex(code, 2));
}

// A named mode when the exact byte is listed, else the number (register-compare forms, 0x80
// set, are printed as numbers too).
std::string ModeText(uint8_t v, std::string_view (*name_of)(uint8_t)) {
  const std::string_view name = v < 0x80 ? name_of(v) : std::string_view();
  return name.empty() ? Hex(v, 2) : std::string(name);
}

std::string TensorText(const uint8_t* p, int dims, Generation gen) {
  std::string s = FormatAddress(Load(p, 4), gen);
  s += '[';
  for (int d = 0; d < dims; ++d) {
    const uint16_t num = static_cast<uint16_t>(Load(p + 4 + 2 * dims + 2 * d, 2));
    const int16_t step = static_cast<int16_t>(Load(p + 4 + 2 * d, 2));
    if (d > 0) s += ',';
    s += Cat(num, ":", step);
  }
  s += ']';
  return s;
}

std::string FieldText(const OpcodeInfo& info, const FieldInfo& f, const uint8_t* b,
                      Generation gen) {
  const uint8_t* p = b + f.offset;
  switch (f.kind) {
    case FieldKind::U8:
    case FieldKind::U16:
    case FieldKind::U32:
      return Cat(Load(p, f.size));
    case FieldKind::F32:
      return FormatF32(Load(p, 4));
    case FieldKind::F32x8: {
      std::string s = "[";
      for (int i = 0; i < 8; ++i) s += Cat(i ? "," : "", FormatF32(Load(p + 4 * i, 4)));
      return s + "]";
    }
    case FieldKind::Dtype:
      return DtypeText(*p);
    case FieldKind::DtypePair:
      return Cat(DtypeText(*p & 0xF), ",", DtypeText(*p >> 4));
    case FieldKind::AluOp:
      return AluText(*p);
    case FieldKind::ImmSrc:
      return CodeName(asm_detail::kImmSrcNames, *p);
    case FieldKind::ImmSrcPair:
      return Cat(CodeName(asm_detail::kImmSrcNames, *p & 0xF), ",",
                 CodeName(asm_detail::kImmSrcNames, *p >> 4));
    case FieldKind::Reverse:
      return CodeName(asm_detail::kReverseNames, *p);
    case FieldKind::AccumCmd:
      return CodeName(asm_detail::kAccumNames, *p);
    case FieldKind::Subdim:
      return CodeName(asm_detail::kSubdimNames, *p);
    case FieldKind::Tensor1D:
    case FieldKind::Tensor2D:
    case FieldKind::Tensor3D:
    case FieldKind::Tensor4D:
      return TensorText(p, TensorDims(f.kind), gen);
    case FieldKind::ImmPointer:
    case FieldKind::ImmValue: {
      const uint32_t word = Load(p, 4);
      switch (asm_detail::ImmFormOf(info, f, b)) {
        case ImmForm::Value:
          return info.alu_class == AluClass::Arith ? FormatF32(word) : Hex(word);
        case ImmForm::Address:
          return FormatAddress(word, gen);
        case ImmForm::Register:
          return Cat("r", word);
        case ImmForm::Raw:
          return Hex(word, 8);
      }
      return Hex(word, 8);
    }
    case FieldKind::Reserved:
      return {};
  }
  return {};
}

}  // namespace

std::string Disassemble(const Instruction& inst, Generation gen) {
  const uint8_t* b = inst.bytes.data();
  const OpcodeInfo* info = LookupOpcode(b[0]);
  std::string out = info != nullptr ? std::string(info->name) : Cat("opcode:", Hex(b[0], 2));

  // Header and events, only where not default.
  if (b[1] != 0x10) out += Cat(" word_len=", Hex(b[1], 2));
  if (b[2] != 0) out += Cat(" debug=", ModeText(b[2], DebugCmdName));
  if (b[3] != 0) out += Cat(" hint=", static_cast<int>(b[3]));
  if (b[4] != 0 || b[5] != 0)
    out += Cat(" wait=", ModeText(b[4], WaitModeName), ":", static_cast<int>(b[5]));
  if (b[6] != 0 || b[7] != 0)
    out += Cat(" update=", ModeText(b[6], UpdateModeName), ":", static_cast<int>(b[7]));
  if (const uint32_t sem = Load(b + 8, 4); sem != 0) out += Cat(" semval=", sem);

  // Payload: every non-reserved field in table order, then raw@ for nonzero reserved bytes (or
  // every nonzero payload byte when the opcode has no struct dvejit knows).
  bool is_raw[kRecordBytes] = {};
  if (info != nullptr && info->tier != Tier::Unsupported) {
    for (const FieldInfo& f : FieldsOf(info->strct)) {
      if (f.kind == FieldKind::Reserved) {
        for (int i = 0; i < f.size; ++i) is_raw[f.offset + i] = true;
        continue;
      }
      out += Cat(" ", f.name, "=", FieldText(*info, f, b, gen));
    }
  } else {
    for (int i = 12; i < kRecordBytes; ++i) is_raw[i] = true;
  }
  for (int i = 12; i < kRecordBytes; ++i)
    if (is_raw[i] && b[i] != 0) out += Cat(" raw@", i, "=", Hex(b[i], 2));
  return out;
}

std::string DisassembleStream(std::span<const Instruction> prog, Generation gen) {
  std::string out;
  for (const Instruction& inst : prog) {
    out += Disassemble(inst, gen);
    out += '\n';
  }
  return out;
}

}  // namespace dvejit
