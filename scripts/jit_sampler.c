// A sampling profiler for JIT-compiled code on hosts without perf counters (the development VMs
// expose none), preloaded by scripts/profile-jit.sh. A CLOCK_MONOTONIC timer interrupts the
// process every DVEJIT_SAMPLER_US microseconds (default 433: shorter periods slowed the
// benchmarks by up to 3x on the VM and so changed what they measured); the handler records the
// interrupted instruction pointer. At exit it writes, under DVEJIT_SAMPLER_OUT:
//   samples.txt      one interrupted address per line (hex)
//   maps.txt         the process's /proc/self/maps
//   code_ADDR.bin    the bytes of each anonymous executable mapping (the JIT's code), so that
//                    the report can disassemble what actually ran
// Nothing happens unless DVEJIT_SAMPLER_OUT is set.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

enum { kMaxSamples = 1 << 22 };
static uint64_t* samples;
static long taken;
static char out_dir[512];

static void OnTick(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  const long i = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
  if (i < kMaxSamples) samples[i] = (uint64_t)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
}

static FILE* OpenOut(const char* name, const char* mode) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", out_dir, name);
  return fopen(path, mode);
}

__attribute__((constructor)) static void Start(void) {
  const char* dir = getenv("DVEJIT_SAMPLER_OUT");
  if (dir == NULL || (samples = malloc(sizeof(uint64_t) * kMaxSamples)) == NULL) return;
  snprintf(out_dir, sizeof out_dir, "%s", dir);
  const char* us = getenv("DVEJIT_SAMPLER_US");
  const long period_ns = (us ? atol(us) : 433) * 1000;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = OnTick;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGPROF;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return;
  struct itimerspec spec = {{0, period_ns}, {0, period_ns}};
  timer_settime(timer, 0, &spec, NULL);
}

__attribute__((destructor)) static void Finish(void) {
  if (samples == NULL) return;
  signal(SIGPROF, SIG_IGN);
  FILE* f = OpenOut("samples.txt", "w");
  if (f == NULL) return;
  const long n = taken < kMaxSamples ? taken : kMaxSamples;
  for (long i = 0; i < n; ++i) fprintf(f, "%lx\n", (unsigned long)samples[i]);
  fclose(f);
  FILE* maps = fopen("/proc/self/maps", "r");
  FILE* copy = OpenOut("maps.txt", "w");
  if (maps == NULL || copy == NULL) {
    if (maps != NULL) fclose(maps);
    if (copy != NULL) fclose(copy);
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, maps)) {
    fputs(line, copy);
    unsigned long lo, hi;
    char perms[8], path[512] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, path) < 3) continue;
    if (perms[0] != 'r' || perms[2] != 'x' || path[0] != '\0') continue;  // anonymous code only
    char name[64];
    snprintf(name, sizeof name, "code_%lx.bin", lo);
    FILE* code = OpenOut(name, "wb");
    if (code == NULL) continue;
    fwrite((const void*)lo, 1, hi - lo, code);
    fclose(code);
  }
  fclose(maps);
  fclose(copy);
}
