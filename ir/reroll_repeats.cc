// Finds the tiles of an op: runs of statement groups inside a channel-major region that repeat
// with only their argument slots shifted (ir.h, Repeat). Compiling one loop instead of one copy
// per tile keeps compile time and code size independent of the tile count.
#include <algorithm>

#include "ir/passes.h"

namespace dvejit::ir {
namespace {

constexpr int kMaxPeriod = 16;  // statements per tile: an instruction lowers to at most a few

// The repeat at `begin` with this period covering the most statements (count ≥ 2), if any.
Repeat LongestRepeat(const Function& f, const Region& region, int begin, int period) {
  Repeat r{begin, period, 1, 0};
  if (begin + 2 * period > region.end) return r;
  // The stride is the slot distance of the first argument in the period (0 if none).
  r.arg_stride = 0;
  for (int k = 0; k < period && r.arg_stride == 0; ++k) {
    const Stmt& a = f.stmts[begin + k];
    const Stmt& b = f.stmts[begin + period + k];
    if (a.arg >= 0 && b.arg >= 0) r.arg_stride = b.arg - a.arg;
    else if (!a.tensors.empty() && a.tensors.size() == b.tensors.size()) r.arg_stride = b.tensors[0].arg - a.tensors[0].arg;
  }
  while (r.begin + (r.count + 1) * period <= region.end && RepeatCopyMatches(f, r, r.count)) ++r.count;
  // An element-wise chain that goes on after the last copy keeps that copy out.
  while (r.count >= 2 && r.end() < region.end && f.stmts[r.end()].fused_with_previous) --r.count;
  // Values made inside may not be used after the loop.
  for (int i = r.end(); i < region.end && r.count >= 2; ++i)
    for (ValueId v : f.stmts[i].operands)
      if (v >= r.begin && v < r.end()) {
        // Shrink to the copies before the first user outside them.
        r.count = std::min(r.count, (v - r.begin) / period);
      }
  return r;
}

}  // namespace

void RerollRepeats(Function& f) {
  for (Region& region : f.regions) {
    region.repeats.clear();
    if (!region.channel_major) continue;
    for (int i = region.begin; i < region.end;) {
      Repeat best{i, 1, 1, 0};
      for (int period = 1; period <= kMaxPeriod; ++period) {
        const Repeat r = LongestRepeat(f, region, i, period);
        if (r.count >= 2 && r.period * r.count > best.period * best.count) best = r;
      }
      if (best.count >= 2) {
        region.repeats.push_back(best);
        i = best.end();
      } else {
        ++i;
      }
    }
  }
}

}  // namespace dvejit::ir
