// Element-wise kernels: tensor-scalar, tensor-tensor, predicated copy/cast, copy, cast,
// reciprocal, memset, and the ImmLd/PtrMulti pair (semantics.md §6, §7).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "frontend/operands.h"
#include "kernels/alu.h"
#include "kernels/families.h"
#include "kernels/numerics.h"
#include "kernels/tensor_ref.h"

namespace dvejit::kernels {
namespace {

float BitsF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
// Raw element bits sign- or zero-extended to 32 bits (semantics.md §4.2).
uint32_t Extend(Dtype d, uint32_t raw) { return static_cast<uint32_t>(num::LoadAsInt(d, raw)); }

// One stage of a tensor-scalar pipeline: a unary op reads only the value entering the stage.
float ArithStage(uint8_t op, float entering, float scalar, bool reversed) {
  if (alu::IsUnary(op)) return alu::Arith(op, entering, 0.0f);
  return reversed ? alu::Arith(op, scalar, entering) : alu::Arith(op, entering, scalar);
}
uint32_t BitvecStage(uint8_t op, uint32_t entering, uint32_t scalar, bool reversed) {
  if (alu::IsUnary(op)) return alu::Bitvec(op, entering, 0);
  return reversed ? alu::Bitvec(op, scalar, entering) : alu::Bitvec(op, entering, scalar);
}

// A tensor-scalar immediate for channel c: an instruction value (source 0), else a pointer
// (registers were resolved to pointers before execution).
struct Scalar {
  uint8_t source;
  uint32_t word;
};
float ScalarF32(const MachineState& m, Scalar s, int c) {
  return s.source == 0 ? BitsF32(s.word) : ReadPointerF32(m, s.word, Dtype::FP32, c);
}
uint32_t ScalarBits(const MachineState& m, Scalar s, Dtype in, int c) {
  return s.source == 0 ? s.word : Extend(in, ReadPointerRaw(m, s.word, in, c));
}

}  // namespace

void TensorScalar(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S3D3_TS>();
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  const Dtype in = src.dtype;
  const bool ptr_form =
      inst.opcode() == Opcode::TensorScalarPtrArith || inst.opcode() == Opcode::TensorScalarPtrBitvec;
  const Scalar s0{static_cast<uint8_t>(ptr_form ? 1 : s.imm0_src), s.imm0};
  const Scalar s1{static_cast<uint8_t>(ptr_form ? 1 : s.imm1_src), s.imm1};
  const bool rev0 = s.reverse_operands & 1, rev1 = s.reverse_operands & 2;
  const int64_t count = src.count;
  if (inst.info().alu_class == AluClass::Bitvec) {
    // Pointer immediates are sources: read every channel's before any destination is written
    // (a destination may overlap another channel's pointer; semantics.md §2).
    std::vector<uint32_t> a0(ops.channels), a1(ops.channels);
    for (int c = 0; c < ops.channels; ++c) {
      a0[c] = ScalarBits(m, s0, in, c);
      a1[c] = ScalarBits(m, s1, in, c);
    }
    std::vector<uint32_t> t(count);
    for (int c = 0; c < ops.channels; ++c) {
      src.GatherRaw(c, t.data());
      for (int64_t k = 0; k < count; ++k)
        t[k] = BitvecStage(s.op1, BitvecStage(s.op0, Extend(in, t[k]), a0[c], rev0), a1[c], rev1);
      dst.ScatterRaw(c, t.data());  // truncated to the output width by the store
    }
    return;
  }
  const bool rsqrt = s.op0 == static_cast<uint8_t>(AluOp::RSQRT);
  std::vector<float> a0(ops.channels), a1(ops.channels);
  if (!rsqrt) {
    for (int c = 0; c < ops.channels; ++c) {  // all pointer reads before any write
      a0[c] = ScalarF32(m, s0, c);
      a1[c] = ScalarF32(m, s1, c);
    }
  }
  std::vector<float> t(count);
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherF32(c, t.data());
    if (rsqrt) {
      for (int64_t k = 0; k < count; ++k) t[k] = num::NRsqrt(t[k]);
    } else {
      for (int64_t k = 0; k < count; ++k)
        t[k] = ArithStage(s.op1, ArithStage(s.op0, t[k], a0[c], rev0), a1[c], rev1);
    }
    dst.ScatterF32(c, t.data());
  }
}

