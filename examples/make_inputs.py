#!/usr/bin/python3
"""Writes the inputs of the batch-norm example (examples/README.md) as .npy files.

usage: /usr/bin/python3 examples/make_inputs.py OUT_DIR [--seed S]

OUT_DIR/x.npy      128 x 1024 fp32   activations; channel c (row c) has its own mean and scale
OUT_DIR/dy.npy     128 x 1024 fp32   upstream gradient
OUT_DIR/gamma.npy  128 x 1    fp32   per-channel scale (one fp32 per partition)
"""
import argparse
import os

import numpy as np

CHANNELS = 128
ELEMENTS = 1024


def make_inputs(out_dir, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    loc = rng.uniform(-2.0, 2.0, size=(CHANNELS, 1))
    scale = rng.uniform(0.25, 3.0, size=(CHANNELS, 1))
    x = (loc + scale * rng.standard_normal((CHANNELS, ELEMENTS))).astype(np.float32)
    dy = rng.standard_normal((CHANNELS, ELEMENTS)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, size=(CHANNELS, 1)).astype(np.float32)
    for name, a in (("x", x), ("dy", dy), ("gamma", gamma)):
        np.save(os.path.join(out_dir, name + ".npy"), a)
    return x, dy, gamma


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    make_inputs(args.out_dir, args.seed)
    print(f"wrote x.npy, dy.npy, gamma.npy ({CHANNELS} channels x {ELEMENTS} fp32) to {args.out_dir}")


if __name__ == "__main__":
    main()
