// Threads for the JIT tier's channel blocks: a process-wide pool on which one compiled region's
// blocks run on several cores at once (RunOptions::threads), and the RtTable::run_blocks that
// uses it. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "jit/codegen.h"

namespace dvejit {

class BlockThreads {
 public:
  // The process's pool (a child process after fork gets a new one).
  static BlockThreads& Global();

  // Runs part(arg, i) for every i in [0, parts) on up to `threads` threads, the calling thread
  // one of them, and returns when all have run. Parts are taken in order by whichever thread is
  // free, so a worker that wakes late takes fewer (or none: the caller never waits for one that
  // took no part). While another call is in progress (from another host thread), runs every
  // part on the calling thread.
  void Run(int threads, int64_t parts, void (*part)(void* arg, int64_t i), void* arg);

  // Worker threads started so far, and jobs that were shared with them.
  int workers();
  uint64_t shared_jobs();

 private:
  // One Run's parts. Shared with the workers that join it: one that wakes after the job is done
  // still finds its counters (and takes no part).
  struct Job {
    void (*part)(void*, int64_t);
    void* arg;
    int64_t parts;
    std::atomic<int64_t> next{0}, finished{0};
  };
  BlockThreads() = default;
  void Work(Job& job);  // takes parts of the job until none is left
  void WorkerLoop(int index);

  std::mutex run_mu_;  // one job at a time
  std::mutex mu_;      // the fields below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  uint64_t generation_ = 0;   // jobs shared with workers so far
  int wanted_ = 0;            // workers (by index) that join the current job
  int sleeping_ = 0;          // workers waiting on wake_
  std::shared_ptr<Job> job_;  // the current job
  std::atomic<uint64_t> published_{0};  // generation_, for workers spinning outside mu_
};

// RtTable::run_blocks: a region that moves at least rt->min_split_bytes runs its blocks on
// rt->threads threads of BlockThreads::Global(); a smaller one runs on the calling thread.
void RunBlocksThreaded(const jit::RtTable* rt, jit::RegionFn region, const uint64_t* args, MachineState* m,
                       int64_t blocks, int64_t bytes);

}  // namespace dvejit
