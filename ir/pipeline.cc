// The IR pipeline, in order. Each pass is a free function in its own file.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/strcat.h"
#include "ir/passes.h"

namespace dvejit::ir {
namespace {

enum class RunsWhen { kAlways, kFused, kUnfused };
struct PipelinePass {
  const char* name;
  void (*run)(Function&, std::span<const Instruction> resolved);
  RunsWhen when;
};
// The table of contents: BuildIR runs these in this order, PassNames lists them.
constexpr PipelinePass kPipeline[] = {
    {"channel-independence", ChannelIndependence, RunsWhen::kAlways},
    {"split-regions", [](Function& f, std::span<const Instruction>) { SplitRegionsPerInstruction(f); },
     RunsWhen::kUnfused},
    {"fuse-elementwise-chains", FuseElementwiseChains, RunsWhen::kFused},
    {"forward-lane-state", [](Function& f, std::span<const Instruction>) { ForwardLaneState(f); },
     RunsWhen::kFused},
    {"dead-lane-sets", [](Function& f, std::span<const Instruction>) { EliminateDeadLaneSets(f); },
     RunsWhen::kFused},
    {"dead-values", [](Function& f, std::span<const Instruction>) { EliminateDeadValues(f); },
     RunsWhen::kAlways},
    {"reroll-repeats", [](Function& f, std::span<const Instruction>) { RerollRepeats(f); },
     RunsWhen::kAlways},
};

bool Runs(const PipelinePass& p, bool fuse) {
  return p.when == RunsWhen::kAlways || (p.when == RunsWhen::kFused) == fuse;
}

// Debug builds verify the IR after every pass; DVEJIT_VERIFY_EACH_PASS=1 does it in any build
// (ctest's differential tests set it, so every pass is checked on their random streams and a
// broken pass is named rather than caught, or missed, by the final check).
bool VerifyEachPass() {
#ifndef NDEBUG
  return true;
#else
  static const bool on = [] {
    const char* v = std::getenv("DVEJIT_VERIFY_EACH_PASS");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return on;
#endif
}

}  // namespace

absl::StatusOr<Function> BuildIR(std::span<const Instruction> resolved, Generation gen,
                                 bool fuse, Profile profile) {
  Function f = Lower(resolved, gen, profile);
  for (const PipelinePass& pass : kPipeline) {
    if (!Runs(pass, fuse)) continue;
    pass.run(f, resolved);
    if (VerifyEachPass())
      if (auto s = Verify(f); !s.ok()) return absl::InternalError(Cat("after ", pass.name, ": ", s.message()));
  }
  if (auto s = Verify(f); !s.ok()) return s;  // always at the end
  return f;
}

std::vector<std::string> PassNames(bool fuse) {
  std::vector<std::string> names;
  for (const PipelinePass& pass : kPipeline)
    if (Runs(pass, fuse)) names.push_back(pass.name);
  return names;
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
