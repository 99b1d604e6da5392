// Batch-norm family kernels (semantics.md §5).
#include <cmath>
#include <vector>

#include "frontend/operands.h"
#include "kernels/families.h"
#include "kernels/numerics.h"
#include "kernels/tensor_ref.h"

namespace dvejit::kernels {
namespace {

float Recip(const MachineState& m, uint32_t n) { return m.pram[n - 1]; }

struct Welford {
  uint32_t n = 0;
  float mean = 0.0f, m2 = 0.0f;
  void Push(const MachineState& m, float x) {
    n = n + 1;
    const float delta = x - mean;
    mean = std::fma(delta, Recip(m, n), mean);
    m2 = std::fma(delta, x - mean, m2);
  }
};

}  // namespace

void Stats(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<S4D2_BN>();
  BoundOperands b(m, OperandsOf(inst));
  const TensorRef& src = b[0];
  const TensorRef& dst = b[1];
  const int n = b.channels();
  std::vector<float> x(src.count);
  const bool split = inst.opcode() != Opcode::BatchNormStats;
  for (int c = 0; c < n; ++c) {
    src.GatherF32(c, x.data());
    float out[6];
    if (split) {
      Welford even, odd;
      for (int64_t k = 0; k < src.count; ++k) (k % 2 == 0 ? even : odd).Push(m, x[k]);
      const float r[6] = {s.even_count, even.mean, even.m2, s.odd_count, odd.mean, odd.m2};
      std::copy(r, r + 6, out);
    } else {
      Welford all;
      for (int64_t k = 0; k < src.count; ++k) all.Push(m, x[k]);
      out[0] = s.even_count + s.odd_count;
      out[1] = all.mean;
      out[2] = all.m2;
    }
    dst.ScatterF32(c, out);
  }
}

void Aggregate(const Instruction& inst, MachineState& m) {
  BoundOperands b(m, OperandsOf(inst));
  const TensorRef& src = b[0];
  const TensorRef& dst = b[1];
  const int channels = b.channels();
  std::vector<float> t(src.count);
  for (int c = 0; c < channels; ++c) {
    src.GatherF32(c, t.data());
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int64_t k = 0; k + 2 < src.count; k += 3) {
      const float nb = t[k], mb = t[k + 1], m2b = t[k + 2];
      if (nb == 0.0f) continue;
      const float nab = n + nb;
      const float w = num::NDiv(nb, nab, m.pram);
      const float delta = mb - mean;
      mean = std::fma(delta, w, mean);
      m2 = std::fma(delta * delta, n * w, m2 + m2b);
      n = nab;
    }
    const float var = (n == 0.0f) ? 0.0f : num::NDiv(m2, n, m.pram);
    const float out[2] = {mean, var};
    dst.ScatterF32(c, out);
  }
}

void GradAccum(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const int channels = ops.channels;
  BoundOperands b(m, ops);
  const TensorRef& x = b[0];
  const TensorRef& dy = b[1];
  const TensorRef& dst = b[2];
  const PointerOperand& p_mu = ops.pointers[0];
  const PointerOperand& p_vf = ops.pointers[1];
  // The pointers are sources: every channel's are read before any destination is written
  // (a destination may overlap another channel's pointer; semantics.md §2).
  std::vector<float> mus(channels), vfs(channels);
  for (int c = 0; c < channels; ++c) {
    mus[c] = ReadPointerF32(m, p_mu.word, static_cast<Dtype>(p_mu.dtype), c);
    vfs[c] = ReadPointerF32(m, p_vf.word, static_cast<Dtype>(p_vf.dtype), c);
  }
  std::vector<float> xv(x.count), dyv(dy.count);
  for (int c = 0; c < channels; ++c) {
    const float mu = mus[c], vf = vfs[c];
    x.GatherF32(c, xv.data());
    dy.GatherF32(c, dyv.data());
    const float vf2 = vf * vf;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
    for (int64_t k = 0; k < x.count; ++k) {
      const float d = xv[k] - mu;
      const float p = d * dyv[k];
      s0 = s0 + dyv[k];
      s1 = std::fma(p, vf, s1);
      s2 = std::fma(p, vf2, s2);
    }
    const float out[3] = {s0, s1, s2};  // dst is a TENSOR1D with num[0] == 3
    dst.ScatterF32(c, out);
  }
}

void ParamLoad(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const int channels = ops.channels;
  const TensorRef src = BindTensor(m, ops.tensors[0], channels);
  const bool v2 = inst.opcode() == Opcode::BatchNormParamLoad2;
  float n_value;
  if (v2) {
    n_value = inst.as<S2_BNPL2>().element_count;
  } else {
    const uint32_t bits = inst.as<S2_BN>().imm1;
    std::memcpy(&n_value, &bits, 4);
  }
  float vals[3];
  // Read everything first: lanes are written only after all sources are read.
  std::vector<LaneState> staged(channels);
  for (int c = 0; c < channels; ++c) {
    src.GatherF32(c, vals);
    LaneState& l = staged[c];
    l.bn_n = n_value;
    l.bn_mean = ReadPointerF32(m, ops.pointers[0].word, static_cast<Dtype>(ops.pointers[0].dtype), c);
    if (v2) {
      l.bn_a = ReadPointerF32(m, ops.pointers[1].word, static_cast<Dtype>(ops.pointers[1].dtype), c);
      l.bn_b = vals[0];
      l.bn_c = vals[1];
    } else {
      l.bn_a = vals[0];
      l.bn_b = vals[1];
      l.bn_c = vals[2];
    }
  }
  for (int c = 0; c < channels; ++c) {
    LaneState& l = m.lanes[c];
    l.bn_n = staged[c].bn_n;
    l.bn_mean = staged[c].bn_mean;
    l.bn_a = staged[c].bn_a;
    l.bn_b = staged[c].bn_b;
    l.bn_c = staged[c].bn_c;
  }
}

void BackProp(const Instruction& inst, MachineState& m) {
  BoundOperands b(m, OperandsOf(inst));
  const TensorRef& x = b[0];
  const TensorRef& dy = b[1];
  const TensorRef& dst = b[2];
  const int channels = b.channels();
  std::vector<float> xv(x.count), dyv(dy.count);
  for (int c = 0; c < channels; ++c) {
    const LaneState& l = m.lanes[c];
    x.GatherF32(c, xv.data());
    dy.GatherF32(c, dyv.data());
    for (int64_t k = 0; k < x.count; ++k) {
      const float d = xv[k] - l.bn_mean;
      const float u = std::fma(d, l.bn_c, l.bn_b);
      const float v = std::fma(dyv[k], l.bn_n, -u);
      xv[k] = v * l.bn_a;
    }
    dst.ScatterF32(c, xv.data());
  }
}

}  // namespace dvejit::kernels
