#include <algorithm>
#include <set>
#include <vector>

#include "frontend/strcat.h"
#include "ir/passes.h"

namespace dvejit::ir {
namespace {

// Bytes one operand touches in each of its partitions [p0, p0 + n).
struct Access {
  Space space;
  uint32_t p0, n;
  int64_t lo, hi;  // byte interval [lo, hi) within the partition
  bool write;
};

Access AccessOf(const Pattern& p, uint8_t dtype, int channels, bool write, Generation gen) {
  const int es = DtypeSize(static_cast<Dtype>(dtype));
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < p.dims; ++d) {
    const int64_t span = static_cast<int64_t>(p.step[d]) * (p.num[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  const Place pl = *ResolveImmediate(p.addr, gen);
  return {pl.space, pl.partition, static_cast<uint32_t>(channels), pl.offset + lo * es,
          pl.offset + hi * es + es, write};
}

std::vector<Access> AccessesOf(const Instruction& inst, Generation gen) {
  std::vector<Access> out;
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i)
    out.push_back(AccessOf(ops.tensors[i].pattern, ops.tensors[i].dtype, ops.channels,
                           ops.tensors[i].is_dst, gen));
  for (int i = 0; i < ops.num_pointers; ++i) {
    Pattern one;
    one.addr = ops.pointers[i].word;
    one.dims = 1;
    out.push_back(AccessOf(one, ops.pointers[i].dtype, ops.channels, false, gen));
  }
  return out;
}

bool Meet(const Access& a, const Access& b) {
  return a.space == b.space && a.p0 < b.p0 + b.n && b.p0 < a.p0 + a.n && a.lo < b.hi && b.lo < a.hi;
}

// Element offsets of a pattern, in iteration order.
std::vector<int64_t> Offsets(const Pattern& p) {
  std::vector<int64_t> out;
  const int n1 = p.dims > 1 ? p.num[1] : 1, n2 = p.dims > 2 ? p.num[2] : 1, n3 = p.dims > 3 ? p.num[3] : 1;
  for (int i3 = 0; i3 < n3; ++i3)
    for (int i2 = 0; i2 < n2; ++i2)
      for (int i1 = 0; i1 < n1; ++i1)
        for (int i0 = 0; i0 < p.num[0]; ++i0)
          out.push_back(int64_t{i0} * p.step[0] + int64_t{i1} * p.step[1] + int64_t{i2} * p.step[2] +
                        int64_t{i3} * p.step[3]);
  return out;
}

// An element-wise op reading src element k and writing dst element k in one pass is only
// equivalent to "all sources first" when the two patterns are the same injective walk.
bool InPlaceSafe(const TensorOperand& src, const TensorOperand& dst) {
  if (src.pattern.addr != dst.pattern.addr || DtypeSize(static_cast<Dtype>(src.dtype)) !=
                                                  DtypeSize(static_cast<Dtype>(dst.dtype)))
    return false;
  const std::vector<int64_t> a = Offsets(src.pattern), b = Offsets(dst.pattern);
  if (a != b) return false;
  std::set<int64_t> seen(a.begin(), a.end());
  return seen.size() == a.size();
}

bool IsElementwise(Op op) {
  return op == Op::BackProp || op == Op::TensorScalar || op == Op::TensorTensor ||
         op == Op::Reciprocal || op == Op::Copy || op == Op::Cast || op == Op::Memset ||
         op == Op::BitsScalar || op == Op::BitsTensor || op == Op::IntTensor || op == Op::Predicated ||
         op == Op::PtrMulti;
}

// Why the instruction cannot run as compiled statements ("" when it can).
std::string SelfHazard(const Instruction& inst, Op kind, Generation gen) {
  const Operands ops = OperandsOf(inst);
  const std::vector<Access> acc = AccessesOf(inst, gen);
  for (size_t w = 0; w < acc.size(); ++w) {
    if (!acc[w].write) continue;
    for (size_t r = 0; r < acc.size(); ++r) {
      if (r == w || acc[r].write || !Meet(acc[w], acc[r])) continue;
      if (acc[w].p0 != acc[r].p0) return "a source overlaps the destination in another channel";
      // MatchReplace8 writes element j before it reads element j + 1, as element-wise ops do.
      if ((IsElementwise(kind) || kind == Op::Find8) && r < static_cast<size_t>(ops.num_tensors) &&
          !InPlaceSafe(ops.tensors[r], ops.tensors[w]))
        return "a source overlaps the destination element-wise";
    }
  }
  return "";
}

}  // namespace

void ChannelIndependence(Function& f, std::span<const Instruction> resolved) {
  // 1. Instructions with a hazard inside themselves run interpreted.
  for (size_t i = 0; i < f.stmts.size(); ++i) {
    Stmt& s = f.stmts[i];
    if (s.dead || s.op == Op::Interp || s.op == Op::PramLoad) continue;
    const bool memory = s.op == Op::Stats || s.op == Op::Aggregate || s.op == Op::GradSums ||
                        s.op == Op::Max8 || s.op == Op::Find8 || s.op == Op::ReadIndices || s.op == Op::ImmLoad ||
                        IsElementwise(s.op);
    if (!memory) continue;
    const std::string why = SelfHazard(resolved[s.source], s.op, f.gen);
    if (why.empty()) continue;
    const int src = s.source;
    bool first = true;
    for (Stmt& t : f.stmts) {
      if (t.source != src) continue;
      if (first) {
        t = Stmt{};
        t.op = Op::Interp;
        t.source = src;
        first = false;
      } else {
        t.dead = true;
      }
    }
    f.fallback_reasons.push_back(Cat("#", src, " ", resolved[src].info().name, ": ", why));
  }
  // 2. Regions: a new channel-major region starts when an instruction's accesses meet an earlier
  // instruction's (of the current region) in a different start partition.
  f.regions.clear();
  std::vector<Access> region_accesses;
  int last_source = -1;
  for (size_t i = 0; i < f.stmts.size(); ++i) {
    const Stmt& s = f.stmts[i];
    const bool global = !s.dead && IsGlobal(s.op);
    bool start = f.regions.empty() || global || !f.regions.back().channel_major;
    if (!start && s.source != last_source && !s.dead) {
      for (const Access& a : AccessesOf(resolved[s.source], f.gen)) {
        for (const Access& b : region_accesses)
          if ((a.write || b.write) && Meet(a, b) && a.p0 != b.p0) start = true;
      }
    }
    if (start) {
      f.regions.push_back(Region{static_cast<int>(i), static_cast<int>(i), !global});
      region_accesses.clear();
      last_source = -1;
    }
    f.regions.back().end = static_cast<int>(i) + 1;
    if (!global && !s.dead && s.source != last_source) {
      for (const Access& a : AccessesOf(resolved[s.source], f.gen)) region_accesses.push_back(a);
      last_source = s.source;
    }
    if (global) {  // a global statement is a region of its own
      f.regions.back().channel_major = false;
    }
  }
}

}  // namespace dvejit::ir
