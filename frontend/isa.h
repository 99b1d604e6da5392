// ISA vocabulary generated from the table files: opcodes, dtypes, ALU ops, generations and their
// memory geometry. Everything here is a pure function of spec/encoding.md; nothing executes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dvejit {

enum class Generation : uint8_t { Sunda = 0, Cayman = 1, Mariana = 2, Maverick = 3 };
inline constexpr Generation kAllGenerations[] = {Generation::Sunda, Generation::Cayman,
                                                 Generation::Mariana, Generation::Maverick};
std::string_view GenerationName(Generation g);
std::optional<Generation> ParseGeneration(std::string_view name);

// Memory geometry of one generation (encoding.md §2.1).
struct Geometry {
  uint32_t partitions;
  uint32_t sbuf_partition_stride;
  uint32_t sbuf_active_bytes;
  uint32_t sbuf_size;
  uint32_t psum_partition_stride;  // 0 when the generation has no PSUM
  uint32_t psum_active_bytes;
  uint32_t psum_size;
};
const Geometry& GeometryOf(Generation g);
inline constexpr uint32_t kPsumBase = 0x2000000;
inline constexpr int kPartitions = 128;
inline constexpr int kRegisters = 64;
inline constexpr int kParamRamEntries = 256;

// ---- structs (encoding.md §7) ----
enum class StructKind : uint8_t {
  S4D2_BN, S3S3D1_BN, S3S3D1_BN2, S2_BN, S2_BNPL2, S3S3D3_TT, S3D3_TS, S4D4_TSM, S4D4_MR,
  S4D4_TR, D4_MR, D1_RD, CTRL_IM
};
std::string_view StructName(StructKind s);

// ---- opcodes ----
enum class Opcode : uint8_t {
#define DVE_OPCODE(hex, name, strct, marker, tier, cls) name = hex,
#define DVE_OPCODE_UNSUPPORTED(hex, name) name = hex,
#include "frontend/opcodes.def"
};
enum class Tier : uint8_t { A, B, Unsupported };
// The execution profile (validation.md §4): `device` also checks the table set's roster and
// turns ImmLd/PtrMulti into logged no-ops.
enum class Profile : uint8_t { Contract, Device };
enum class AluClass : uint8_t { None, Arith, Bitvec };

struct OpcodeInfo {
  Opcode opcode;
  std::string_view name;
  StructKind strct;     // meaningless when tier == Unsupported
  bool deprecated;      // marker 'n': executing it warns
  Tier tier;
  AluClass alu_class;
};
// nullptr when the byte is not a listed opcode (a decode error).
const OpcodeInfo* LookupOpcode(uint8_t byte);
const OpcodeInfo& InfoOf(Opcode op);
std::optional<Opcode> ParseOpcodeName(std::string_view name);
// Every listed opcode, supported ones first in table order.
const OpcodeInfo* AllOpcodes(int* count);

// ---- dtypes ----
enum class Dtype : uint8_t {
#define DVE_DTYPE(code, name, asmname, size, kind) name = code,
#include "frontend/dtypes.def"
};
enum class DtypeKind : uint8_t { Float, SInt, UInt, Unsupported };
struct DtypeInfo {
  Dtype dtype;
  std::string_view name;     // spec name, e.g. BFLOAT16
  std::string_view asmname;  // assembly name, e.g. bf16
  int size;
  DtypeKind kind;
};
// nullptr for codes not in the table (0x10.. FP4/INT4/...).
const DtypeInfo* LookupDtype(uint8_t code);
std::optional<Dtype> ParseDtypeName(std::string_view name);  // asm or spec name
// A supported data dtype: listed, not INVALID/UINT64/INT64.
bool IsSupportedDtype(uint8_t code);
// validation.md: is_valid_dtype(d, allow_fp32r).
bool IsValidDtype(uint8_t code, bool allow_fp32r);
int DtypeSize(Dtype d);  // 0 for unsupported
bool IsFloatDtype(Dtype d);
bool IsIntDtype(Dtype d);
bool IsSignedIntDtype(Dtype d);
std::string_view DtypeName(uint8_t code);  // "dtype(0x13)" style for unknown codes

// ---- ALU ops ----
enum class AluOp : uint8_t {
#define DVE_ALUOP(code, name, asmname, gen, flags) name = code,
#include "frontend/aluops.def"
};
enum AluFlag : uint32_t {
  BV = 1u << 0, GBV = 1u << 1, AR = 1u << 2, GAR = 1u << 3, INT = 1u << 4, VINT = 1u << 5,
  DVEINT = 1u << 6, SGN = 1u << 7, UNS = 1u << 8,
};
struct AluOpInfo {
  AluOp op;
  std::string_view name;
  std::string_view asmname;
  Generation first_gen;
  uint32_t flags;
};
const AluOpInfo* LookupAluOp(uint8_t code);  // nullptr for invalid codes
std::optional<AluOp> ParseAluOpName(std::string_view name);
std::string_view AluOpName(uint8_t code);
bool AluOpExists(uint8_t code, Generation g);
// An op class predicate of encoding.md §6 on generation g (flags from AluFlag; includes the
// generation rule: ops not existing on g are in no class).
bool AluOpHas(uint8_t code, Generation g, uint32_t flag);
// Whether TensorTensorArith's op runs in the integer band (semantics.md §4.3): an integer op, or
// MOD with an integer source.
bool RunsInIntegerBand(uint8_t code, Generation g, Dtype src0, Dtype src1);
// The signedness an integer-band op runs with, given src0's dtype.
bool IntegerOpSigned(uint8_t code, Dtype src0);

// ---- small enums (encoding.md §1, §4) ----
enum class ImmSrc : uint8_t { Instruction = 0, Pointer = 1, RegPointer = 2 };
enum class ReverseOps : uint8_t { None = 0, First = 1, Second = 2, Both = 3 };
enum class AccumCmd : uint8_t { Idle = 0, Zero = 1, Accumulate = 2, ZeroAccumulate = 3, LoadAccumulate = 4 };
enum class TensorSubdim : uint8_t { Unused = 0x00, X = 0x02, XY = 0x03, XYZ = 0x04, XYZW = 0x05 };
std::string_view DebugCmdName(uint8_t v);     // empty when not listed
std::string_view WaitModeName(uint8_t v);     // of v & 0x7F; empty when not listed
std::string_view UpdateModeName(uint8_t v);   // of v & 0x7F; empty when not listed
std::optional<uint8_t> ParseDebugCmd(std::string_view s);
std::optional<uint8_t> ParseWaitMode(std::string_view s);
std::optional<uint8_t> ParseUpdateMode(std::string_view s);

}  // namespace dvejit
