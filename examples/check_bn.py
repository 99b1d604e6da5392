#!/usr/bin/python3
"""Compares the batch-norm example's dumps (examples/README.md) with float64 NumPy batch norm.

usage: /usr/bin/python3 examples/check_bn.py DIR [--eps E]

Reads DIR/x.npy, dy.npy, gamma.npy (make_inputs.py) and the dumps mean_var.npy (128 x 2:
mean, population variance), sums.npy (128 x 3: sum(dy), sum(dy * xhat), ...) and dx.npy
(128 x 1024). Prints the max errors, each relative to the largest magnitude of its reference
(mean and dx are close to 0 for some elements, so element-wise relative errors say little).
Exit 1 when mean/var exceed 1e-5 or dbeta/dgamma/dx exceed 1e-4.
"""
import argparse
import os
import sys

import numpy as np

LIMITS = {"mean": 1e-5, "var": 1e-5, "dbeta": 1e-4, "dgamma": 1e-4, "dx": 1e-4}


def reference(x, dy, gamma, eps):
    """float64 batch norm over axis 1 (the elements of a channel)."""
    x = x.astype(np.float64)
    dy = dy.astype(np.float64)
    gamma = gamma.astype(np.float64).reshape(-1, 1)
    n = x.shape[1]
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)  # population variance
    vf = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean) * vf
    dbeta = dy.sum(axis=1, keepdims=True)
    dgamma = (dy * xhat).sum(axis=1, keepdims=True)
    dx = gamma * vf / n * (n * dy - dbeta - xhat * dgamma)
    return {"mean": mean[:, 0], "var": var[:, 0], "dbeta": dbeta[:, 0], "dgamma": dgamma[:, 0],
            "dx": dx}


def errors(d, eps=1e-5):
    load = lambda name: np.load(os.path.join(d, name + ".npy"))
    ref = reference(load("x"), load("dy"), load("gamma"), eps)
    mean_var, sums, dx = load("mean_var"), load("sums"), load("dx")
    got = {"mean": mean_var[:, 0], "var": mean_var[:, 1], "dbeta": sums[:, 0],
           "dgamma": sums[:, 1], "dx": dx}
    out = {}
    for k, r in ref.items():
        g = got[k].astype(np.float64)
        if g.shape != r.shape:
            raise SystemExit(f"{k}: shape {g.shape}, expected {r.shape}")
        abs_err = float(np.max(np.abs(g - r)))
        out[k] = (abs_err, abs_err / float(np.max(np.abs(r))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--eps", type=float, default=1e-5)
    args = ap.parse_args()
    errs = errors(args.dir, args.eps)
    ok = True
    for k, (a, r) in errs.items():
        bad = r > LIMITS[k]
        ok &= not bad
        print(f"{k:7s} max abs err {a:.3e}  max rel err {r:.3e}  (limit {LIMITS[k]:.0e}){'  FAIL' if bad else ''}")
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
