// The IR pipeline, in order. Each pass is a free function in its own file.
#include <vector>

#include "frontend/strcat.h"
#include "ir/passes.h"

namespace dvejit::ir {

absl::StatusOr<Function> BuildIR(std::span<const Instruction> resolved, Generation gen,
                                 bool fuse, Profile profile) {
  Function f = Lower(resolved, gen, profile);
  using Pass = void (*)(Function&);
  const struct {
    const char* name;
    Pass run;
  } kPasses[] = {
      {"forward-lane-state", ForwardLaneState},
      {"dead-lane-sets", EliminateDeadLaneSets},
      {"dead-values", EliminateDeadValues},
      {"reroll-repeats", RerollRepeats},
  };
  ChannelIndependence(f, resolved);
  if (!fuse) SplitRegionsPerInstruction(f);
  if (fuse) FuseElementwiseChains(f, resolved);
#ifndef NDEBUG
  if (auto s = Verify(f); !s.ok()) return absl::InternalError(Cat("after channel-independence and fusion: ", s.message()));
#endif
  for (const auto& pass : kPasses) {
    if (!fuse && pass.run != EliminateDeadValues && pass.run != RerollRepeats) continue;
    pass.run(f);
#ifndef NDEBUG
    if (auto s = Verify(f); !s.ok()) return absl::InternalError(Cat("after ", pass.name, ": ", s.message()));
#endif
  }
  if (auto s = Verify(f); !s.ok()) return s;  // always at the end
  return f;
}

void SplitRegionsPerInstruction(Function& f) {
  std::vector<Region> split;
  for (const Region& r : f.regions) {
    if (!r.channel_major) {
      split.push_back(r);
      continue;
    }
    for (int i = r.begin; i < r.end; ++i) {
      if (i == r.begin || f.stmts[i].source != f.stmts[i - 1].source)
        split.push_back(Region{i, i, true});
      split.back().end = i + 1;
    }
  }
  f.regions = std::move(split);
}

}  // namespace dvejit::ir
