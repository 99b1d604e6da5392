"""dvejit.torch: batch norm for PyTorch whose statistics and gradients run on dvejit.

    import dvejit.torch as dt
    bn = dt.BatchNorm2d(16)               # a drop-in torch.nn.BatchNorm2d
    model = dt.convert_batchnorm(model)   # or swap every nn.BatchNorm1d/2d/3d of a model

The layers subclass torch.nn.BatchNorm1d/2d/3d (same parameters, buffers, state_dict, train /
eval behaviour, momentum=None cumulative averaging, track_running_stats=False) and call
`batch_norm`, a drop-in for torch.nn.functional.batch_norm implemented as a
torch.autograd.Function:

* forward, training: per-channel mean and biased variance from BatchNormStats2 tiles +
  BatchNormAggregate; vf = rsqrt(var + eps), s = γ·vf, t = β − mean·s and y = x·s + t
  (TensorScalar), one dvejit program per 128 channels (`dvejit.ops.batch_norm_forward`). The
  running statistics are updated as PyTorch 1.13's CPU kernel does:
  running = momentum·batch + (1 − momentum)·running (momentum as float32; the mean in float32,
  the variance in double), with the unbiased variance var·n/(n − 1) for running_var.
* forward, eval: y from the running statistics by the same TensorScalar program.
* backward: GradAccum2 tiles, TensorTensor adds, A = γ·vf/N, ParamLoad2, BackProp
  (`dvejit.ops.batch_norm_backward`); dγ = Σdy·x̂, dβ = Σdy from the GradAccum sums.

float32 and bfloat16 inputs run natively (bf16 data, statistics in fp32, bf16 outputs and
input gradients); other float dtypes are computed in float32 and cast back.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.autograd.function import once_differentiable

from . import ops

__all__ = ["batch_norm", "BatchNormFunction", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "convert_batchnorm"]


def _to_channels(x):
    """(N, C, *) tensor -> ((C, N·prod(*)) NumPy array, dvejit dtype)."""
    t = x.detach()
    c = t.shape[1]
    if t.dtype == torch.bfloat16:
        t = t.transpose(0, 1).reshape(c, -1).contiguous()
        return t.view(torch.int16).numpy().view(np.uint16), "bf16"
    if t.dtype != torch.float32:
        t = t.float()
    return t.transpose(0, 1).reshape(c, -1).contiguous().numpy(), "fp32"


def _from_channels(a, shape, dtype):
    """(C, N·prod(*)) NumPy array -> (N, C, *) tensor of `dtype`."""
    if a.dtype == np.uint16:  # raw bf16
        t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a)
    t = t.reshape(shape[1], shape[0], *shape[2:]).transpose(0, 1).contiguous()
    return t if t.dtype == dtype else t.to(dtype)


def _vector(t):
    return None if t is None else t.detach().to(torch.float32).contiguous().numpy()


def _update_running_stats(running_mean, running_var, mean, var, elements, momentum):
    """ATen's CPU update (batch_norm_cpu_update_stats_template, PyTorch 1.13), momentum as a
    float32 `m`: running_mean = m·mean + (1 − m)·running_mean in float32; running_var =
    m·unbiased + (1 − m)·running_var with the unbiased variance (var·n/(n − 1)) in double."""
    m = np.float32(momentum)
    one_minus = np.float32(1) - m
    with torch.no_grad():
        if running_mean is not None:
            rm = running_mean.detach().to(torch.float32).numpy()
            new = m * mean.astype(np.float32) + one_minus * rm
            running_mean.copy_(torch.from_numpy(new))
        if running_var is not None:
            rv = running_var.detach().to(torch.float32).numpy()
            unbiased = var.astype(np.float64) * elements / (elements - 1)
            new = (np.float64(m) * unbiased + (one_minus * rv).astype(np.float64)).astype(np.float32)
            running_var.copy_(torch.from_numpy(new))


class BatchNormFunction(torch.autograd.Function):
    """The autograd Function behind `batch_norm` (see the module docstring)."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        x2, dt = _to_channels(x)
        elements = x2.shape[1]
        if training and elements <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, "
                             f"got input size {x.size()}")
        gamma = _vector(weight)
        beta = _vector(bias)
        if training:
            y2, mean, var, vf = ops.batch_norm_forward(x2, gamma, beta, eps, dtype=dt)
            _update_running_stats(running_mean, running_var, mean, var, elements, momentum)
        else:
            if running_mean is None or running_var is None:
                raise ValueError("batch_norm: eval mode needs running_mean and running_var")
            y2, mean, var, vf = ops.batch_norm_forward(x2, gamma, beta, eps, mean=_vector(running_mean),
                                                       var=_vector(running_var), dtype=dt)
        ctx.x2, ctx.dt, ctx.mean, ctx.vf, ctx.gamma = x2, dt, mean, vf, gamma
        ctx.training = bool(training)
        ctx.shape, ctx.dtype = x.shape, x.dtype
        ctx.param_dtype = weight.dtype if weight is not None else None
        return _from_channels(y2, x.shape, x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_y):
        g = grad_y
        if ctx.dt == "bf16" and g.dtype != torch.bfloat16:
            g = g.to(torch.bfloat16)
        dy2, _ = _to_channels(g)
        dx2, dgamma, dbeta = ops.batch_norm_backward(ctx.x2, dy2, ctx.mean, ctx.vf, ctx.gamma,
                                                     training=ctx.training, dtype=ctx.dt)
        need = ctx.needs_input_grad
        dx = _from_channels(dx2, ctx.shape, ctx.dtype) if need[0] else None
        dw = torch.from_numpy(dgamma).to(ctx.param_dtype) if need[1] else None
        db = torch.from_numpy(dbeta).to(ctx.param_dtype) if need[2] else None
        ctx.x2 = None
        return dx, dw, db, None, None, None, None, None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm on dvejit (same arguments and behaviour)."""
    if input.dim() < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got {input.dim()}-D")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"batch_norm: {name} has {t.numel()} elements, input has {c} channels")
    return BatchNormFunction.apply(input, weight, bias, running_mean, running_var, training,
                                   momentum, eps)


class _DvejitBatchNorm:
    """The forward of torch.nn.modules.batchnorm._BatchNorm (PyTorch 1.13), with
    F.batch_norm replaced by dvejit's."""

    def forward(self, input):
        self._check_input_dim(input)
        if self.momentum is None:
            exponential_average_factor = 0.0
        else:
            exponential_average_factor = self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:
                    exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return batch_norm(input,
                          self.running_mean if use_running else None,
                          self.running_var if use_running else None,
                          self.weight, self.bias, bn_training, exponential_average_factor,
                          self.eps)


