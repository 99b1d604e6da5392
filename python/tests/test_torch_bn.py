"""dvejit.torch: the batch-norm layers against torch.nn.BatchNorm1d/2d/3d (CPU, float32).

Tolerances (relative to the largest magnitude of the reference quantity):
  forward y: 1e-5; input gradient dx: 1e-5; dγ, dβ: 1e-5 of Σ|terms|;
  running_mean: 1e-6 absolute + 1e-6 relative; running_var: 1e-5 relative;
  against a float64 reference: y, dx 1e-5.
Training a small CNN for 200 steps with each layer (same init, batches, seed): per-step losses
within 1e-4 of each other and every parameter and buffer within 1e-4 (relative to its largest
entry) at the end; observed: 1.6e-6 and 3.4e-6 (seeds 0-2, lr 0.01-0.05: at most
3.6e-6 and 5.1e-6).
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import torch
from torch import nn

import dvejit
import dvejit.torch as dtorch

torch.set_num_threads(1)
ROOT = pathlib.Path(__file__).resolve().parents[2]


def rel(a, b):
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / a.abs().max().clamp_min(1e-30)).item()


def make_pair(cls_torch, channels, **kw):
    ref = cls_torch(channels, **kw)
    if ref.affine:
        with torch.no_grad():
            ref.weight.uniform_(0.5, 1.5)
            ref.bias.uniform_(-1, 1)
    if ref.track_running_stats:
        with torch.no_grad():
            ref.running_mean.uniform_(-0.5, 0.5)
            ref.running_var.uniform_(0.5, 2)
    ours = dtorch.convert_batchnorm(ref.__class__(channels, **kw))
    ours.load_state_dict(ref.state_dict())
    return ref, ours


def compare_step(ref, ours, x, train=True):
    ref.train(train)
    ours.train(train)
    x1 = x.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    y1, y2 = ref(x1), ours(x2)
    g = torch.randn_like(y1)
    y1.backward(g)
    y2.backward(g)
    assert y2.dtype == y1.dtype and y2.shape == y1.shape
    assert rel(y1, y2) <= 1e-5
    assert rel(x1.grad, x2.grad) <= 1e-5
    if ref.affine:
        # dγ = Σ dy·x̂ and dβ = Σ dy: relative to the sums of magnitudes
        xh = (y1.detach() - ref.bias.detach().view(1, -1, *[1] * (x.dim() - 2))) / \
            ref.weight.detach().view(1, -1, *[1] * (x.dim() - 2))
        dims = [0] + list(range(2, x.dim()))
        scale_g = (g * xh).abs().sum(dims)
        scale_b = g.abs().sum(dims)
        assert ((ref.weight.grad - ours.weight.grad).abs() / scale_g).max() <= 1e-5
        assert ((ref.bias.grad - ours.bias.grad).abs() / scale_b).max() <= 1e-5
    if ref.track_running_stats:
        assert torch.allclose(ours.running_mean, ref.running_mean, rtol=1e-6, atol=1e-6)
        assert torch.allclose(ours.running_var, ref.running_var, rtol=1e-5, atol=0)
        assert ours.num_batches_tracked.item() == ref.num_batches_tracked.item()


SHAPES = [
    (nn.BatchNorm1d, (8, 5)),             # (N, C)
    (nn.BatchNorm1d, (4, 6, 10)),         # (N, C, L)
    (nn.BatchNorm2d, (16, 8, 8, 8)),
    (nn.BatchNorm2d, (3, 2, 15, 15)),     # 675 elements per channel: a partial Stats2 tile
    (nn.BatchNorm2d, (2, 130, 5, 5)),     # > 128 channels
    (nn.BatchNorm3d, (2, 3, 4, 4, 4)),
]


@pytest.mark.parametrize("cls,shape", SHAPES, ids=[f"{c.__name__}{s}" for c, s in SHAPES])
def test_training_step_matches_torch(cls, shape):
    torch.manual_seed(0)
    ref, ours = make_pair(cls, shape[1])
    for _ in range(3):                    # running statistics over several steps
        x = torch.randn(*shape) * 2 + 0.7
        compare_step(ref, ours, x)
        ref.zero_grad()
        ours.zero_grad()


@pytest.mark.parametrize("cls,shape", SHAPES[:3], ids=[f"{c.__name__}{s}" for c, s in SHAPES[:3]])
def test_eval_step_matches_torch(cls, shape):
    torch.manual_seed(1)
    ref, ours = make_pair(cls, shape[1])
    compare_step(ref, ours, torch.randn(*shape) * 2 + 0.7, train=False)


@pytest.mark.parametrize("kw", [dict(affine=False), dict(momentum=None),
                                dict(track_running_stats=False), dict(eps=1e-3, momentum=0.3)],
                         ids=["no-affine", "cumulative", "no-running", "eps-momentum"])
def test_configurations(kw):
    torch.manual_seed(2)
    ref, ours = make_pair(nn.BatchNorm2d, 4, **kw)
    for _ in range(3):
        compare_step(ref, ours, torch.randn(8, 4, 6, 6) * 3 - 1)
    compare_step(ref, ours, torch.randn(8, 4, 6, 6), train=False)


def test_against_float64_reference():
    torch.manual_seed(3)
    x = (torch.randn(8, 3, 7, 7) * 4 + 2).double()
    w = torch.rand(3, dtype=torch.float64) + 0.5
    b = torch.randn(3, dtype=torch.float64)
    xr = x.clone().requires_grad_()
    wr, br = w.clone().requires_grad_(), b.clone().requires_grad_()
    yr = nn.functional.batch_norm(xr, None, None, wr, br, True, 0.1, 1e-5)
    g = torch.randn_like(yr)
    yr.backward(g)
    xd = x.float().requires_grad_()
    wd, bd = w.float().requires_grad_(), b.float().requires_grad_()
    yd = dtorch.batch_norm(xd, None, None, wd, bd, True, 0.1, 1e-5)
    yd.backward(g.float())
    assert rel(yr, yd) <= 1e-5
    assert rel(xr.grad, xd.grad) <= 1e-5
    assert rel(wr.grad, wd.grad) <= 1e-5
    assert rel(br.grad, bd.grad) <= 1e-5


def test_multi_pass_channels():
    """40960 elements per channel: statistics, normalisation and gradients in several passes."""
    torch.manual_seed(4)
    ref, ours = make_pair(nn.BatchNorm2d, 2)
    compare_step(ref, ours, torch.randn(2, 2, 128, 160) + 5)


def test_bfloat16_input():
    torch.manual_seed(5)
    ref, ours = make_pair(nn.BatchNorm2d, 4)
    x = (torch.randn(4, 4, 8, 8) * 2 + 1).to(torch.bfloat16)
    xb = x.clone().requires_grad_()
    y = ours(xb)
    assert y.dtype == torch.bfloat16
    xf = x.float().requires_grad_()
    yf = ref(xf)
    assert rel(yf, y.float()) <= 1e-2
    g = torch.randn_like(yf)
    y.backward(g.to(torch.bfloat16))
    yf.backward(g.to(torch.bfloat16).float())
    assert xb.grad.dtype == torch.bfloat16
    assert rel(xf.grad, xb.grad.float()) <= 2e-2
    assert rel(ref.weight.grad, ours.weight.grad) <= 1e-2


def test_module_behaviour():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.Sequential(nn.Flatten(), nn.Linear(4 * 36, 5), nn.BatchNorm1d(5)))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model = dtorch.convert_batchnorm(model)
    assert isinstance(model[1], dtorch.BatchNorm2d) and isinstance(model[1], nn.BatchNorm2d)
    assert isinstance(model[3][2], dtorch.BatchNorm1d)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k])
    out = model(torch.randn(4, 3, 8, 8))
    assert out.shape == (4, 5)
    assert model[1].num_batches_tracked.item() == 1
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        dtorch.BatchNorm1d(3)(torch.randn(1, 3))
    with pytest.raises(ValueError):
        dtorch.BatchNorm2d(3)(torch.randn(2, 3))       # the layer's own input check
    with torch.no_grad():
        model.eval()
        assert model(torch.randn(2, 3, 8, 8)).shape == (2, 5)


def test_no_grad_for_frozen_parameters():
    torch.manual_seed(6)
    bn = dtorch.BatchNorm2d(3)
    bn.weight.requires_grad_(False)
    x = torch.randn(4, 3, 5, 5, requires_grad=True)
    bn(x).sum().backward()
    assert bn.weight.grad is None and bn.bias.grad is not None and x.grad is not None


def test_small_cnn_trains_like_torch():
    """examples/torch_bn_train.py: 200 SGD steps, batch 16, 8x8 images, both layers."""
    spec = importlib.util.spec_from_file_location("torch_bn_train",
                                                  ROOT / "examples" / "torch_bn_train.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.run(steps=200, batch=16, lr=0.02, seed=0)
    print(f"\nmax |loss diff| {r['max_loss_diff']:.2e}, max param rel diff "
          f"{r['max_param_rel_diff']:.2e}, acc {r['acc_torch']:.3f}/{r['acc_dvejit']:.3f}, "
          f"time {r['seconds_torch']:.2f}s/{r['seconds_dvejit']:.2f}s")
    assert len(r["losses_dvejit"]) == 200
    assert r["max_loss_diff"] <= 1e-4
    assert r["max_param_rel_diff"] <= 1e-4
    first = np.mean(r["losses_torch"][:10])
    last = np.mean(r["losses_dvejit"][-20:])
    assert last < 0.5 * first                          # it learned
    assert abs(r["acc_torch"] - r["acc_dvejit"]) <= 0.01
    m = r["dvejit_model"]
    assert isinstance(m.bn1, dtorch.BatchNorm2d) and m.bn1.num_batches_tracked.item() == 200
    assert dvejit.ops.cache_info()["runs"] > 0
