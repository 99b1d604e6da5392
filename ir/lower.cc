// Lowering from DVE instructions to IR statements (one function per opcode family).
#include <cstring>

#include "frontend/fields.h"
#include "frontend/strcat.h"
#include "ir/ir.h"

namespace dvejit::ir {

bool JitSupportsAluOp(uint8_t op) {
  switch (static_cast<AluOp>(op)) {
    case AluOp::BYPASS: case AluOp::ADD: case AluOp::SUBTRACT: case AluOp::MULT:
    case AluOp::MAX: case AluOp::MIN: case AluOp::LOGICAL_AND: case AluOp::LOGICAL_OR:
    case AluOp::LOGICAL_XOR: case AluOp::IS_EQ: case AluOp::IS_GT: case AluOp::IS_GE:
    case AluOp::IS_LE: case AluOp::IS_LT: case AluOp::IS_NE: case AluOp::ABSOLUTE_DIFF:
    case AluOp::ABSOLUTE_VALUE: case AluOp::ABS_MAX: case AluOp::ABS_MIN: case AluOp::RE_LU:
    case AluOp::SQUARE: case AluOp::SYMMETRIC_CLAMP: case AluOp::POW: case AluOp::MOD:
      return true;
    default:
      return false;
  }
}
bool JitSupportsBitvecOp(uint8_t op) {
  switch (static_cast<AluOp>(op)) {
    case AluOp::BYPASS: case AluOp::BITWISE_NOT: case AluOp::ARITH_SHIFT_LEFT:
    case AluOp::LOGICAL_SHIFT_LEFT: case AluOp::ARITH_SHIFT_RIGHT: case AluOp::LOGICAL_SHIFT_RIGHT:
    case AluOp::BITWISE_AND: case AluOp::BITWISE_OR: case AluOp::BITWISE_XOR:
      return true;
    default:
      return false;  // CRC32 is unsupported in execution
  }
}
bool JitSupportsDtype(Dtype d) {
  return DtypeSize(d) > 0 && DtypeSize(d) <= 4;  // every float and integer dtype of 1, 2 or 4 bytes
}

namespace {

class Lowerer {
 public:
  Lowerer(std::span<const Instruction> prog, Generation gen, Profile profile) : prog_(prog), profile_(profile) {
    f_.gen = gen;
  }

  Function Run() {
    for (size_t i = 0; i < prog_.size(); ++i) {
      index_ = static_cast<int>(i);
      const size_t mark = f_.stmts.size();
      const std::string why = LowerOne(prog_[i]);
      if (!why.empty()) {
        f_.stmts.resize(mark);  // drop partial statements, run the instruction interpreted
        Stmt s;
        s.op = Op::Interp;
        s.source = index_;
        f_.stmts.push_back(s);
        f_.fallback_reasons.push_back(
            Cat("#", i, " ", prog_[i].info().name, ": ", why));
      }
    }
    f_.num_args = static_cast<int>(f_.args.size());
    return std::move(f_);
  }

