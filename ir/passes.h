// The IR passes, each a free function in its own file, and the pipeline that runs them in order
// (pipeline.cc is the table of contents).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace dvejit::ir {

// Marks instructions whose own sources and destination may conflict across channels (or
// element-wise within a channel) as interpreted, and groups the statements into regions that may
// run channel-block-major: consecutive instructions whose memory accesses only ever meet in the
// same channel. Needs the register-resolved stream for the actual addresses.
void ChannelIndependence(Function& f, std::span<const Instruction> resolved);
// Consecutive element-wise statements of a channel-major region over the same contiguous rows
// (every write meeting the others' tensors identically or not at all) run in one row loop: a
// source written earlier in the chain is forwarded, a store rewritten later in the chain is
// dropped. Needs the register-resolved stream for the actual addresses.
void FuseElementwiseChains(Function& f, std::span<const Instruction> resolved);
// Inside a channel-major region, a lane.get after a lane.set of the same field (covering at
// least its channels) uses the set value directly: lane state flows as SSA values.
void ForwardLaneState(Function& f);
// A lane.set overwritten later in the same region before any read is dead; the last one stays
// (the final lane state must be exact).
void EliminateDeadLaneSets(Function& f);
// Value statements nobody uses are removed.
void EliminateDeadValues(Function& f);
// Runs of identical statement groups that differ only in argument slots (the tiles of an op)
// become repeats, compiled as loops.
void RerollRepeats(Function& f);

// Lower + the passes above, the verifier after every pass in debug builds (or with
// DVEJIT_VERIFY_EACH_PASS=1) and always at the end.
// With `fuse` false every instruction is a region of its own and lane state goes through
// memory (the unfused baseline that `dvejit bench` measures). `profile` decides what ImmLd and
// PtrMulti lower to (see Lower).
absl::StatusOr<Function> BuildIR(std::span<const Instruction> resolved, Generation gen,
                                 bool fuse = true, Profile profile = Profile::Contract);
// The passes BuildIR runs, by name, in order (the pipeline's one list; `dvejit ir --help` shows it).
std::vector<std::string> PassNames(bool fuse = true);
// Splits every region at instruction boundaries (no channel-block-major fusion).
void SplitRegionsPerInstruction(Function& f);

}  // namespace dvejit::ir
