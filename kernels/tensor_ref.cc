#include "kernels/tensor_ref.h"

#include <algorithm>

namespace dvejit {
namespace {
// [lo, hi) byte range relative to the start element touched by a pattern.
void ByteExtent(const Pattern& p, int esize, int64_t* lo, int64_t* hi) {
  int64_t l = 0, h = 0;
  for (int d = 0; d < p.dims; ++d) {
    const int64_t span = static_cast<int64_t>(p.step[d]) * (p.num[d] - 1);
    (span < 0 ? l : h) += span;
  }
  *lo = l * esize;
  *hi = h * esize + esize;
}
}  // namespace

TensorRef BindTensor(const MachineState& m, const TensorOperand& t, int channels) {
  TensorRef r;
  r.pattern = t.pattern;
  r.dtype = static_cast<Dtype>(t.dtype);
  r.esize = DtypeSize(r.dtype);
  r.count = t.pattern.Count();
  r.place = *ResolveImmediate(t.pattern.addr, m.gen);
  int64_t expect = 0;
  r.contiguous = true;
  ForEachElement(t.pattern, [&](int64_t, int64_t off) { r.contiguous = r.contiguous && off == expect++; });
  for (int c = 0; c < channels; ++c) r.base[c] = m.At(t.pattern.addr, c);
  return r;
}

float ReadPointerF32(const MachineState& m, uint32_t word, Dtype d, int c) {
  return num::LoadAsF32(d, LoadRaw(m.At(word, c), DtypeSize(d)));
}
uint32_t ReadPointerRaw(const MachineState& m, uint32_t word, Dtype d, int c) {
  return LoadRaw(m.At(word, c), DtypeSize(d));
}

void SourceSnapshot::ProtectFrom(TensorRef& src, const TensorRef& dst, int channels) {
  int64_t slo, shi, dlo, dhi;
  ByteExtent(src.pattern, src.esize, &slo, &shi);
  ByteExtent(dst.pattern, dst.esize, &dlo, &dhi);
  const Place& s = src.place;
  const Place& d = dst.place;
  if (s.space != d.space) return;
  const uint32_t n = static_cast<uint32_t>(channels);
  if (s.partition + n <= d.partition || d.partition + n <= s.partition) return;
  if (s.offset + shi <= d.offset + dlo || d.offset + dhi <= s.offset + slo) return;
  for (int c = 0; c < channels; ++c) {
    std::vector<uint8_t> copy(src.base[c] + slo, src.base[c] + shi);
    src.base[c] = copy.data() - slo;
    copies_.push_back(std::move(copy));
  }
}

BoundOperands::BoundOperands(const MachineState& m, const Operands& ops) : channels_(ops.channels) {
  int dst = -1;
  for (int i = 0; i < ops.num_tensors; ++i) {
    tensors_[i] = BindTensor(m, ops.tensors[i], ops.channels);
    if (ops.tensors[i].is_dst) dst = i;
  }
  if (dst < 0) return;
  for (int i = 0; i < ops.num_tensors; ++i)
    if (i != dst) snapshot_.ProtectFrom(tensors_[i], tensors_[dst], ops.channels);
}

}  // namespace dvejit
