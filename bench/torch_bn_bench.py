#!/usr/bin/env python3
"""PyTorch's CPU batch norm on dvejit's bench shapes (channels x elements), one thread.

Prints one JSON line: median milliseconds of the forward statistics (per-channel mean and
biased variance, as BatchNormStats2 + Aggregate compute) and of the backward chain (the input
gradient of batch_norm in training mode, with dγ and dβ, as GradAccum + ParamLoad2 + BackProp
compute). Run with Debian's /usr/bin/python3 (python3-torch).
"""
import argparse
import json
import time

import torch


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=128)
    ap.add_argument("--elements", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=21)
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
        "forward_stats_ms": median_ms(forward_stats, args.reps),
        "backward_ms": median_ms(backward_chain, args.reps),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