class BatchNorm1d(_DvejitBatchNorm, nn.BatchNorm1d):
    """torch.nn.BatchNorm1d on dvejit: input (N, C) or (N, C, L)."""


class BatchNorm2d(_DvejitBatchNorm, nn.BatchNorm2d):
    """torch.nn.BatchNorm2d on dvejit: input (N, C, H, W)."""


class BatchNorm3d(_DvejitBatchNorm, nn.BatchNorm3d):
    """torch.nn.BatchNorm3d on dvejit: input (N, C, D, H, W)."""


_SWAP = {nn.BatchNorm1d: BatchNorm1d, nn.BatchNorm2d: BatchNorm2d, nn.BatchNorm3d: BatchNorm3d}


def convert_batchnorm(module):
    """Replaces every torch.nn.BatchNorm1d/2d/3d in `module` (and `module` itself) by the dvejit
    layer with the same configuration, parameters and buffers. Returns the converted module."""
    cls = _SWAP.get(type(module))
    if cls is not None:
        new = cls(module.num_features, eps=module.eps, momentum=module.momentum,
                  affine=module.affine, track_running_stats=module.track_running_stats)
        new.load_state_dict(module.state_dict())
        new.train(module.training)
        return new.to(next(iter(module.state_dict().values())).device) if module.state_dict() else new
    for name, child in module.named_children():
        setattr(module, name, convert_batchnorm(child))
    return module
