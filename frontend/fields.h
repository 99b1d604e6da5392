// Field descriptors of the struct layouts, generated from fields.def: the generic view of a
// record that the assembler, disassembler and reserved-byte checks walk.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "frontend/isa.h"

namespace dvejit {

enum class FieldKind : uint8_t {
  U8, U16, U32, F32, F32x8, Dtype, DtypePair, AluOp, ImmSrc, ImmSrcPair, Reverse, AccumCmd,
  Subdim, Tensor1D, Tensor2D, Tensor3D, Tensor4D,
  ImmPointer,  // an ADDR4 pointer, or an IMM_REG when its source is 2
  ImmValue,    // an instruction value (source 0), an ADDR4 pointer (1) or an IMM_REG (2)
  Reserved,
};
// Where an immediate's IMM_SRC lives.
enum class ImmSrcAt : uint8_t {
  SrcNone, SrcAlwaysPointer, SrcByte35, SrcByte39, SrcByte48, SrcByte49, SrcByte62Low,
  SrcByte62High
};

struct FieldInfo {
  std::string_view name;
  uint8_t offset;
  uint8_t size;
  FieldKind kind;
  ImmSrcAt src;
};

std::span<const FieldInfo> FieldsOf(StructKind s);
const FieldInfo* FindField(StructKind s, std::string_view name);
// The IMM_SRC value governing an immediate field of a record; Pointer for SrcAlwaysPointer.
uint8_t ImmSourceOf(const FieldInfo& f, const uint8_t* record);
int TensorDims(FieldKind k);  // 1..4 for tensor kinds, 0 otherwise

}  // namespace dvejit
