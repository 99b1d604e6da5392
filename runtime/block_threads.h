// Threads for the JIT tier's channel blocks: a process-wide pool on which one compiled region's
// blocks run on several cores at once (RunOptions::threads), and the RtTable::run_blocks that
// uses it. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  // free. While another call is in progress (from another host thread), runs every part on the
  // calling thread.
  void Run(int threads, int64_t parts, void (*part)(void* arg, int64_t i), void* arg);

  // Worker threads started so far, and jobs that were shared with them.
  int workers();
  uint64_t shared_jobs();

 private:
  BlockThreads() = default;
  void Work();  // takes parts of the current job until none is left
  void WorkerLoop(int index);

  std::mutex run_mu_;  // one job at a time
  std::mutex mu_;      // the job's fields and the counters below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  uint64_t generation_ = 0;  // jobs started
  int wanted_ = 0;           // workers (by index) that join the current job
  int active_ = 0;           // workers inside Work()
  void (*part_)(void*, int64_t) = nullptr;
  void* arg_ = nullptr;
  int64_t parts_ = 0;
  std::atomic<int64_t> next_{0}, finished_{0};
};

// RtTable::run_blocks: a region that moves at least rt->min_split_bytes runs its blocks on
// rt->threads threads of BlockThreads::Global(); a smaller one runs on the calling thread.
void RunBlocksThreaded(const jit::RtTable* rt, jit::RegionFn region, const uint64_t* args, MachineState* m,
                       int64_t blocks, int64_t bytes);

}  // namespace dvejit
