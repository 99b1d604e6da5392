#include <vector>

#include "ir/passes.h"

namespace dvejit::ir {

void EliminateDeadValues(Function& f) {
  // Users are later than their operands: one backward sweep settles everything.
  std::vector<int> uses(f.stmts.size(), 0);
  for (const Stmt& s : f.stmts)
    if (!s.dead)
      for (ValueId v : s.operands) ++uses[v];
  for (size_t i = f.stmts.size(); i-- > 0;) {
    Stmt& s = f.stmts[i];
    if (s.dead || !ProducesValue(s.op) || uses[i] != 0) continue;
    s.dead = true;
    for (ValueId v : s.operands) --uses[v];
  }
}

}  // namespace dvejit::ir
