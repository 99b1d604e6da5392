#include "frontend/isa.h"

#include <array>
#include <cctype>
#include <string>

namespace dvejit {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

constexpr OpcodeInfo kOpcodes[] = {
#define DVE_OPCODE(hex, nm, strct, marker, tier, cls) \
  {Opcode::nm, #nm, StructKind::strct, (marker) == 'n', Tier::tier, AluClass::cls},
#define DVE_OPCODE_UNSUPPORTED(hex, nm) \
  {Opcode::nm, #nm, StructKind::CTRL_IM, false, Tier::Unsupported, AluClass::None},
#include "frontend/opcodes.def"
};

constexpr DtypeInfo kDtypes[] = {
#define DVE_DTYPE(code, nm, asmnm, size, kind) {Dtype::nm, #nm, #asmnm, size, DtypeKind::kind},
#include "frontend/dtypes.def"
};

constexpr AluOpInfo kAluOps[] = {
#define DVE_ALUOP(code, nm, asmnm, gen, flags) {AluOp::nm, #nm, #asmnm, Generation::gen, flags},
#include "frontend/aluops.def"
};

// 256-entry direct lookup tables built once.
template <typename Info, size_t N, typename KeyFn>
constexpr std::array<const Info*, 256> Index(const Info (&table)[N], KeyFn key) {
  std::array<const Info*, 256> idx{};
  for (const Info& i : table) idx[key(i)] = &i;
  return idx;
}
constexpr auto kOpcodeIndex =
    Index(kOpcodes, [](const OpcodeInfo& i) { return static_cast<uint8_t>(i.opcode); });
constexpr auto kDtypeIndex =
    Index(kDtypes, [](const DtypeInfo& i) { return static_cast<uint8_t>(i.dtype); });
constexpr auto kAluIndex =
    Index(kAluOps, [](const AluOpInfo& i) { return static_cast<uint8_t>(i.op); });

constexpr Geometry kGeometry[] = {
    // partitions, sbuf stride, sbuf active, sbuf size, psum stride, psum active, psum size
    {128, 256 << 10, 192 << 10, 0x2000000, 32 << 10, 16 << 10, 0x400000},  // sunda
    {128, 256 << 10, 224 << 10, 0x2000000, 32 << 10, 16 << 10, 0x400000},  // cayman
    {128, 256 << 10, 256 << 10, 0x2000000, 32 << 10, 16 << 10, 0x400000},  // mariana
    {128, 1 << 20, 512 << 10, 0x8000000, 0, 0, 0},                         // maverick
};

struct NamedValue {
  uint8_t value;
  std::string_view name;
};
constexpr NamedValue kDebugCmds[] = {{0, "NONE"},  {1, "NOTIFY"},    {3, "START"},
                                     {5, "END"},   {7, "START_END"}, {9, "INS_FIELD"}};
constexpr NamedValue kWaitModes[] = {
    {0, "NONE"},       {1, "SEM_EQ_IMM"}, {2, "SEM_LT_IMM"}, {3, "SEM_LE_IMM"},
    {4, "SEM_GT_IMM"}, {5, "SEM_GE_IMM"}, {6, "EVT_SET"},    {7, "EVT_SET_THEN_CLEAR"},
    {14, "EVT_CLEAR"}, {15, "EVT_CLEAR_THEN_SET"}};
constexpr NamedValue kUpdateModes[] = {
    {0, "NONE"},
    {1, "EVT_SET_READ"},
    {2, "EVT_CLR_READ"},
    {3, "SEM_INC_READ"},
    {4, "SEM_DEC_READ"},
    {5, "SEM_ADD_IMM_READ"},
    {7, "SEM_SUB_IMM_READ"},
    {9, "SEM_WR_IMM_READ"},
    {17, "EVT_SET_COMPLETE"},
    {18, "EVT_CLR_COMPLETE"},
    {19, "SEM_INC_COMPLETE"},
    {20, "SEM_DEC_COMPLETE"},
    {21, "SEM_ADD_IMM_COMPLETE"},
    {23, "SEM_SUB_IMM_COMPLETE"},
    {25, "SEM_WR_IMM_COMPLETE"}};

template <size_t N>
std::string_view NameIn(const NamedValue (&t)[N], uint8_t v) {
  for (const NamedValue& nv : t)
    if (nv.value == v) return nv.name;
  return {};
}
template <size_t N>
std::optional<uint8_t> ParseIn(const NamedValue (&t)[N], std::string_view s) {
  for (const NamedValue& nv : t)
    if (IEquals(nv.name, s)) return nv.value;
  return std::nullopt;
}

}  // namespace

std::string_view GenerationName(Generation g) {
  switch (g) {
    case Generation::Sunda: return "sunda";
    case Generation::Cayman: return "cayman";
    case Generation::Mariana: return "mariana";
    case Generation::Maverick: return "maverick";
  }
  return "?";
}

std::optional<Generation> ParseGeneration(std::string_view name) {
  for (Generation g : kAllGenerations)
    if (IEquals(GenerationName(g), name)) return g;
  return std::nullopt;
}

const Geometry& GeometryOf(Generation g) { return kGeometry[static_cast<int>(g)]; }

std::string_view StructName(StructKind s) {
  static constexpr std::string_view kNames[] = {
      "S4D2_BN", "S3S3D1_BN", "S3S3D1_BN2", "S2_BN",  "S2_BNPL2", "S3S3D3_TT", "S3D3_TS",
      "S4D4_TSM", "S4D4_MR",  "S4D4_TR",    "D4_MR",  "D1_RD",    "CTRL_IM"};
  return kNames[static_cast<int>(s)];
}

const OpcodeInfo* LookupOpcode(uint8_t byte) { return kOpcodeIndex[byte]; }
const OpcodeInfo& InfoOf(Opcode op) { return *kOpcodeIndex[static_cast<uint8_t>(op)]; }
std::optional<Opcode> ParseOpcodeName(std::string_view name) {
  for (const OpcodeInfo& i : kOpcodes)
    if (IEquals(i.name, name)) return i.opcode;
  return std::nullopt;
}
const OpcodeInfo* AllOpcodes(int* count) {
  *count = static_cast<int>(std::size(kOpcodes));
  return kOpcodes;
}

const DtypeInfo* LookupDtype(uint8_t code) { return kDtypeIndex[code]; }
std::optional<Dtype> ParseDtypeName(std::string_view name) {
  for (const DtypeInfo& i : kDtypes)
    if (IEquals(i.asmname, name) || IEquals(i.name, name)) return i.dtype;
  return std::nullopt;
}
bool IsSupportedDtype(uint8_t code) {
  const DtypeInfo* i = LookupDtype(code);
  return i != nullptr && i->kind != DtypeKind::Unsupported;
}
bool IsValidDtype(uint8_t code, bool allow_fp32r) {
  if (!IsSupportedDtype(code)) return false;
  return allow_fp32r || code != static_cast<uint8_t>(Dtype::FP32R);
}
int DtypeSize(Dtype d) {
  const DtypeInfo* i = LookupDtype(static_cast<uint8_t>(d));
  return (i == nullptr || i->kind == DtypeKind::Unsupported) ? 0 : i->size;
}
bool IsFloatDtype(Dtype d) {
  const DtypeInfo* i = LookupDtype(static_cast<uint8_t>(d));
  return i != nullptr && i->kind == DtypeKind::Float;
}
bool IsIntDtype(Dtype d) {
  const DtypeInfo* i = LookupDtype(static_cast<uint8_t>(d));
  return i != nullptr && (i->kind == DtypeKind::SInt || i->kind == DtypeKind::UInt);
}
bool IsSignedIntDtype(Dtype d) {
  const DtypeInfo* i = LookupDtype(static_cast<uint8_t>(d));
  return i != nullptr && i->kind == DtypeKind::SInt;
}
std::string_view DtypeName(uint8_t code) {
  const DtypeInfo* i = LookupDtype(code);
  if (i != nullptr) return i->name;
  static const std::array<std::string, 256> kUnknown = [] {
    std::array<std::string, 256> a;
    for (int c = 0; c < 256; ++c) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "dtype(0x%02X)", c);
      a[c] = buf;
    }
    return a;
  }();
  return kUnknown[code];
}

