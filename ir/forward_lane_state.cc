#include <array>

#include "ir/passes.h"

namespace dvejit::ir {

void ForwardLaneState(Function& f) {
  for (const Region& r : f.regions) {
    if (!r.channel_major) continue;
    // The latest set of each field in this region: its value and channel count.
    std::array<ValueId, kLaneFields> value;
    std::array<int, kLaneFields> channels{};
    value.fill(kNoValue);
    for (int i = r.begin; i < r.end; ++i) {
      Stmt& s = f.stmts[i];
      if (s.dead) continue;
      const int fi = static_cast<int>(s.field);
      if (s.op == Op::LaneSet) {
        value[fi] = s.operands[0];
        channels[fi] = s.channels;
      } else if (s.op != Op::LaneGet) {  // other writers (find8's idx) end the forwarding
        for (int g = 0; g < kLaneFields; ++g)
          if (WritesLaneField(s, static_cast<LaneField>(g))) value[static_cast<size_t>(g)] = kNoValue;
      } else if (value[fi] != kNoValue && s.channels <= channels[fi]) {  // a lane.get
        // Every channel that reads was written by the set: use its value, drop the read.
        for (Stmt& user : f.stmts)
          for (ValueId& v : user.operands)
            if (v == i) v = value[fi];
        s.dead = true;
      }
    }
  }
}

}  // namespace dvejit::ir
