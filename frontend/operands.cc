#include "frontend/operands.h"

#include "frontend/address.h"

namespace dvejit {
namespace {

void AddTensor(Operands& o, std::string_view name, const Pattern& p, uint8_t dtype, bool dst) {
  o.tensors[o.num_tensors++] = TensorOperand{name, p, dtype, dst};
}
// `src` is the IMM_SRC value: 1 = pointer, 2 = register pointer; anything else is not a pointer.
void AddPointerBySource(Operands& o, std::string_view name, uint32_t word, uint8_t src,
                        uint8_t dtype) {
  if (src == 1 || src == 2)
    o.pointers[o.num_pointers++] = PointerOperand{name, word, src == 2, dtype};
}
uint8_t Lo(uint8_t b) { return b & 0xF; }
uint8_t Hi(uint8_t b) { return b >> 4; }
constexpr uint8_t kFp32 = static_cast<uint8_t>(Dtype::FP32);

}  // namespace

Operands OperandsOf(const Instruction& inst) {
  Operands o;
  const OpcodeInfo& info = inst.info();
  if (info.tier == Tier::Unsupported) return o;
  const Opcode op = inst.opcode();
  switch (info.strct) {
    case StructKind::S4D2_BN: {
      auto s = inst.as<S4D2_BN>();
      AddTensor(o, "src", PatternOf(s.src), s.in_dtype, false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S3S3D1_BN: {
      auto s = inst.as<S3S3D1_BN>();
      AddTensor(o, "src0", PatternOf(s.src0), Lo(s.in_dtypes), false);
      AddTensor(o, "src1", PatternOf(s.src1), Hi(s.in_dtypes), false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      const uint8_t imm_dtype = s.immediate_dtype == 0 ? kFp32 : s.immediate_dtype;
      AddPointerBySource(o, "imm0", s.imm0, 1, imm_dtype);
      AddPointerBySource(o, "imm1", s.imm1, 1, imm_dtype);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S3S3D1_BN2: {
      auto s = inst.as<S3S3D1_BN2>();
      AddTensor(o, "src0", PatternOf(s.src0), Lo(s.in_dtypes), false);
      AddTensor(o, "src1", PatternOf(s.src1), Hi(s.in_dtypes), false);
      AddTensor(o, "dst", PatternOf(s.dst), Hi(s.imm_out_dtypes), true);
      AddPointerBySource(o, "imm0", s.imm0, Lo(s.imm_srcs), Lo(s.imm_out_dtypes));
      AddPointerBySource(o, "imm1", s.imm1, Hi(s.imm_srcs), Lo(s.imm_out_dtypes));
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S2_BN: {
      auto s = inst.as<S2_BN>();
      AddTensor(o, "src", PatternOf(s.src), s.dtype, false);
      if (op == Opcode::BatchNormParamLoad)  // sources 0 and 1 both mean "pointer"
        AddPointerBySource(o, "imm0_ptr", s.imm0_ptr, s.imm0_src == 0 ? 1 : s.imm0_src, kFp32);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S2_BNPL2: {
      auto s = inst.as<S2_BNPL2>();
      AddTensor(o, "src", PatternOf(s.src), s.src_dtype, false);
      AddPointerBySource(o, "imm0_ptr", s.imm0_ptr, s.imm0_src == 0 ? 1 : s.imm0_src,
                         s.immediate_dtype);
      AddPointerBySource(o, "imm1_ptr", s.imm1_ptr, s.imm1_src == 0 ? 1 : s.imm1_src,
                         s.immediate_dtype);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S3S3D3_TT: {
      auto s = inst.as<S3S3D3_TT>();
      AddTensor(o, "src0", PatternOf(s.src0), Lo(s.in_dtypes), false);
      AddTensor(o, "src1", PatternOf(s.src1), Hi(s.in_dtypes), false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S3D3_TS: {
      auto s = inst.as<S3D3_TS>();
      AddTensor(o, "src", PatternOf(s.src), s.in_dtype, false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      const uint8_t ptr_dtype = info.alu_class == AluClass::Bitvec ? s.in_dtype : kFp32;
      const bool ptr_form = op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec;
      AddPointerBySource(o, "imm0", s.imm0, ptr_form ? 1 : s.imm0_src, ptr_dtype);
      AddPointerBySource(o, "imm1", s.imm1, ptr_form ? 1 : s.imm1_src, ptr_dtype);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S4D4_TSM: {
      auto s = inst.as<S4D4_TSM>();
      AddTensor(o, "src", PatternOf(s.src), s.in_dtype, false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S4D4_MR: {
      auto s = inst.as<S4D4_MR>();
      AddTensor(o, "src", PatternOf(s.src), s.in_dtype, false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::S4D4_TR: {
      auto s = inst.as<S4D4_TR>();
      AddTensor(o, "src", PatternOf(s.src), s.in_dtype, false);
      AddTensor(o, "dst", PatternOf(s.dst), s.out_dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::D4_MR: {
      auto s = inst.as<D4_MR>();
      AddTensor(o, "dst", PatternOf(s.dst), s.dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::D1_RD: {
      auto s = inst.as<D1_RD>();
      AddTensor(o, "dst", PatternOf(s.dst), s.dtype, true);
      o.channels = s.num_active_channels;
      break;
    }
    case StructKind::CTRL_IM:
      return o;
  }
  o.has_channels = true;
  return o;
}

bool UsesRegisters(const Instruction& inst) {
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i)
    if (AddrModeOf(ops.tensors[i].pattern.addr) == AddrMode::Register) return true;
  for (int i = 0; i < ops.num_pointers; ++i)
    if (ops.pointers[i].is_register || AddrModeOf(ops.pointers[i].word) == AddrMode::Register) return true;
  return false;
}

}  // namespace dvejit