 private:
  int Arg(bool is_address, int byte_offset) {
    f_.args.push_back({is_address, index_, byte_offset});
    return static_cast<int>(f_.args.size()) - 1;
  }
  ValueId Push(Stmt s) {
    s.source = index_;
    f_.stmts.push_back(std::move(s));
    return static_cast<ValueId>(f_.stmts.size()) - 1;
  }
  TensorRef Tensor(const Instruction& inst, std::string_view field, uint8_t dtype) {
    const FieldInfo* fi = FindField(inst.info().strct, field);
    const Operands ops = OperandsOf(inst);
    TensorRef t;
    for (int i = 0; i < ops.num_tensors; ++i)
      if (ops.tensors[i].name == field) t.pattern = ops.tensors[i].pattern;
    t.arg = Arg(true, fi->offset);
    t.dtype = static_cast<Dtype>(dtype);
    t.space = ResolveImmediate(t.pattern.addr, f_.gen)->space;
    return t;
  }
  // Every tensor operand, sources first, the destination last (as OperandsOf lists them).
  // Pushes a kernel statement over all the instruction's tensors (their argument slots come after
  // those of the operands `st` already holds). Returns "" (lowered).
  std::string PushKernel(Stmt st, Op op, const Instruction& inst, const Operands& ops) {
    st.op = op;
    st.channels = ops.channels;
    st.tensors = AllTensors(inst, ops);
    Push(std::move(st));
    return "";
  }
  std::vector<TensorRef> AllTensors(const Instruction& inst, const Operands& ops) {
    std::vector<TensorRef> out;
    for (int i = 0; i < ops.num_tensors; ++i)
      out.push_back(Tensor(inst, ops.tensors[i].name, ops.tensors[i].dtype));
    return out;
  }
  ValueId Const(int byte_offset, int channels) {
    Stmt s;
    s.op = Op::Const;
    s.arg = Arg(false, byte_offset);
    s.channels = channels;
    return Push(s);
  }
  // A pointer immediate: a one-element tensor at the pointer's address.
  ValueId PtrRead(const Instruction& inst, std::string_view field, Dtype d, int channels) {
    const FieldInfo* fi = FindField(inst.info().strct, field);
    uint32_t word;
    std::memcpy(&word, inst.bytes.data() + fi->offset, 4);
    Stmt s;
    s.op = Op::PtrRead;
    TensorRef t;
    t.arg = Arg(true, fi->offset);
    t.dtype = d;
    t.pattern.dims = 1;
    t.space = ResolveImmediate(word, f_.gen)->space;
    s.tensors = {t};
    s.arg = t.arg;
    s.dtype = d;
    s.channels = channels;
    return Push(s);
  }
  ValueId ElemRead(const TensorRef& t, int64_t k, int channels) {
    Stmt s;
    s.op = Op::ElemRead;
    s.tensors = {t};
    s.element = k;
    s.channels = channels;
    return Push(s);
  }
  void LaneSet(LaneField f, ValueId v, int channels) {
    Stmt s;
    s.op = Op::LaneSet;
    s.field = f;
    s.operands = {v};
    s.channels = channels;
    Push(s);
  }
  ValueId LaneGet(LaneField f, int channels) {
    Stmt s;
    s.op = Op::LaneGet;
    s.field = f;
    s.channels = channels;
    return Push(s);
  }
  static bool Ok(uint8_t d) { return JitSupportsDtype(static_cast<Dtype>(d)); }
  static std::string DtypeReason(uint8_t d) {
    return Cat("dtype ", DtypeName(d), " is not compiled (only 1-, 2- and 4-byte dtypes are)");
  }

