// Element-wise chains through memory: consecutive element-wise statements of a channel-major
// region over the same rows (each sharing a tensor with an earlier one) run in one row loop; a
// source that an earlier statement of the chain wrote is taken from its result (no load), and a
// store that a later statement of the chain overwrites is dropped. Decided on the actual
// addresses of the resolved stream (the printed IR says what was decided, so the compiled-code
// cache never mixes streams that differ here).
#include <cstring>
#include <optional>

#include "ir/passes.h"

namespace dvejit::ir {
namespace {

// Where a tensor lives, from its address argument in the resolved stream.
struct Where {
  Space space;
  uint32_t partition;
  int64_t lo, hi;  // bytes [lo, hi) in each partition
};
std::optional<Where> WhereOf(const Function& f, std::span<const Instruction> resolved, const TensorRef& t) {
  const Function::ArgSource& a = f.args[static_cast<size_t>(t.arg)];
  uint32_t word;
  std::memcpy(&word, resolved[static_cast<size_t>(a.instruction)].bytes.data() + a.byte_offset, 4);
  const std::optional<Place> p = ResolveImmediate(word, f.gen);
  if (!p) return std::nullopt;
  const int64_t bytes = t.pattern.Count() * DtypeSize(t.dtype);
  return Where{p->space, p->partition, p->offset, p->offset + bytes};
}

enum class Relation { Same, Disjoint, Overlap };
// Two tensors of statements with the same channel count (so the same partition count).
Relation Relate(const TensorRef& a, const Where& wa, const TensorRef& b, const Where& wb, int channels) {
  const bool partitions_meet = wa.partition < wb.partition + static_cast<uint32_t>(channels) &&
                               wb.partition < wa.partition + static_cast<uint32_t>(channels);
  if (wa.space != wb.space || !partitions_meet || wa.hi <= wb.lo || wb.hi <= wa.lo) return Relation::Disjoint;
  if (wa.partition == wb.partition && wa.lo == wb.lo && wa.hi == wb.hi && a.dtype == b.dtype) return Relation::Same;
  return Relation::Overlap;
}

// Whether statement b may join the chain of the statements before it: every write of either
// meets every tensor of the other identically or not at all.
bool Compatible(const Function& f, std::span<const Instruction> resolved, const Stmt& a, const Stmt& b) {
  for (size_t i = 0; i < a.tensors.size(); ++i)
    for (size_t j = 0; j < b.tensors.size(); ++j) {
      const bool a_writes = i + 1 == a.tensors.size(), b_writes = j + 1 == b.tensors.size();
      if (!a_writes && !b_writes) continue;
      const auto wa = WhereOf(f, resolved, a.tensors[i]), wb = WhereOf(f, resolved, b.tensors[j]);
      if (!wa || !wb) return false;
      if (Relate(a.tensors[i], *wa, b.tensors[j], *wb, a.channels) == Relation::Overlap) return false;
    }
  return true;
}

bool Joinable(const Stmt& first, const Stmt& s) {
  if (s.dead || !ChainsThroughMemory(s.op) || s.channels != first.channels ||
      s.tensors.back().pattern.Count() != first.tensors.back().pattern.Count())
    return false;
  for (const TensorRef& t : s.tensors)
    if (!IsContiguousRow(t.pattern)) return false;
  return true;
}

bool Same(const Function& f, std::span<const Instruction> resolved, const TensorRef& a, const TensorRef& b,
          int channels) {
  const auto wa = WhereOf(f, resolved, a), wb = WhereOf(f, resolved, b);
  return wa && wb && Relate(a, *wa, b, *wb, channels) == Relation::Same;
}

// Whether b uses a tensor that a uses too (a forwarded result, a rewritten destination, a source
// loaded once for both). Statements over unrelated rows gain nothing from one loop: interleaving
// their rows only multiplies the memory streams the prefetchers must follow.
bool ShareATensor(const Function& f, std::span<const Instruction> resolved, const Stmt& a, const Stmt& b) {
  for (const TensorRef& ta : a.tensors)
    for (const TensorRef& tb : b.tensors)
      if (Same(f, resolved, ta, tb, a.channels)) return true;
  return false;
}

}  // namespace

void FuseElementwiseChains(Function& f, std::span<const Instruction> resolved) {
  for (const Region& region : f.regions) {
    if (!region.channel_major) continue;
    for (int i = region.begin; i < region.end; ++i) {
      if (!Joinable(f.stmts[i], f.stmts[i])) continue;
      std::vector<int> chain = {i};
      // Extend over element-wise statements, skipping the constants and lane reads they use
      // (no memory effects: emitted before the chain's loop).
      for (int j = i + 1; j < region.end; ++j) {
        const Stmt& s = f.stmts[j];
        if (s.dead || s.op == Op::Const || s.op == Op::LaneGet) continue;
        if (!Joinable(f.stmts[i], s)) break;
        bool ok = true, related = false;
        for (int m : chain) {
          ok = ok && Compatible(f, resolved, f.stmts[m], s);
          related = related || ShareATensor(f, resolved, f.stmts[m], s);
        }
        if (!ok || !related) break;
        chain.push_back(j);
      }
      if (chain.size() < 2) continue;
      for (size_t c = 1; c < chain.size(); ++c) {
        Stmt& s = f.stmts[chain[c]];
        s.fused_with_previous = true;
        s.forward.assign(s.tensors.size() - 1, kNoValue);
        for (size_t t = 0; t + 1 < s.tensors.size(); ++t)
          for (size_t p = c; p-- > 0;) {  // the latest writer of this exact tensor
            const Stmt& w = f.stmts[chain[p]];
            if (Same(f, resolved, w.tensors.back(), s.tensors[t], s.channels)) {
              s.forward[t] = chain[p];
              break;
            }
          }
      }
      // A store is dead when a later statement of the chain rewrites the same tensor (the reads
      // in between are forwarded).
      for (size_t c = 0; c + 1 < chain.size(); ++c)
        for (size_t d = c + 1; d < chain.size(); ++d)
          if (Same(f, resolved, f.stmts[chain[c]].tensors.back(), f.stmts[chain[d]].tensors.back(),
                   f.stmts[chain[c]].channels)) {
            f.stmts[chain[c]].dead_store = true;
            break;
          }
      i = chain.back();
    }
  }
}

}  // namespace dvejit::ir
