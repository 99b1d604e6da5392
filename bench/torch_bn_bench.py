#!/usr/bin/env python3
"""PyTorch's CPU batch norm on dvejit's bench shapes (channels x elements), one thread.

Prints one JSON line: median milliseconds of the forward statistics (per-channel mean and
biased variance, as BatchNormStats2 + Aggregate compute) and of the backward chain (the input
gradient of batch_norm in training mode, with dγ and dβ, as GradAccum + ParamLoad2 + BackProp
compute). Run with Debian's /usr/bin/python3 (python3-torch).
"""
import argparse
import json
import os
import sys
import time

import torch


def median_ms(fn, min_reps, warm_ms, span_ms):
    """Median milliseconds over about span_ms of runs (at least min_reps), after about warm_ms of
    runs that are not counted, as `dvejit bench --compare-torch` measures dvejit: the steady
    state a training loop sees, not the first runs after setup."""
    warm_s, span_s = warm_ms / 1e3, span_ms / 1e3
    def timed():
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    first = sorted(timed() for _ in range(5))[2]
    spent = 5 * first
    while spent < warm_s:
        spent += timed()
    reps = max(min_reps, min(20001, int(span_s / max(first, 1e-9))))
    times = sorted(timed() * 1e3 for _ in range(reps))
    return times[len(times) // 2]


# glibc serves each backward's 4 MiB dx by a fresh mmap in some processes (its threshold adapts),
# and a first touch of a 4 KiB page costs about 11 µs on some VMs: such a process timed PyTorch's
# backward at 1.2-12 ms instead of 0.5. Keeping large blocks in the heap gives PyTorch the reuse
# a training loop (or a caching allocator) has.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824"


def main():
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if MALLOC_TUNABLES not in tunables:  # glibc reads them at start: run again with them
        env = dict(os.environ, GLIBC_TUNABLES=":".join(filter(None, [tunables, MALLOC_TUNABLES])))
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=128)
    ap.add_argument("--elements", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=1)
    # The timing comes from `dvejit bench --compare-torch` (tools/bench_command.cc), which times
    # dvejit the same way: no defaults here, so the two sides cannot drift apart.
    ap.add_argument("--reps", type=int, required=True, help="the fewest timed runs")
    ap.add_argument("--warm-ms", type=int, required=True, help="about this long of runs not timed")
    ap.add_argument("--span-ms", type=int, required=True, help="about this long of timed runs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    # BatchNorm1d layout: (batch = elements, channels).
    x = torch.randn(args.elements, args.channels)
    dy = torch.randn(args.elements, args.channels)
    gamma = torch.rand(args.channels) + 0.5
    beta = torch.zeros(args.channels)

    def forward_stats():
        return torch.var_mean(x, dim=0, unbiased=False)

    mean, var = forward_stats()
    invstd = torch.rsqrt(var + 1e-5)

    def backward_chain():
        # aten's fused batch-norm backward: dx, dγ, dβ from saved mean / invstd.
        return torch.ops.aten.native_batch_norm_backward(
            dy, x, gamma, None, None, mean, invstd, True, 1e-5, [True, True, True])

    out = {
        "channels": args.channels,
        "elements": args.elements,
        "threads": args.threads,
        "torch": torch.__version__,
        "forward_stats_ms": median_ms(forward_stats, args.reps, args.warm_ms, args.span_ms),
        "backward_ms": median_ms(backward_chain, args.reps, args.warm_ms, args.span_ms),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