  // Returns "" when lowered, else why the instruction stays interpreted.
  std::string LowerOne(const Instruction& inst) {
    const Opcode op = inst.opcode();
    const Operands ops = OperandsOf(inst);
    const int n = ops.channels;
    const Events ev = inst.events();
    if (ev.wait_mode != 0 || ev.update_mode != 0)
      return "event waits/updates run in the interpreter, in stream order";
    for (int i = 0; i < ops.num_tensors; ++i)
      if (ops.tensors[i].pattern.Count() > 65536) return "more than 65536 elements per operand";
    for (int i = 0; i < ops.num_tensors; ++i)
      if (op != Opcode::Copy && !Ok(ops.tensors[i].dtype)) return DtypeReason(ops.tensors[i].dtype);
    for (int i = 0; i < ops.num_pointers; ++i)
      if (!Ok(ops.pointers[i].dtype)) return DtypeReason(ops.pointers[i].dtype);
    switch (op) {
      case Opcode::BatchNormStats:
      case Opcode::BatchNormStats2:
      case Opcode::TransposeBatchNormStats2: {
        Stmt st;
        st.flag = op != Opcode::BatchNormStats;
        st.operands = {Const(40, n), Const(44, n)};
        return PushKernel(std::move(st), Op::Stats, inst, ops);
      }
      case Opcode::BatchNormAggregate:
        return PushKernel(Stmt{}, Op::Aggregate, inst, ops);
      case Opcode::Max8:
        return PushKernel(Stmt{}, Op::Max8, inst, ops);
      case Opcode::MatchValueLoad: {  // keys load in reverse: mv[7 − k] = src[k]
        const TensorRef src = Tensor(inst, ops.tensors[0].name, ops.tensors[0].dtype);
        for (int k = 0; k < 8; ++k) LaneSet(Mv(7 - k), ElemRead(src, k, n), n);
        return "";
      }
      case Opcode::FindIndex8:
      case Opcode::MatchReplace8: {
        Stmt st;
        for (int k = 0; k < 8; ++k) st.operands.push_back(LaneGet(Mv(7 - k), n));  // key k
        st.flag = op == Opcode::MatchReplace8;
        if (st.flag) st.operands.push_back(Const(FindField(inst.info().strct, "replacement")->offset, n));
        return PushKernel(std::move(st), Op::Find8, inst, ops);
      }
      case Opcode::DveReadIndices: {
        Stmt st;
        for (int k = 0; k < 8; ++k) st.operands.push_back(LaneGet(Idx(k), n));
        return PushKernel(std::move(st), Op::ReadIndices, inst, ops);
      }
      case Opcode::BatchNormGradAccumulate:
      case Opcode::BatchNormGradAccumulate2: {
        Stmt st;
        const ValueId mu = PtrRead(inst, "imm0", static_cast<Dtype>(ops.pointers[0].dtype), n);
        const ValueId vf = PtrRead(inst, "imm1", static_cast<Dtype>(ops.pointers[1].dtype), n);
        st.operands = {mu, vf};
        return PushKernel(std::move(st), Op::GradSums, inst, ops);
      }
      case Opcode::BatchNormParamLoad:
      case Opcode::BatchNormParamLoad2: {
        const bool v2 = op == Opcode::BatchNormParamLoad2;
        const TensorRef src = Tensor(inst, "src", ops.tensors[0].dtype);
        const ValueId nv = Const(28, n);  // imm1 (v1) and element_count (v2) are both at 28
        const ValueId mean = PtrRead(inst, "imm0_ptr", static_cast<Dtype>(ops.pointers[0].dtype), n);
        ValueId a, b, c;
        if (v2) {
          a = PtrRead(inst, "imm1_ptr", static_cast<Dtype>(ops.pointers[1].dtype), n);
          b = ElemRead(src, 0, n);
          c = ElemRead(src, 1, n);
        } else {
          a = ElemRead(src, 0, n);
          b = ElemRead(src, 1, n);
          c = ElemRead(src, 2, n);
        }
        LaneSet(LaneField::N, nv, n);
        LaneSet(LaneField::Mean, mean, n);
        LaneSet(LaneField::A, a, n);
        LaneSet(LaneField::B, b, n);
        LaneSet(LaneField::C, c, n);
        return "";
      }
      case Opcode::BatchNormBackProp: {
        Stmt st;
        for (LaneField f : {LaneField::N, LaneField::Mean, LaneField::A, LaneField::B, LaneField::C})
          st.operands.push_back(LaneGet(f, n));
        return PushKernel(std::move(st), Op::BackProp, inst, ops);
      }
      case Opcode::TensorScalarArith:
      case Opcode::TensorScalarPtrArith:
      case Opcode::TransposeTensorScalarArith:
      case Opcode::TensorScalarBitvec:
      case Opcode::TensorScalarPtrBitvec: {
        const auto s = inst.as<S3D3_TS>();
        const bool bits = inst.info().alu_class == AluClass::Bitvec;
        const bool ptr = op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec;
        auto supported = bits ? JitSupportsBitvecOp : JitSupportsAluOp;
        Stmt st;
        st.flag = op == Opcode::TensorScalarArith && s.op0 == static_cast<uint8_t>(AluOp::RSQRT);
        if (!st.flag) {
          if (!supported(s.op0) || !supported(s.op1))
            return Cat("ALU op ", AluOpName(supported(s.op0) ? s.op1 : s.op0), " is not compiled yet");
          // An instruction value, or a pointer: fp32 for arith, the element's bits extended to
          // 32 for bitvec (whose instruction values are their 32-bit fields as is).
          const Dtype in = static_cast<Dtype>(ops.tensors[0].dtype);
          auto scalar = [&](uint8_t src, std::string_view name, int off) {
            if (!ptr && src != 1) return Const(off, n);
            const ValueId v = PtrRead(inst, name, bits ? in : Dtype::FP32, n);
            f_.stmts[static_cast<size_t>(v)].flag = bits;
            return v;
          };
          st.operands = {scalar(s.imm0_src, "imm0", 40), scalar(s.imm1_src, "imm1", 44)};
          st.alu0 = s.op0;
          st.alu1 = s.op1;
          st.reverse = s.reverse_operands;
        }
        return PushKernel(std::move(st), bits ? Op::BitsScalar : Op::TensorScalar, inst, ops);
      }
      case Opcode::TensorTensorBitvec:
      case Opcode::TensorTensorArith: {
        const auto s = inst.as<S3S3D3_TT>();
        const bool bits = op == Opcode::TensorTensorBitvec;
        Stmt st;
        st.alu0 = s.op;
        const Dtype src0 = static_cast<Dtype>(ops.tensors[0].dtype), src1 = static_cast<Dtype>(ops.tensors[1].dtype);
        if (!bits && RunsInIntegerBand(s.op, f_.gen, src0, src1)) {
          st.flag = IntegerOpSigned(s.op, src0);
          return PushKernel(std::move(st), Op::IntTensor, inst, ops);
        }
        if (!(bits ? JitSupportsBitvecOp(s.op) : JitSupportsAluOp(s.op)))
          return Cat("ALU op ", AluOpName(s.op), " is not compiled yet");
        return PushKernel(std::move(st), bits ? Op::BitsTensor : Op::TensorTensor, inst, ops);
      }
      case Opcode::CopyPredicated:
      case Opcode::CastPredicated: {
        Stmt st;
        st.flag = op == Opcode::CastPredicated;
        return PushKernel(std::move(st), Op::Predicated, inst, ops);
      }
      case Opcode::Memset: {
        Stmt st;
        st.arg = Arg(false, FindField(inst.info().strct, "set_value")->offset);
        return PushKernel(std::move(st), Op::Memset, inst, ops);
      }
      case Opcode::Reciprocal:
      case Opcode::Cast:
      case Opcode::Copy: {
        const auto s = inst.as<S4D4_TR>();
        Stmt st;
        st.flag = s.negated != 0;
        const Op kind = op == Opcode::Copy ? Op::Copy : op == Opcode::Cast ? Op::Cast : Op::Reciprocal;
        return PushKernel(std::move(st), kind, inst, ops);
      }
      case Opcode::TensorScalarImmLdArith:
      case Opcode::TensorScalarImmLdBitvec:
      case Opcode::TensorScalarPtrMultiArith:
      case Opcode::TensorScalarPtrMultiBitvec: {
        if (profile_ == Profile::Device) {  // logged no-ops (semantics.md §6.2)
          f_.device_noops.push_back(index_);
          return "";
        }
        Stmt st;
        st.flag = inst.info().alu_class == AluClass::Bitvec;
        if (op == Opcode::TensorScalarImmLdArith || op == Opcode::TensorScalarImmLdBitvec)
          return PushKernel(std::move(st), Op::ImmLoad, inst, ops);
        const auto s = inst.as<S4D4_TSM>();
        if (!(st.flag ? JitSupportsBitvecOp(s.op) : JitSupportsAluOp(s.op)))
          return Cat("ALU op ", AluOpName(s.op), " is not compiled yet");
        for (int w = 0; w < 8; ++w) st.operands.push_back(LaneGet(Imm(w), n));
        st.alu0 = s.op;
        st.reverse = s.reverse_operands;
        st.element = int64_t{s.src.num[0]} * s.src.num[1] * s.src.num[2];  // elements per scalar
        return PushKernel(std::move(st), Op::PtrMulti, inst, ops);
      }
      case Opcode::LoadParameterRam: {
        Stmt st;
        st.op = Op::PramLoad;
        st.element = inst.as<CTRL_IM>().param_ram_offset;
        st.arg = Arg(false, 32);
        for (int k = 1; k < 8; ++k) Arg(false, 32 + 4 * k);
        Push(st);
        return "";
      }
      case Opcode::EngineNop:
        return "";
      default:
        return "opcode is not compiled yet";
    }
  }

  std::span<const Instruction> prog_;
  Profile profile_;
  Function f_;
  int index_ = 0;
};

}  // namespace

Function Lower(std::span<const Instruction> program, Generation gen, Profile profile) {
  return Lowerer(program, gen, profile).Run();
}

}  // namespace dvejit::ir
