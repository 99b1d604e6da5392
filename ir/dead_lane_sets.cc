#include "ir/passes.h"

namespace dvejit::ir {

void EliminateDeadLaneSets(Function& f) {
  for (const Region& r : f.regions) {
    if (!r.channel_major) continue;
    for (int i = r.begin; i < r.end; ++i) {
      Stmt& s = f.stmts[i];
      if (s.dead || s.op != Op::LaneSet) continue;
      // Dead when a later set of the same field in this region covers its channels before any
      // read of that field.
      for (int j = i + 1; j < r.end; ++j) {
        const Stmt& t = f.stmts[j];
        if (t.dead) continue;
        if (t.op == Op::Find8 && static_cast<int>(s.field) >= static_cast<int>(LaneField::Idx0)) break;
        if (t.field != s.field) continue;
        if (t.op == Op::LaneGet) break;
        if (t.op == Op::LaneSet) {
          if (t.channels >= s.channels) s.dead = true;
          break;
        }
      }
    }
  }
}

}  // namespace dvejit::ir