void TensorScalarCache(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S3D3_TS>();
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  const Scalar s0{s.imm0_src, s.imm0}, s1{s.imm1_src, s.imm1};
  const bool cumulative = inst.opcode() == Opcode::TensorScalarCacheCumulative;
  const int64_t count = src.count;
  // Every channel's pointer immediates are read before any destination is written.
  std::vector<float> a0(ops.channels), load(ops.channels);
  for (int c = 0; c < ops.channels; ++c) {
    a0[c] = ScalarF32(m, s0, c);
    if (static_cast<AccumCmd>(s.accumulator_cmd) == AccumCmd::LoadAccumulate)
      load[c] = ScalarF32(m, s1, c);
  }
  std::vector<float> t(count);
  std::vector<float> acc_out(ops.channels);
  for (int c = 0; c < ops.channels; ++c) {
    float acc;
    switch (static_cast<AccumCmd>(s.accumulator_cmd)) {
      case AccumCmd::ZeroAccumulate:
        acc = s.op1 == static_cast<uint8_t>(AluOp::MULT)  ? 1.0f
              : s.op1 == static_cast<uint8_t>(AluOp::MAX) ? -INFINITY
              : s.op1 == static_cast<uint8_t>(AluOp::MIN) ? INFINITY
                                                          : 0.0f;
        break;
      case AccumCmd::LoadAccumulate: acc = load[c]; break;
      default: acc = m.lanes[c].acc; break;
    }
    src.GatherF32(c, t.data());
    for (int64_t k = 0; k < count; ++k) {
      const float v = ArithStage(s.op0, t[k], a0[c], false);
      acc = alu::Arith(s.op1, acc, v);
      t[k] = cumulative ? acc : v;
    }
    dst.ScatterF32(c, t.data());
    acc_out[c] = acc;
  }
  for (int c = 0; c < ops.channels; ++c) m.lanes[c].acc = acc_out[c];
}

void ImmLoad(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const TensorRef src = BindTensor(m, ops.tensors[0], ops.channels);
  const bool bitvec = inst.opcode() == Opcode::TensorScalarImmLdBitvec;
  uint32_t raw[8];
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherRaw(c, raw);
    LaneState& l = m.lanes[c];
    for (int64_t i = 0; i < src.count; ++i)
      l.imm[i] = bitvec ? raw[i] : F32Bits(num::LoadAsF32(src.dtype, raw[i]));
    l.imm_count = static_cast<uint32_t>(src.count);
    l.imm_bitvec = bitvec;
  }
}

void PtrMulti(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S4D4_TSM>();
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  const int64_t count = src.count;
  const int64_t per_w = static_cast<int64_t>(s.src.num[0]) * s.src.num[1] * s.src.num[2];
  const bool both = s.reverse_operands == static_cast<uint8_t>(ReverseOps::Both);
  if (inst.opcode() == Opcode::TensorScalarPtrMultiBitvec) {
    std::vector<uint32_t> t(count);
    for (int c = 0; c < ops.channels; ++c) {
      src.GatherRaw(c, t.data());
      for (int64_t k = 0; k < count; ++k)
        t[k] = BitvecStage(s.op, Extend(src.dtype, t[k]), m.lanes[c].imm[k / per_w], both);
      dst.ScatterRaw(c, t.data());
    }
    return;
  }
  std::vector<float> t(count);
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherF32(c, t.data());
    for (int64_t k = 0; k < count; ++k)
      t[k] = ArithStage(s.op, t[k], BitsF32(m.lanes[c].imm[k / per_w]), both);
    dst.ScatterF32(c, t.data());
  }
}

