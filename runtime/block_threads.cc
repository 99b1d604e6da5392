#include "runtime/block_threads.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>

#include "runtime/executor.h"

namespace dvejit {
namespace {
using Clock = std::chrono::steady_clock;
// Waking a sleeping thread cost the waker 7-16 µs on these VMs (a futex wake that reaches the
// other vCPU), and the sleeper ran about 40 µs later: so a worker spins this long for the next
// job before it sleeps (a stream's regions, and the runs of a replay, come back to back), and
// the caller this long for a worker's last part before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr auto kYieldEvery = std::chrono::microseconds(5);
void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// Waits up to kSpin for `done()`; false if it is not yet.
// A spinning thread yields its core every few microseconds, so that with more runnable threads
// than cores it delays the others by that much, not by the whole spin.
template <typename Done>
bool SpinFor(Done done) {
  const Clock::time_point start = Clock::now();
  Clock::time_point yielded = start;
  while (!done()) {
    const Clock::time_point now = Clock::now();
    if (now - start > kSpin) return false;
    if (now - yielded > kYieldEvery) {
      std::this_thread::yield();
      yielded = now;
    }
    for (int i = 0; i < 16; ++i) CpuRelax();
  }
  return true;
}
}  // namespace

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
  const int helpers_asked = static_cast<int>(std::min<int64_t>(std::clamp(threads, 1, kMaxThreads), parts)) - 1;
  std::unique_lock<std::mutex> run(run_mu_, std::defer_lock);
  std::shared_ptr<Job> job;
  bool wake = false;
  if (helpers_asked > 0 && run.try_lock()) {
    auto made = std::make_shared<Job>();
    made->part = part;
    made->arg = arg;
    made->parts = parts;
    std::lock_guard<std::mutex> lock(mu_);
    // A thread the system refuses (a limit on threads or memory) leaves the job to fewer.
    try {
      while (static_cast<int>(workers_.size()) < helpers_asked) {
        const int index = static_cast<int>(workers_.size());
        workers_.emplace_back([this, index] { WorkerLoop(index); });
      }
    } catch (const std::system_error&) {
    }
    const int helpers = std::min(helpers_asked, static_cast<int>(workers_.size()));
    if (helpers > 0) {
      job = std::move(made);
      job_ = job;
      wanted_ = helpers;
      published_.store(++generation_, std::memory_order_release);
      wake = sleeping_ > 0;
    }
  }
  if (job == nullptr) {  // one part, no worker, or another job holds the pool: on this thread
    for (int64_t i = 0; i < parts; ++i) part(arg, i);
    return;
  }
  if (wake) wake_.notify_all();
  Work(*job);
  SpinFor([&] { return job->finished.load(std::memory_order_acquire) == parts; });
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return job->finished.load() == parts; });
  job_.reset();
}

void BlockThreads::Work(Job& job) {
  for (int64_t i; (i = job.next.fetch_add(1)) < job.parts;) {
    job.part(job.arg, i);
    if (job.finished.fetch_add(1) + 1 == job.parts) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_all();
    }
  }
}

void BlockThreads::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    SpinFor([&] { return published_.load(std::memory_order_acquire) != seen; });
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++sleeping_;  // checked by Run under mu_, so a job published from now on notifies
      wake_.wait(lock, [&] { return generation_ != seen && index < wanted_ && job_ != nullptr; });
      --sleeping_;
      seen = generation_;
      job = job_;
    }
    Work(*job);
  }
}

void RunBlocksThreaded(const jit::RtTable* rt, jit::RegionFn region, const uint64_t* args, MachineState* m,
                       int64_t blocks, int64_t bytes) {
  if (rt->threads < 2 || blocks < 2 || bytes < rt->min_split_bytes)
    return jit::RunBlocksInline(rt, region, args, m, blocks, bytes);
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
