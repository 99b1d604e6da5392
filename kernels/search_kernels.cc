// Search and read-back kernels (semantics.md §8) and LoadParameterRam (encoding.md §7 CTRL_IM).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "frontend/operands.h"
#include "kernels/families.h"
#include "kernels/numerics.h"
#include "kernels/tensor_ref.h"

namespace dvejit::kernels {
namespace {

// Total order of Max8: NaN < -inf < ... < -0 < +0 < ... < +inf.
int64_t OrderKey(float x) {
  if (std::isnan(x)) return INT64_MIN;
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return (b & 0x80000000u) ? -static_cast<int64_t>(b & 0x7FFFFFFFu) - 1
                           : static_cast<int64_t>(b);
}

constexpr uint32_t kNotFound = 0xFFFFFFFFu;

}  // namespace

void MatchValueLoad(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const TensorRef src = BindTensor(m, ops.tensors[0], ops.channels);
  float v[8];
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherF32(c, v);
    for (int k = 0; k < 8; ++k) m.lanes[c].mv[7 - k] = v[k];  // keys load in reverse
  }
}

void Max8(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  std::vector<float> v(src.count);
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherF32(c, v.data());
    // The 8 largest, in ascending order.
    std::partial_sort(v.begin(), v.begin() + 8, v.end(),
                      [](float a, float b) { return OrderKey(a) > OrderKey(b); });
    float out[8];
    for (int k = 0; k < 8; ++k) out[k] = v[7 - k];
    dst.ScatterF32(c, out);
  }
}

void FindIndex8(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  BoundOperands bound(m, ops);
  const TensorRef& src = bound[0];
  const TensorRef& dst = bound[1];
  const bool replace = inst.opcode() == Opcode::MatchReplace8;
  const float replacement = replace ? inst.as<S4D4_MR>().replacement : 0.0f;
  std::vector<float> v(src.count);
  std::vector<uint32_t> found_all(static_cast<size_t>(ops.channels) * 8);
  for (int c = 0; c < ops.channels; ++c) {
    src.GatherF32(c, v.data());
    const LaneState& lane = m.lanes[c];
    bool matched[8] = {};
    uint32_t* found = &found_all[static_cast<size_t>(c) * 8];
    std::fill(found, found + 8, kNotFound);
    for (int64_t j = 0; j < src.count; ++j) {
      for (int k = 0; k < 8; ++k) {
        if (!matched[k] && lane.mv[7 - k] == v[j]) {  // key k is mv[7 - k]
          matched[k] = true;
          found[k] = static_cast<uint32_t>(j);
          if (replace) v[j] = replacement;
          break;
        }
      }
    }
    if (replace) {
      dst.ScatterF32(c, v.data());
    } else {
      uint32_t out[8];
      const uint32_t sentinel = dst.dtype == Dtype::UINT16 ? 0xFFFFu : kNotFound;
      for (int k = 0; k < 8; ++k) out[k] = found[k] == kNotFound ? sentinel : found[k];
      dst.ScatterRaw(c, out);
    }
  }
  for (int c = 0; c < ops.channels; ++c)
    std::copy_n(&found_all[static_cast<size_t>(c) * 8], 8, m.lanes[c].idx);
}

void ReadIndices(const Instruction& inst, MachineState& m) {
  const Operands ops = OperandsOf(inst);
  const TensorRef dst = BindTensor(m, ops.tensors[0], ops.channels);
  for (int c = 0; c < ops.channels; ++c) {
    uint32_t out[8];
    for (int k = 0; k < 8; ++k) {
      const uint32_t idx = m.lanes[c].idx[k];
      out[k] = dst.dtype == Dtype::UINT16 ? std::min<uint32_t>(idx, 0xFFFFu) : idx;
    }
    dst.ScatterRaw(c, out);
  }
}

void ReadAccumulator(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<D1_RD>();
  const Operands ops = OperandsOf(inst);
  const TensorRef dst = BindTensor(m, ops.tensors[0], ops.channels);
  for (int c = 0; c < ops.channels; ++c) {
    const float v = s.negated ? -m.lanes[c].acc : m.lanes[c].acc;
    dst.ScatterF32(c, &v);
  }
}

void LoadParameterRam(const Instruction& inst, MachineState& m) {
  const auto s = inst.as<CTRL_IM>();
  for (int i = 0; i < 8; ++i) m.pram[s.param_ram_offset + i] = s.immediate[i];
}

}  // namespace dvejit::kernels
