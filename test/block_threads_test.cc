// The JIT tier's threads: the pool runs every part of a job exactly once, from any number of
// host threads at once; and compiled regions split across threads give the interpreter's bits
// (the BN training step, where every region is large enough to be split).
#include "runtime/block_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "bench/workloads.h"
#include "runtime/executor.h"
#include "test/machine_difference.h"

namespace dvejit {
namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  std::mutex mu;
  std::set<std::thread::id> threads;
  explicit Counts(int64_t parts) : runs(static_cast<size_t>(parts)) {}
  static void Part(void* p, int64_t i) {
    auto* c = static_cast<Counts*>(p);
    ++c->runs[static_cast<size_t>(i)];
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // long enough for a worker to join
    std::lock_guard<std::mutex> lock(c->mu);
    c->threads.insert(std::this_thread::get_id());
  }
};

TEST(BlockThreads, EveryPartRunsOnce) {
  for (int threads : {1, 2, 3, 8}) {
    for (int64_t parts : {1, 2, 5, 64}) {
      Counts c(parts);
      BlockThreads::Global().Run(threads, parts, Counts::Part, &c);
      for (int64_t i = 0; i < parts; ++i) EXPECT_EQ(c.runs[static_cast<size_t>(i)], 1) << threads << " " << parts << " " << i;
      EXPECT_LE(c.threads.size(), static_cast<size_t>(std::min<int64_t>(threads, parts)));
      if (threads == 1 || parts == 1) {
        EXPECT_EQ(c.threads, std::set<std::thread::id>{std::this_thread::get_id()});  // all on the caller
      }
    }
  }
  // Workers are started for the largest job (8 threads: 7 beside the caller) and kept.
  EXPECT_EQ(BlockThreads::Global().workers(), 7);
  // With parts that sleep, a job of 64 parts on 8 threads is shared: more than one thread ran it.
  Counts c(64);
  BlockThreads::Global().Run(8, 64, Counts::Part, &c);
  EXPECT_GT(c.threads.size(), 1u);
}

// Host threads that run jobs at the same time: one at a time uses the workers, the others run
// their parts themselves; every part of every job runs once.
TEST(BlockThreads, ConcurrentCallers) {
  constexpr int kCallers = 4, kJobs = 50;
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kCallers; ++t)
    callers.emplace_back([&] {
      for (int j = 0; j < kJobs; ++j) {
        Counts c(7);
        BlockThreads::Global().Run(3, 7, Counts::Part, &c);
        for (auto& r : c.runs) wrong += r != 1;
      }
    });
  for (std::thread& th : callers) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The BN training step (statistics, gradient sums, BackProp: fused regions of 8 channel blocks
// at 16 lanes) on 2, 3 and 5 threads, as the runtime splits it by default: every byte and all
// state as the interpreter leaves them.
class ThreadedBnStep : public ::testing::TestWithParam<Dtype> {};

TEST_P(ThreadedBnStep, MatchesInterpreterBitForBit) {
  const Dtype dtype = GetParam();
  const Generation gen = Generation::Cayman;
  const workloads::BnLayout l = workloads::MakeBnLayout(128, 2048, dtype);
  const std::vector<Instruction> program = workloads::BnTrainingStep(l, gen, 1e-5f);
  const uint64_t shared_before = BlockThreads::Global().shared_jobs();
  Machine interp(gen);
  workloads::LoadBnInputs(interp, l, 13);
  ASSERT_TRUE(RunProgram(interp, program, RunOptions{}).status.ok());
  for (int threads : {2, 3, 5}) {
    Machine jit(gen);
    workloads::LoadBnInputs(jit, l, 13);
    RunOptions o;
    o.tier = ExecutionTier::Jit;
    o.threads = threads;
    for (int run = 0; run < 3; ++run) {  // the inputs are not overwritten: each run repeats the step
      const RunReport r = RunProgram(jit, program, o);
      ASSERT_TRUE(r.status.ok()) << r.status;
      ASSERT_EQ(r.tier, "jit") << r.jit_failure;
      EXPECT_EQ(MachineDifference(interp, jit, l.end, 0), "") << threads << " threads, run " << run;
    }
  }
  // The region was handed to the pool in every run (3 thread counts × 3 runs; after the
  // Parameter RAM loads the whole step is one channel-major region).
  EXPECT_GE(BlockThreads::Global().shared_jobs() - shared_before, 9u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ThreadedBnStep, ::testing::Values(Dtype::FP32, Dtype::BFLOAT16),
                         [](const auto& info) { return std::string(info.param == Dtype::FP32 ? "fp32" : "bf16"); });

}  // namespace
}  // namespace dvejit