const AluOpInfo* LookupAluOp(uint8_t code) { return kAluIndex[code]; }
std::optional<AluOp> ParseAluOpName(std::string_view name) {
  for (const AluOpInfo& i : kAluOps)
    if (IEquals(i.asmname, name)) return i.op;
  return std::nullopt;
}
std::string_view AluOpName(uint8_t code) {
  const AluOpInfo* i = LookupAluOp(code);
  return i != nullptr ? i->name : std::string_view("INVALID_ALU_OP");
}
bool AluOpExists(uint8_t code, Generation g) {
  const AluOpInfo* i = LookupAluOp(code);
  return i != nullptr && static_cast<int>(g) >= static_cast<int>(i->first_gen);
}
bool AluOpHas(uint8_t code, Generation g, uint32_t flag) {
  return AluOpExists(code, g) && (LookupAluOp(code)->flags & flag) != 0;
}

bool RunsInIntegerBand(uint8_t code, Generation g, Dtype src0, Dtype src1) {
  return AluOpHas(code, g, INT) ||
         (code == static_cast<uint8_t>(AluOp::MOD) && (IsIntDtype(src0) || IsIntDtype(src1)));
}

bool IntegerOpSigned(uint8_t code, Dtype src0) {
  const AluOpInfo* info = LookupAluOp(code);
  const uint32_t f = info != nullptr ? info->flags : 0;
  if ((f & SGN) && (f & UNS)) return IsSignedIntDtype(src0);
  return (f & SGN) != 0;
}

std::string_view DebugCmdName(uint8_t v) { return NameIn(kDebugCmds, v); }
std::string_view WaitModeName(uint8_t v) { return NameIn(kWaitModes, v & 0x7F); }
std::string_view UpdateModeName(uint8_t v) { return NameIn(kUpdateModes, v & 0x7F); }
std::optional<uint8_t> ParseDebugCmd(std::string_view s) { return ParseIn(kDebugCmds, s); }
std::optional<uint8_t> ParseWaitMode(std::string_view s) { return ParseIn(kWaitModes, s); }
std::optional<uint8_t> ParseUpdateMode(std::string_view s) { return ParseIn(kUpdateModes, s); }

}  // namespace dvejit
