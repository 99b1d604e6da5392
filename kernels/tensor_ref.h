// Binding of a validated tensor operand to host memory for every channel, and the gather /
// scatter loops that walk an access pattern in iteration order (encoding.md §3).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "frontend/operands.h"
#include "kernels/numerics.h"
#include "kernels/rows.h"
#include "kernels/state.h"

namespace dvejit {

// Calls f(k, element_offset) for every element k of the pattern in iteration order
// (index 0 fastest); offsets are in elements relative to the start.
template <typename F>
inline void ForEachElement(const Pattern& p, F&& f) {
  int64_t k = 0;
  const int64_t s0 = p.step[0], s1 = p.step[1], s2 = p.step[2], s3 = p.step[3];
  const int n0 = p.num[0], n1 = p.dims > 1 ? p.num[1] : 1, n2 = p.dims > 2 ? p.num[2] : 1,
            n3 = p.dims > 3 ? p.num[3] : 1;
  for (int i3 = 0; i3 < n3; ++i3)
    for (int i2 = 0; i2 < n2; ++i2)
      for (int i1 = 0; i1 < n1; ++i1) {
        const int64_t base = i1 * s1 + i2 * s2 + i3 * s3;
        for (int i0 = 0; i0 < n0; ++i0) f(k++, base + i0 * s0);
      }
}

inline uint32_t LoadRaw(const uint8_t* p, int size) {
  switch (size) {
    case 1: return *p;
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    default: { uint32_t v; std::memcpy(&v, p, 4); return v; }
  }
}
inline void StoreRaw(uint8_t* p, int size, uint32_t v) {
  switch (size) {
    case 1: *p = static_cast<uint8_t>(v); break;
    case 2: { const uint16_t h = static_cast<uint16_t>(v); std::memcpy(p, &h, 2); break; }
    default: std::memcpy(p, &v, 4); break;
  }
}

// A tensor operand bound to memory: base[c] is channel c's start element.
struct TensorRef {
  Pattern pattern;
  Dtype dtype = Dtype::FP32;
  int esize = 4;
  int64_t count = 0;
  Place place{};  // where channel 0's start element is
  bool contiguous = false;  // element k at offset k (the row fast path applies)
  uint8_t* base[kPartitions] = {};

  uint8_t* ElementPtr(int c, int64_t offset) const { return base[c] + offset * esize; }

  void GatherF32(int c, float* out) const {
    if (contiguous && rows::Supported(dtype)) return rows::Widen(dtype, base[c], out, count);
    const uint8_t* b = base[c];
    const Dtype d = dtype;
    const int sz = esize;
    ForEachElement(pattern, [&](int64_t k, int64_t off) {
      out[k] = num::LoadAsF32(d, LoadRaw(b + off * sz, sz));
    });
  }
  void GatherRaw(int c, uint32_t* out) const {
    const uint8_t* b = base[c];
    const int sz = esize;
    ForEachElement(pattern, [&](int64_t k, int64_t off) { out[k] = LoadRaw(b + off * sz, sz); });
  }
  // Converts each fp32 value to the dtype (store conversion) and writes it.
  void ScatterF32(int c, const float* in) const {
    if (contiguous && rows::Supported(dtype)) return rows::Narrow(dtype, in, base[c], count);
    uint8_t* b = base[c];
    const Dtype d = dtype;
    const int sz = esize;
    ForEachElement(pattern, [&](int64_t k, int64_t off) {
      StoreRaw(b + off * sz, sz, num::StoreFromF32(d, in[k]));
    });
  }
  void ScatterRaw(int c, const uint32_t* in) const {
    uint8_t* b = base[c];
    const int sz = esize;
    ForEachElement(pattern, [&](int64_t k, int64_t off) { StoreRaw(b + off * sz, sz, in[k]); });
  }
};

// Binds operand `t` for `channels` channels. Addresses are immediate (registers resolved).
TensorRef BindTensor(const MachineState& m, const TensorOperand& t, int channels);

// Reads one pointer immediate per channel (as fp32 or as raw bits), semantics.md / encoding.md §4.
float ReadPointerF32(const MachineState& m, uint32_t word, Dtype d, int c);
uint32_t ReadPointerRaw(const MachineState& m, uint32_t word, Dtype d, int c);

// The source-before-destination rule (semantics.md §2): when a destination's bytes may overlap a
// source's, the sources are read from a snapshot. Holds the snapshot storage.
class SourceSnapshot {
 public:
  // Redirects `src` to a private copy of the bytes it reads if any of them may be written by
  // `dst`: same space, intersecting partition ranges and intersecting byte ranges.
  void ProtectFrom(TensorRef& src, const TensorRef& dst, int channels);

 private:
  std::vector<std::vector<uint8_t>> copies_;
};

// Every tensor operand of an instruction bound for its channels, each source protected from the
// destination: the one place kernels get their operands from.
class BoundOperands {
 public:
  BoundOperands(const MachineState& m, const Operands& ops);
  BoundOperands(const BoundOperands&) = delete;
  BoundOperands& operator=(const BoundOperands&) = delete;
  TensorRef& operator[](int i) { return tensors_[i]; }
  int channels() const { return channels_; }

 private:
  TensorRef tensors_[3];
  int channels_;
  SourceSnapshot snapshot_;
};

}  // namespace dvejit
