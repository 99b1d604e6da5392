#!/usr/bin/python3
"""Trains one small CNN twice on synthetic data — with torch.nn.BatchNorm and with dvejit's
batch norm (dvejit.torch) — from the same initialisation, batches and seed, and prints the two
runs side by side.

    PYTHONPATH=python /usr/bin/python3 examples/torch_bn_train.py [--steps 200] [--batch 16]

The model: conv 3→8 → BatchNorm2d → SiLU → conv 8→16 (stride 2) → BatchNorm2d → SiLU → global
average pool → linear 16→32 → BatchNorm1d → SiLU → linear 32→4, on 8×8 RGB images of four
noisy class prototypes. SGD with momentum; CPU, one thread. The dvejit run's batch-norm
statistics (Stats2/Aggregate) and gradients (GradAccum2, ParamLoad2, BackProp) execute on the
emulated DVE; everything else is PyTorch. python/tests/test_torch_bn.py runs `run()` and holds
the two runs to stated tolerances.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch
import torch.nn.functional as F
from torch import nn

import dvejit.torch as dtorch


def make_data(n=512, classes=4, size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    prototypes = torch.randn(classes, 3, size, size, generator=g)
    labels = torch.randint(0, classes, (n,), generator=g)
    images = 0.5 * prototypes[labels] + 1.5 * torch.randn(n, 3, size, size, generator=g) + 0.3
    return images, labels


class SmallCNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        # No bias before a batch norm (it would cancel); SiLU rather than ReLU keeps the loss
        # smooth in the weights, so the two runs drift apart only by rounding.
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc1 = nn.Linear(16, 32, bias=False)
        self.bn3 = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        x = F.silu(self.bn1(self.conv1(x)))
        x = F.silu(self.bn2(self.conv2(x)))
        x = x.mean(dim=(2, 3))
        x = F.silu(self.bn3(self.fc1(x)))
        return self.fc2(x)


def train(model, images, labels, steps, batch, lr, seed):
    """SGD steps on random batches (the same batches for the same seed); the loss per step."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    g = torch.Generator().manual_seed(seed + 1)
    losses = []
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, len(images), (batch,), generator=g)
        loss = F.cross_entropy(model(images[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        return (model(images).argmax(1) == labels).float().mean().item()


def _rel_diff(a, b):
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / a.abs().max().clamp_min(1e-12)).item()


def run(steps=200, batch=16, lr=0.02, seed=0):
    """Both training runs; returns their losses, accuracies, times and differences."""
    torch.manual_seed(seed)
    torch_model = SmallCNN()
    dvejit_model = dtorch.convert_batchnorm(copy.deepcopy(torch_model))
    images, labels = make_data(seed=seed)
    t0 = time.perf_counter()
    loss_t = train(torch_model, images, labels, steps, batch, lr, seed)
    t1 = time.perf_counter()
    loss_d = train(dvejit_model, images, labels, steps, batch, lr, seed)
    t2 = time.perf_counter()
    st, sd = torch_model.state_dict(), dvejit_model.state_dict()
    params = {k: _rel_diff(st[k], sd[k]) for k in st if not k.endswith("num_batches_tracked")}
    return {
        "losses_torch": loss_t,
        "losses_dvejit": loss_d,
        "max_loss_diff": max(abs(a - b) for a, b in zip(loss_t, loss_d)),
        "final_loss_diff": abs(loss_t[-1] - loss_d[-1]),
        "param_rel_diff": params,   # per parameter/buffer: max |Δ| / max |torch value|
        "max_param_rel_diff": max(params.values()),
        "acc_torch": accuracy(torch_model, images, labels),
        "acc_dvejit": accuracy(dvejit_model, images, labels),
        "seconds_torch": t1 - t0,
        "seconds_dvejit": t2 - t1,
        "dvejit_model": dvejit_model,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=20, help="print every N steps")
    args = ap.parse_args()
    torch.set_num_threads(1)
    r = run(args.steps, args.batch, args.lr, args.seed)
    print(f"{'step':>6} {'torch BN loss':>14} {'dvejit BN loss':>15} {'|diff|':>10}")
    for i, (a, b) in enumerate(zip(r["losses_torch"], r["losses_dvejit"])):
        if i % args.every == 0 or i == args.steps - 1:
            print(f"{i:>6} {a:>14.6f} {b:>15.6f} {abs(a - b):>10.2e}")
    print(f"\nmax |loss difference| over {args.steps} steps: {r['max_loss_diff']:.2e}")
    print("largest relative parameter/buffer difference after training: "
          f"{r['max_param_rel_diff']:.2e}")
    for name, d in sorted(r["param_rel_diff"].items(), key=lambda kv: -kv[1])[:5]:
        print(f"  {name:<24} {d:.2e}")
    print(f"train-set accuracy (eval mode): torch {r['acc_torch']:.3f}, dvejit {r['acc_dvejit']:.3f}")
    print(f"wall time: torch {r['seconds_torch']:.2f} s, dvejit {r['seconds_dvejit']:.2f} s")


if __name__ == "__main__":
    main()
