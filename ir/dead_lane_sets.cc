#include "ir/passes.h"

namespace dvejit::ir {

void EliminateDeadLaneSets(Function& f) {
  for (const Region& r : f.regions) {
    if (!r.channel_major) continue;
    for (int i = r.begin; i < r.end; ++i) {
      Stmt& s = f.stmts[i];
      if (s.dead || s.op != Op::LaneSet) continue;
      // Dead when a later set of the same field in this region covers its channels before any
      // read of that field (another writer, find8's idx, ends the search: kept).
      for (int j = i + 1; j < r.end; ++j) {
        const Stmt& t = f.stmts[j];
        if (t.dead) continue;
        if (t.op == Op::LaneGet && t.field == s.field) break;
        if (WritesLaneField(t, s.field)) {
          if (t.op == Op::LaneSet && t.channels >= s.channels) s.dead = true;
          break;
        }
      }
    }
  }
}

}  // namespace dvejit::ir