void TensorTensor(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S3S3D3_TT>();
  const Operands ops = OperandsOf(inst);
  const int channels = ops.channels;
  BoundOperands bound(m, ops);
  const TensorRef& a = bound[0];
  const TensorRef& bb = bound[1];
  const TensorRef& dst = bound[2];
  const int64_t count = a.count;
  const bool bitvec = inst.opcode() == Opcode::TensorTensorBitvec;
  const bool integer = !bitvec && RunsInIntegerBand(s.op, m.gen, a.dtype, bb.dtype);
  if (bitvec || integer) {
    std::vector<uint32_t> x(count), y(count);
    const bool is_signed = integer && IntegerOpSigned(s.op, a.dtype);
    for (int c = 0; c < channels; ++c) {
      a.GatherRaw(c, x.data());
      bb.GatherRaw(c, y.data());
      for (int64_t k = 0; k < count; ++k) {
        const uint32_t xa = Extend(a.dtype, x[k]), yb = Extend(bb.dtype, y[k]);
        x[k] = bitvec ? alu::Bitvec(s.op, xa, yb)
                      : num::StoreFromInt(dst.dtype, alu::IntegerOp(s.op, is_signed, xa, yb, m.saturate));
      }
      dst.ScatterRaw(c, x.data());
    }
    return;
  }
  std::vector<float> x(count), y(count);
  for (int c = 0; c < channels; ++c) {
    a.GatherF32(c, x.data());
    bb.GatherF32(c, y.data());
    for (int64_t k = 0; k < count; ++k)
      x[k] = alu::IsUnary(s.op) ? alu::Arith(s.op, x[k], 0.0f) : alu::Arith(s.op, x[k], y[k]);
    dst.ScatterF32(c, x.data());
  }
}

void Predicated(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const int channels = ops.channels;
  BoundOperands bound(m, ops);
  const TensorRef& pred = bound[0];
  const TensorRef& data = bound[1];
  const TensorRef& dst = bound[2];
  const bool cast = inst.opcode() == Opcode::CastPredicated;
  const int64_t count = pred.count;
  std::vector<uint32_t> p(count), d(count);
  for (int c = 0; c < channels; ++c) {
    pred.GatherRaw(c, p.data());
    data.GatherRaw(c, d.data());
    uint8_t* base = dst.base[c];
    ForEachElement(dst.pattern, [&](int64_t k, int64_t off) {
      if (p[k] == 0) return;  // dst keeps its bytes
      const uint32_t v = cast ? num::CastRaw(data.dtype, dst.dtype, d[k]) : d[k];
      StoreRaw(base + off * dst.esize, dst.esize, v);
    });
  }
}

void CopyCastReciprocal(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S4D4_TR>();
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  const int64_t count = src.count;
  const Dtype in = src.dtype, out = dst.dtype;
  if (inst.opcode() == Opcode::Reciprocal) {
    std::vector<float> t(count);
    for (int c = 0; c < ops.channels; ++c) {
      src.GatherF32(c, t.data());
      for (int64_t k = 0; k < count; ++k) t[k] = num::NRecip(t[k]);
      dst.ScatterF32(c, t.data());
    }
    return;
  }
  const bool negate = s.negated != 0;
  const bool copy = inst.opcode() == Opcode::Copy;
  const int bits = 8 * src.esize;
  const uint32_t width_mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  std::vector<uint32_t> t(count);
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherRaw(c, t.data());
    for (int64_t k = 0; k < count; ++k) {
      if (copy) {
        if (negate)  // floats: flip the sign bit; integers: negate, wrapping in their width
          t[k] = IsFloatDtype(in) ? t[k] ^ (1u << (bits - 1)) : (0u - t[k]) & width_mask;
        continue;
      }
      t[k] = num::CastRaw(in, out, t[k], negate);
    }
    dst.ScatterRaw(c, t.data());
  }
}

void Memset(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<D4_MR>();
  const Operands ops = OperandsOf(inst);
  const TensorRef dst = BindTensor(m, ops.tensors[0], ops.channels);
  for (int c = 0; c < ops.channels; ++c) {
    uint8_t* base = dst.base[c];
    ForEachElement(dst.pattern, [&](int64_t, int64_t off) {
      StoreRaw(base + off * dst.esize, dst.esize, s.set_value);
    });
  }
}

}  // namespace dvejit::kernels
