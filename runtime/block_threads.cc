#include "runtime/block_threads.h"

#include <unistd.h>

#include <algorithm>

#include "runtime/executor.h"

namespace dvejit {

BlockThreads& BlockThreads::Global() {
  static std::mutex mu;
  static BlockThreads* pool = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  const pid_t pid = getpid();
  // Never destroyed: its workers sleep until the process ends. A child forked from this process
  // has none of them, so it gets its own pool (the parent's, with its locks, is left alone).
  if (pool == nullptr || owner != pid) {
    pool = new BlockThreads();
    owner = pid;
  }
  return *pool;
}

int BlockThreads::workers() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(workers_.size());
}

uint64_t BlockThreads::shared_jobs() {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void BlockThreads::Run(int threads, int64_t parts, void (*part)(void*, int64_t), void* arg) {
  const int helpers = static_cast<int>(std::min<int64_t>(std::clamp(threads, 1, kMaxThreads), parts)) - 1;
  std::unique_lock<std::mutex> run(run_mu_, std::defer_lock);
  if (helpers <= 0 || !run.try_lock()) {
    for (int64_t i = 0; i < parts; ++i) part(arg, i);
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    // A worker that woke late for the previous job may still be looking at its fields.
    done_.wait(lock, [&] { return active_ == 0; });
    while (static_cast<int>(workers_.size()) < helpers) {
      const int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { WorkerLoop(index); });
    }
    part_ = part;
    arg_ = arg;
    parts_ = parts;
    next_.store(0);
    finished_.store(0);
    wanted_ = helpers;
    ++generation_;
  }
  wake_.notify_all();
  Work();
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return finished_.load() == parts_ && active_ == 0; });
}

void BlockThreads::Work() {
  for (int64_t i; (i = next_.fetch_add(1)) < parts_;) {
    part_(arg_, i);
    if (finished_.fetch_add(1) + 1 == parts_) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_all();
    }
  }
}

void BlockThreads::WorkerLoop(int index) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return generation_ != seen && index < wanted_; });
    seen = generation_;
    ++active_;
    lock.unlock();
    Work();
    lock.lock();
    if (--active_ == 0) done_.notify_all();
  }
}

void RunBlocksThreaded(const jit::RtTable* rt, jit::RegionFn region, const uint64_t* args, MachineState* m,
                       int64_t blocks, int64_t bytes) {
  if (rt->threads < 2 || blocks < 2 || bytes < rt->min_split_bytes) {
    region(args, m, rt, 0, blocks);
    return;
  }
  struct Job {
    jit::RegionFn region;
    const uint64_t* args;
    MachineState* m;
    const jit::RtTable* rt;
  } job{region, args, m, rt};
  BlockThreads::Global().Run(
      rt->threads, blocks,
      [](void* p, int64_t block) {
        const Job& j = *static_cast<const Job*>(p);
        j.region(j.args, j.m, j.rt, block, block + 1);
      },
      &job);
}

}  // namespace dvejit
