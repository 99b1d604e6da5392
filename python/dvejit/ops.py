"""Eager dvejit ops: NumPy in, NumPy out, each one or a short chain of DVE instructions.

Every op takes arrays shaped (channels, elements) — channel c runs on partition c — and
returns new arrays. Behind each call:

* the operands are laid out in SBUF of a per-thread `Machine` (`ops.machine()`), written
  through zero-copy views of its memory;
* a program is assembled for the shape (channels ≤ 128 × one pass of elements), cached by
  (op, shape, dtypes) in that thread, and run;
* channels beyond 128 and free sizes beyond a pass (what fits in a partition, at most 32768
  elements) or beyond an instruction's limit (Stats2: 512, Max8/FindIndex8: 16384) are tiled
  automatically; reductions combine their tiles on the device exactly as the spec's programs
  do (Aggregate over all Stats2 tiles; TensorTensor adds of GradAccum2 tile sums).

dtypes: inputs are inferred from the NumPy dtype (float32 → fp32, float64 → fp32 after
NumPy's rounding, float16 → fp16, (u)int8/16/32 as such). bf16/fp8 data are passed as raw
uint16/uint8 bits with `dtype="bf16"` (or as floats, which are then rounded with the spec's
rounding); outputs in those dtypes come back as raw bits (`dvejit.from_bf16` reads them).

ALU ops are named as in the assembler (`add`, `subtract`, `mult`, `max`, `is_ge`, ...) or by
the NumPy ufunc (`np.add`, `np.multiply`, ...), like nki.isa.
"""

from __future__ import annotations

import threading

import numpy as np

from . import _dvejit as _C
from . import usage_error

PARTITIONS = 128
STATS_TILE = 512       # BatchNormStats2 reads at most 512 elements (has_bnstats2_src_element_cnt)
SEARCH_MAX = 16384     # Max8 / FindIndex8 read at most 16384 elements
MAX_PASS = 32768       # elements per channel in one program: every pattern stays one dimension
_SCRATCH = 4096        # bytes per partition kept free for per-channel scalars and small results

_RECIP_256 = np.float32(1.0 / 256.0)
_SENTINEL = np.uint32(0xFFFFFFFF)

# ---------------------------------------------------------------------------------------------
# Per-thread machine and program cache

# Eager ops repeat the same few shapes, so `auto` (interpret a program's first run, compile it
# when it repeats) is the default: the JIT where it is available, the interpreter otherwise.
_config = {"gen": "cayman", "tier": "auto", "threads": 1}
_local = threading.local()


class _Kernel:
    """A cached program and zero-copy views of its operands. uses_pram: it reads the
    Parameter RAM reciprocals (Stats2, Aggregate)."""
    __slots__ = ("program", "views", "text", "uses_pram")


class _Context:
    def __init__(self, gen, tier):
        self.gen = gen
        self.tier = tier
        self.machine = _C.Machine(gen)
        self.threads = 1
        self.machine.preload_reciprocals()
        self._pram = self.machine.param_ram
        self.capacity = self.machine.active_bytes("sbuf")
        self.kernels = {}
        self.runs = 0

    def kernel(self, key, build):
        k = self.kernels.get(key)
        if k is None:
            text, views = build()
            k = _Kernel()
            k.text = text
            k.uses_pram = "BatchNormStats" in text or "BatchNormAggregate" in text
            k.program = _C.Program(text, self.gen)
            k.views = {name: self.machine.sbuf(0, n, off, dt, count)
                       for name, (n, off, dt, count) in views.items()}
            self.kernels[key] = k
        return k

    def run(self, kernel):
        # Stats2/Aggregate read the Parameter RAM reciprocals; put them back if a user reset
        # the thread's machine.
        if kernel.uses_pram and (self._pram[0] != 1.0 or self._pram[255] != _RECIP_256):
            self.machine.preload_reciprocals()
        self.machine.execute(kernel.program, self.tier)
        self.runs += 1


def _context():
    ctx = getattr(_local, "ctx", None)
    if ctx is None or ctx.gen != _config["gen"] or ctx.tier != _config["tier"]:
        ctx = _local.ctx = _Context(_config["gen"], _config["tier"])
    if ctx.threads != _config["threads"]:
        ctx.machine.threads = ctx.threads = _config["threads"]
    return ctx


def machine():
    """This thread's Machine (its SBUF holds the operands of the last op)."""
    return _context().machine


def set_generation(gen):
    """The generation eager ops run on (default cayman); each thread gets a new machine."""
    _C.Machine(gen)  # validates the name
    _config["gen"] = gen


def set_tier(tier):
    """The execution tier of eager ops: auto (default), interp or jit."""
    if tier not in _C.tiers:
        raise usage_error(f"tier = {tier!r}, expected one of {', '.join(_C.tiers)}")
    _config["tier"] = tier


def set_threads(threads):
    """Threads (1-256, default 1) the JIT tier splits each op's compiled channel blocks across
    (ops that move under 1 MiB stay on one thread); the results do not change."""
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= _C.max_threads:
        raise usage_error(f"threads = {threads!r}, expected a whole number from 1 to {_C.max_threads}")
    _config["threads"] = threads


def threads():
    """The threads eager ops may use (set_threads)."""
    return _config["threads"]


def clear_cache():
    """Drops this thread's cached programs."""
    _context().kernels.clear()


def tier():
    """The execution tier eager ops run on (set_tier)."""
    return _config["tier"]


def cache_info():
    """{"programs": cached programs, "runs": programs run} for this thread."""
    ctx = _context()
    return {"programs": len(ctx.kernels), "runs": ctx.runs}


# ---------------------------------------------------------------------------------------------
# Operands, names, layout, text

_NP = {}
_SIZE = {}


def _np_dtype(name):
    d = _NP.get(name)
    if d is None:
        d = _NP[name] = np.dtype(_C.numpy_dtype(name))
    return d


def _size(name):
    s = _SIZE.get(name)
    if s is None:
        s = _SIZE[name] = _C.dtype_size(name)
    return s


_INFER = {
    np.dtype(np.float32): "fp32", np.dtype(np.float64): "fp32", np.dtype(np.float16): "fp16",
    np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
    np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32", np.dtype(np.uint32): "uint32",
    np.dtype(np.int64): "int32", np.dtype(np.bool_): "uint8",
}
_RAW_FLOATS = ("bf16", "fp8e3", "fp8e4", "fp8e5")
_DTYPE_NAMES = {}


def _dtype_name(dtype):
    if dtype is None:
        return None
    key = dtype if isinstance(dtype, str) else np.dtype(dtype)
    n = _DTYPE_NAMES.get(key)
    if n is None:
        n = _DTYPE_NAMES[key] = _C.dtype_name(dtype)
    return n


def _operand(x, dtype, what):
    """(2-D array in the dvejit dtype's NumPy storage, dtype name)."""
    a = np.asarray(x)
    if a.ndim == 1:
        a = a[None, :]
    elif a.ndim != 2:
        raise usage_error(f"{what}: shape = {a.shape}, expected (channels, elements)")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise usage_error(f"{what}: shape = {a.shape}, expected at least one channel and element")
    if dtype is None:
        name = _INFER.get(a.dtype)
        if name is None:
            raise usage_error(f"{what}: NumPy dtype = {a.dtype}, expected float32/16, (u)int8/16/32 "
                              f"or an explicit dtype=")
    else:
        name = _dtype_name(dtype)
    storage = _np_dtype(name)
    if a.dtype != storage:
        if name in _RAW_FLOATS and a.dtype.kind == "f":
            a = _C.encode(a, name)          # spec rounding
        elif name in _RAW_FLOATS:
            raise usage_error(f"{what}: {name} data as {a.dtype}, expected raw {storage} bits or floats")
        else:
            a = a.astype(storage)
    return a, name


def _per_channel(v, channels, what, width=1, dtype=np.float32):
    a = np.asarray(v, dtype=dtype)
    if a.ndim == 0:
        out = np.empty((channels, width), dtype=dtype)
        out[...] = a  # np.full's dispatch costs more than the fill at eager sizes
        return out
    if a.size == width and width > 1 and a.ndim == 1:
        return np.broadcast_to(a, (channels, width))
    if a.size != channels * width:
        raise usage_error(f"{what}: {a.size} values, expected {channels * width} "
                          f"({channels} channels x {width})")
    return a.reshape(channels, width)


_ALU = None
_UFUNCS = {
    np.add: "add", np.subtract: "subtract", np.multiply: "mult", np.maximum: "max",
    np.minimum: "min", np.power: "pow", np.fmod: "mod", np.absolute: "absolute_value",
    np.square: "square", np.equal: "is_eq", np.not_equal: "is_ne", np.greater: "is_gt",
    np.greater_equal: "is_ge", np.less: "is_lt", np.less_equal: "is_le",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_xor: "logical_xor",
    np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
    np.invert: "bitwise_not", np.left_shift: "logical_shift_left",
    np.right_shift: "arith_shift_right", np.divide: "divide",
}
_ALIASES = {"multiply": "mult", "mul": "mult", "sub": "subtract", "maximum": "max",
            "minimum": "min", "abs": "absolute_value", "relu": "re_lu", "copy": "bypass",
            "abs_diff": "absolute_diff"}


def _alu(op):
    """(asm name, is_bitvec)."""
    global _ALU
    if _ALU is None:
        _ALU = {name: bv for name, _code, bv in _C.alu_op_names()}
    name = _UFUNCS.get(op) if not isinstance(op, str) else op.lower()
    name = _ALIASES.get(name, name)
    if name not in _ALU:
        raise usage_error(f"ALU op = {op!r}, expected an assembler name (add, mult, max, ...) "
                          f"or a NumPy ufunc")
    return name, _ALU[name]


def _a(off):
    return f"sbuf[0]+{off:#x}"


def _t(off, count, step=1):
    return f"sbuf[0]+{off:#x}[{count}:{step}]"


def _f32(v):
    return f"f32:{int(np.float32(v).view(np.uint32)):#010x}"


class _Layout:
    """Bump allocation of one partition's bytes; named regions become views."""

    def __init__(self, capacity, channels):
        self.top = 0
        self.capacity = capacity
        self.n = channels
        self.views = {}

    def region(self, name, dtype, count, align=64):
        off = -(-self.top // align) * align
        end = off + count * _size(dtype)
        if end > self.capacity:
            raise usage_error(f"operands need {end} bytes per partition, expected <= {self.capacity} "
                              f"(the SBUF partition); split the input")
        self.top = end
        if name:
            self.views[name] = (self.n, off, dtype, count)
        return off

    def scalar(self, name, count=1, dtype="fp32"):
        return self.region(name, dtype, count, align=max(4, _size(dtype)))


def _pass_len(ctx, bytes_per_element, fixed=0, tile=STATS_TILE):
    """Elements per channel in one program: what fits next to `fixed` bytes, a multiple of `tile`."""
    f = (ctx.capacity - _SCRATCH - fixed) // bytes_per_element
    f = min(f, MAX_PASS) // tile * tile
    if f < tile:
        raise usage_error(f"an element needs {bytes_per_element} bytes (+{fixed} fixed) per "
                          f"partition: not even one {tile}-element tile fits")
    return f


def _chunks(total, step):
    for start in range(0, total, step):
        yield start, min(step, total - start)


def _tiles(length, tile):
    """[(offset, count)] covering `length` in tiles of `tile`."""
    return list(_chunks(length, tile))


def _balanced(length, limit):
    """Near-equal tiles of at most `limit` (each at least length // ntiles)."""
    n = -(-length // limit)
    base, extra = divmod(length, n)
    out, start = [], 0
    for i in range(n):
        count = base + (1 if i < extra else 0)
        out.append((start, count))
        start += count
    return out


# ---------------------------------------------------------------------------------------------
# Element-wise ops

def _per_channel_block(name, a, dt, out_dt, width, text):
    """One instruction per block of up to 128 channels that reads a's rows (dt) and writes
    `width` out_dt values per channel; text(n, in_off, out_off) is its assembly. (C, width)."""
    ctx = _context()
    channels, count = a.shape
    out = np.empty((channels, width), _np_dtype(out_dt))
    for c0, n in _chunks(channels, PARTITIONS):
        def build(n=n):
            lay = _Layout(ctx.capacity, n)
            in_off = lay.region("in0", dt, count)
            out_off = lay.region("out", out_dt, width)
            return text(n, in_off, out_off), lay.views
        k = ctx.kernel((name, n, count, dt, out_dt), build)
        k.views["in0"][...] = a[c0:c0 + n]
        ctx.run(k)
        out[c0:c0 + n] = k.views["out"]
    return out


def _map(name, key, operands, out_dtype, scalars, body):
    """Runs an element-wise program over (channels, elements) operands.

    operands: [(array, dtype)], all the same shape; scalars: [(values (C, k), dtype)] per-channel
    slots read through pointer immediates; body(n, L, in_offs, out_off, scalar_offs) -> text."""
    ctx = _context()
    shape = operands[0][0].shape
    channels, elements = shape
    for a, _ in operands[1:]:
        if a.shape != shape:
            raise usage_error(f"{name}: operand shapes {[o[0].shape for o in operands]} differ")
    in_dts = tuple([dt for _, dt in operands])
    scalar_shapes = tuple([(v.shape[1], dt) for v, dt in scalars])
    if channels <= PARTITIONS:
        # One program over everything (the common eager case): no tiling loops, and the result
        # is a copy of the output view. A cached program of this length is one that fitted the
        # partition (whichever path built it), so the lookup comes before the sizing.
        k = ctx.kernels.get((name, key, channels, elements, in_dts, out_dtype, scalar_shapes))
        if k is not None:
            views = k.views
            for j, (v, _) in enumerate(scalars):
                views[_S[j]][...] = v
            for i, (a, _) in enumerate(operands):
                views[_IN[i]][...] = a
            ctx.run(k)
            return views["out"].copy()
    step = _pass_len(ctx, sum([_size(dt) for dt in in_dts]) + _size(out_dtype), tile=1)
    out = np.empty((channels, elements), _np_dtype(out_dtype))
    for c0, n in _chunks(channels, PARTITIONS):
        for e0, length in _chunks(elements, step):
            def build(n=n, length=length):
                lay = _Layout(ctx.capacity, n)
                s_offs = [lay.scalar(f"s{j}", k, dt) for j, (k, dt) in enumerate(scalar_shapes)]
                in_offs = [lay.region(f"in{i}", dt, length) for i, dt in enumerate(in_dts)]
                out_off = lay.region("out", out_dtype, length)
                return body(n, length, in_offs, out_off, s_offs), lay.views
            k = ctx.kernel((name, key, n, length, in_dts, out_dtype, scalar_shapes), build)
            views = k.views
            for j, (v, _) in enumerate(scalars):
                views[_S[j]][...] = v[c0:c0 + n]
            for i, (a, _) in enumerate(operands):
                views[_IN[i]][...] = a[c0:c0 + n, e0:e0 + length]
            ctx.run(k)
            out[c0:c0 + n, e0:e0 + length] = views["out"]
    return out


_IN = ("in0", "in1", "in2")
_S = ("s0", "s1", "s2", "s3", "s4")


def tensor_scalar(x, op0, operand0=None, reverse0=False, op1=None, operand1=None,
                  reverse1=False, *, dtype=None, out_dtype=None):
    """`(x op0 operand0) op1 operand1` per element (TensorScalarArith; bitvec ops use
    TensorScalarBitvec). Operands are scalars or per-channel vectors (C,); reverse0 computes
    `operand0 op0 x`, reverse1 `operand1 op1 (...)`. op0="rsqrt" alone is the RSQRT form."""
    a, dt = _operand(x, dtype, "x")
    channels = a.shape[0]
    op0n, bv0 = _alu(op0)
    op1n, bv1 = _alu("bypass" if op1 is None else op1)
    out_dt = dt if out_dtype is None else _dtype_name(out_dtype)
    if op0n == "rsqrt":
        if op1n != "bypass" or operand0 is not None or operand1 is not None or reverse0 or reverse1:
            raise usage_error("tensor_scalar: the RSQRT form takes no operands, op1 or reverse")
        return _map("ts_rsqrt", (), [(a, dt)], out_dt, [],
                    lambda n, L, i, o, s: f"TensorScalarArith src={_t(i[0], L)} dst={_t(o, L)} "
                                          f"in_dtype={dt} out_dtype={out_dt} n={n} op0=rsqrt op1=bypass")
    used = [bv for name, bv in ((op0n, bv0), (op1n, bv1)) if name != "bypass"]
    opcode = "TensorScalarBitvec" if used and all(used) else "TensorScalarArith"
    sdt = dt if opcode == "TensorScalarBitvec" else "fp32"
    sdt_np = _np_dtype(sdt)
    scalars = [(_per_channel(0 if operand0 is None else operand0, channels, "operand0", dtype=sdt_np), sdt)]
    if operand1 is not None or op1n != "bypass":
        scalars.append((_per_channel(0 if operand1 is None else operand1, channels, "operand1",
                                     dtype=sdt_np), sdt))
    rev = (1 if reverse0 else 0) | (2 if reverse1 else 0)

    def body(n, L, i, o, s):
        imm1 = _a(s[1]) if len(s) > 1 else "0"
        return (f"{opcode} src={_t(i[0], L)} dst={_t(o, L)} in_dtype={dt} out_dtype={out_dt} n={n} "
                f"op0={op0n} imm0={_a(s[0])} op1={op1n} imm1={imm1} reverse_operands={rev}")
    return _map("ts", (opcode, op0n, op1n, rev), [(a, dt)], out_dt, scalars, body)


def tensor_tensor(a, b, op, *, dtype=None, dtype1=None, out_dtype=None):
    """`a op b` per element (TensorTensorArith, or TensorTensorBitvec for bitvec ops)."""
    x0, dt0 = _operand(a, dtype, "a")
    x1, dt1 = _operand(b, dtype1 if dtype1 is not None else dtype, "b")
    opn, bv = _alu(op)
    out_dt = dt0 if out_dtype is None else _dtype_name(out_dtype)
    opcode = "TensorTensorBitvec" if bv else "TensorTensorArith"

    def body(n, L, i, o, s):
        return (f"{opcode} in_dtypes={dt0},{dt1} out_dtype={out_dt} op={opn} n={n} "
                f"src0={_t(i[0], L)} src1={_t(i[1], L)} dst={_t(o, L)}")
    return _map("tt", (opcode, opn), [(x0, dt0), (x1, dt1)], out_dt, [], body)


def reciprocal(x, *, dtype=None, out_dtype=None):
    """1/x per element by the DVE's Newton reciprocal (Reciprocal, semantics.md §3.3)."""
    a, dt = _operand(x, dtype, "x")
    out_dt = dt if out_dtype is None else _dtype_name(out_dtype)
    return _map("recip", (), [(a, dt)], out_dt, [],
                lambda n, L, i, o, s: f"Reciprocal src={_t(i[0], L)} dst={_t(o, L)} "
                                      f"in_dtype={dt} out_dtype={out_dt} n={n}")


def bn_backprop(x, dy, mean, a, b, c, n=None, *, dtype=None, out_dtype=None):
    """dx = (dy·N − ((x − mean)·C + B))·A per element: ParamLoad2 loads each lane's (N, mean,
    A, B, C), then BackProp. With A = γ·vf/N, B = Σdy, C = Σdy·(x−μ)·vf² (GradAccum sums s0, s2)
    this is the batch-norm input gradient. N defaults to the element count."""
    x0, dt0 = _operand(x, dtype, "x")
    x1, dt1 = _operand(dy, dtype, "dy")
    channels, elements = x0.shape
    count = float(elements if n is None else n)
    out_dt = dt0 if out_dtype is None else _dtype_name(out_dtype)
    scalars = [(_per_channel(mean, channels, "mean"), "fp32"),
               (_per_channel(a, channels, "a"), "fp32"),
               (np.stack([_per_channel(b, channels, "b")[:, 0],
                          _per_channel(c, channels, "c")[:, 0]], axis=1), "fp32")]

    def body(n_, L, i, o, s):
        return (f"BatchNormParamLoad2 src={_t(s[2], 2)} element_count={_f32(count)} src_dtype=fp32 "
                f"immediate_dtype=fp32 n={n_} imm0_ptr={_a(s[0])} imm1_ptr={_a(s[1])}\n"
                f"BatchNormBackProp in_dtypes={dt0},{dt1} out_dtype={out_dt} n={n_} "
                f"src0={_t(i[0], L)} src1={_t(i[1], L)} dst={_t(o, L)}")
    return _map("backprop", (_f32(count),), [(x0, dt0), (x1, dt1)], out_dt, scalars, body)


# ---------------------------------------------------------------------------------------------
# Batch-norm statistics

def _stats2_text(n, dt, x_off, length, stats_off, es):
    lines = []
    for t, (e0, count) in enumerate(_tiles(length, STATS_TILE)):
        lines.append(f"BatchNormStats2 src={_t(x_off + e0 * es, count)} in_dtype={dt} out_dtype=fp32 "
                     f"n={n} even_count={(count + 1) // 2} odd_count={count // 2} "
                     f"dst={_t(stats_off + 24 * t, 6)}")
    return lines


def _aggr_pattern(off, count):
    if count <= 65535:
        return _t(off, count)
    return f"sbuf[0]+{off:#x}[3:1,{count // 3}:3]"


def bn_stats(x, *, dtype=None):
    """BatchNormStats2 per 512-element tile: (C, 6·tiles) fp32, each tile's
    [even_count, mean_even, m2_even, odd_count, mean_odd, m2_odd] (nki.isa.bn_stats, tiled)."""
    a, dt = _operand(x, dtype, "x")
    ctx = _context()
    channels, elements = a.shape
    es = _size(dt)
    tiles = -(-elements // STATS_TILE)
    out = np.empty((channels, 6 * tiles), np.float32)
    step = _pass_len(ctx, es + 1)  # + 24 bytes per 512 elements of statistics
    for c0, n in _chunks(channels, PARTITIONS):
        for e0, length in _chunks(elements, step):
            def build(n=n, length=length):
                lay = _Layout(ctx.capacity, n)
                x_off = lay.region("in0", dt, length)
                s_off = lay.region("stats", "fp32", 6 * (-(-length // STATS_TILE)))
                return "\n".join(_stats2_text(n, dt, x_off, length, s_off, es)), lay.views
            k = ctx.kernel(("bn_stats", n, length, dt), build)
            k.views["in0"][...] = a[c0:c0 + n, e0:e0 + length]
            ctx.run(k)
            t0 = e0 // STATS_TILE
            out[c0:c0 + n, 6 * t0:6 * t0 + k.views["stats"].shape[1]] = k.views["stats"]
    return out


def bn_aggr(stats, *, dtype=None, out_dtype="fp32"):
    """BatchNormAggregate: (count, mean, m2) tuples (C, 3k) -> (C, 2) [mean, var] (nki.isa.bn_aggr)."""
    a, dt = _operand(stats, dtype, "stats")
    out_dt = _dtype_name(out_dtype)
    count = a.shape[1]
    return _per_channel_block("bn_aggr", a, dt, out_dt, 2, lambda n, s_off, o_off: (
        f"BatchNormAggregate src={_aggr_pattern(s_off, count)} in_dtype={dt} "
        f"out_dtype={out_dt} n={n} dst={_t(o_off, 2)}"))


def batch_norm_stats(x, *, dtype=None):
    """(mean, var) per channel, fp32 (C,) each: Stats2 over 512-element tiles, then Aggregate —
    one program when the channel fits one pass, else bn_stats passes and one bn_aggr."""
    a, dt = _operand(x, dtype, "x")
    ctx = _context()
    channels, elements = a.shape
    es = _size(dt)
    if elements > _pass_len(ctx, es + 1):
        mv = bn_aggr(bn_stats(a, dtype=dt))
        return mv[:, 0].copy(), mv[:, 1].copy()
    mean = np.empty(channels, np.float32)
    var = np.empty(channels, np.float32)
    tiles = -(-elements // STATS_TILE)
    for c0, n in _chunks(channels, PARTITIONS):
        def build(n=n):
            lay = _Layout(ctx.capacity, n)
            mv = lay.scalar("mv", 2)
            x_off = lay.region("in0", dt, elements)
            s_off = lay.region(None, "fp32", 6 * tiles)
            lines = _stats2_text(n, dt, x_off, elements, s_off, es)
            lines.append(f"BatchNormAggregate src={_t(s_off, 6 * tiles)} in_dtype=fp32 out_dtype=fp32 "
                         f"n={n} dst={_t(mv, 2)}")
            return "\n".join(lines), lay.views
        k = ctx.kernel(("bn_meanvar", n, elements, dt), build)
        k.views["in0"][...] = a[c0:c0 + n]
        ctx.run(k)
        mv = k.views["mv"]
        mean[c0:c0 + n] = mv[:, 0]
        var[c0:c0 + n] = mv[:, 1]
    return mean, var


# ---------------------------------------------------------------------------------------------
# Batch-norm gradients

def _grad_text(n, dts, x_off, dy_off, length, es, mean_off, vf_off, sums_off, total_off):
    """es: (x element size, dy element size)."""
    """GradAccum2 per 512-element tile into sums + 12t, TensorTensor adds into tile 0's slot,
    and with total_off, total += slot 0."""
    lines = []
    tiles = _tiles(length, STATS_TILE)
    for t, (e0, count) in enumerate(tiles):
        lines.append(f"BatchNormGradAccumulate2 imm0={_a(mean_off)} imm1={_a(vf_off)} "
                     f"src0={_t(x_off + e0 * es[0], count)} src1={_t(dy_off + e0 * es[1], count)} "
                     f"dst={_t(sums_off + 12 * t, 3)} in_dtypes={dts[0]},{dts[1]} "
                     f"imm_out_dtypes=fp32,fp32 imm_srcs=ptr,ptr n={n}")
    for t in range(1, len(tiles)):
        lines.append(f"TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add n={n} "
                     f"src0={_t(sums_off, 3)} src1={_t(sums_off + 12 * t, 3)} dst={_t(sums_off, 3)}")
    if total_off is not None:
        lines.append(f"TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add n={n} "
                     f"src0={_t(total_off, 3)} src1={_t(sums_off, 3)} dst={_t(total_off, 3)}")
    return lines


def bn_grad_accum(x, dy, mean, vf, *, dtype=None):
    """GradAccum2 sums per channel, (C, 3) fp32: [Σdy, Σdy·x̂, Σdy·(x−μ)·vf²] with x̂ = (x−μ)·vf,
    over 512-element tiles combined by TensorTensor adds (and across passes on the device)."""
    x0, dt0 = _operand(x, dtype, "x")
    x1, dt1 = _operand(dy, dtype, "dy")
    if x0.shape != x1.shape:
        raise usage_error(f"bn_grad_accum: x {x0.shape} and dy {x1.shape} differ")
    ctx = _context()
    channels, elements = x0.shape
    mean = _per_channel(mean, channels, "mean")
    vf = _per_channel(vf, channels, "vf")
    es = (_size(dt0), _size(dt1))
    step = _pass_len(ctx, es[0] + es[1] + 1)
    passes = list(_chunks(elements, step))
    multi = len(passes) > 1
    out = np.empty((channels, 3), np.float32)
    for c0, n in _chunks(channels, PARTITIONS):
        for p, (e0, length) in enumerate(passes):
            def build(n=n, length=length):
                lay = _Layout(ctx.capacity, n)
                m_off, v_off = lay.scalar("s0"), lay.scalar("s1")
                total = lay.scalar("total", 3)
                x_off = lay.region("in0", dt0, length)
                dy_off = lay.region("in1", dt1, length)
                sums = lay.region("sums", "fp32", 3 * len(_tiles(length, STATS_TILE)))
                text = _grad_text(n, (dt0, dt1), x_off, dy_off, length, es, m_off, v_off, sums,
                                  total if multi else None)
                return "\n".join(text), lay.views
            k = ctx.kernel(("bn_grad", n, length, dt0, dt1, multi), build)
            v = k.views
            if p == 0:
                v["s0"][...] = mean[c0:c0 + n]
                v["s1"][...] = vf[c0:c0 + n]
                v["total"][...] = 0
            v["in0"][...] = x0[c0:c0 + n, e0:e0 + length]
            v["in1"][...] = x1[c0:c0 + n, e0:e0 + length]
            ctx.run(k)
        out[c0:c0 + n] = k.views["total"] if multi else k.views["sums"][:, :3]
    return out


# ---------------------------------------------------------------------------------------------
# Fused batch-norm forward / backward (what dvejit.torch runs)

def _coef_text(n, eps, mv, ve, vf, gamma, beta, s, ms, t):
    """vf = rsqrt(var + eps); s = γ·vf; t = β − mean·s (torch's linear form y = x·s + t)."""
    def tt(a, b, dst, op):
        return (f"TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op={op} n={n} "
                f"src0={_t(a, 1)} src1={_t(b, 1)} dst={_t(dst, 1)}")
    return [
        f"TensorScalarArith src={_t(mv + 4, 1)} dst={_t(ve, 1)} in_dtype=fp32 out_dtype=fp32 n={n} "
        f"op0=add imm0={_f32(eps)} op1=bypass",
        f"TensorScalarArith src={_t(ve, 1)} dst={_t(vf, 1)} in_dtype=fp32 out_dtype=fp32 n={n} "
        f"op0=rsqrt op1=bypass",
        tt(gamma, vf, s, "mult"),
        tt(mv, s, ms, "mult"),
        tt(beta, ms, t, "subtract"),
    ]


def _fwd_scalars(lay):
    return dict(mv=lay.scalar("mv", 2), ve=lay.scalar(None), vf=lay.scalar("vf"),
                gamma=lay.scalar("gamma"), beta=lay.scalar("beta"), s=lay.scalar("s"),
                ms=lay.scalar(None), t=lay.scalar("t"))


def batch_norm_forward(x, gamma=None, beta=None, eps=1e-5, *, mean=None, var=None, dtype=None,
                       out_dtype=None):
    """Batch norm of (C, E) data: y = x·s + t with s = γ·vf, t = β − mean·s, vf = rsqrt(var+eps).

    Training (mean and var not given): mean and the biased var come from Stats2 + Aggregate.
    Inference: the given mean/var (running statistics) are used. Returns (y, mean, var, vf),
    the last three fp32 (C,). One program per 128 channels when a channel fits one pass."""
    a, dt = _operand(x, dtype, "x")
    out_dt = dt if out_dtype is None else _dtype_name(out_dtype)
    ctx = _context()
    channels, elements = a.shape
    training = mean is None
    if training != (var is None):
        raise usage_error("batch_norm_forward: give both mean and var (inference) or neither")
    g = _per_channel(1.0 if gamma is None else gamma, channels, "gamma")
    b = _per_channel(0.0 if beta is None else beta, channels, "beta")
    es, eo = _size(dt), _size(out_dt)
    fused = elements <= _pass_len(ctx, es + eo + 1)
    if training and not fused:
        mean, var = batch_norm_stats(a, dtype=dt)
    if not training or not fused:
        mv_in = np.stack([_per_channel(mean, channels, "mean")[:, 0],
                          _per_channel(var, channels, "var")[:, 0]], axis=1)
    y = np.empty((channels, elements), _np_dtype(out_dt))
    mean_out = np.empty(channels, np.float32)
    var_out = np.empty(channels, np.float32)
    vf_out = np.empty(channels, np.float32)
    eps_key = _f32(eps)
    for c0, n in _chunks(channels, PARTITIONS):
        if fused:
            def build(n=n):
                lay = _Layout(ctx.capacity, n)
                sc = _fwd_scalars(lay)
                x_off = lay.region("in0", dt, elements)
                y_off = lay.region("out", out_dt, elements)
                lines = []
                if training:
                    s_off = lay.region(None, "fp32", 6 * (-(-elements // STATS_TILE)))
                    lines = _stats2_text(n, dt, x_off, elements, s_off, es)
                    lines.append(f"BatchNormAggregate src={_t(s_off, 6 * (-(-elements // STATS_TILE)))} "
                                 f"in_dtype=fp32 out_dtype=fp32 n={n} dst={_t(sc['mv'], 2)}")
                lines += _coef_text(n, eps, **sc)
                lines.append(f"TensorScalarArith src={_t(x_off, elements)} dst={_t(y_off, elements)} "
                             f"in_dtype={dt} out_dtype={out_dt} n={n} op0=mult imm0={_a(sc['s'])} "
                             f"op1=add imm1={_a(sc['t'])}")
                return "\n".join(lines), lay.views
            k = ctx.kernel(("bn_fwd", n, elements, dt, out_dt, training, eps_key), build)
            v = k.views
            v["gamma"][...] = g[c0:c0 + n]
            v["beta"][...] = b[c0:c0 + n]
            if not training:
                v["mv"][...] = mv_in[c0:c0 + n]
            v["in0"][...] = a[c0:c0 + n]
            ctx.run(k)
            y[c0:c0 + n] = v["out"]
        else:
            def build_coef(n=n):
                lay = _Layout(ctx.capacity, n)
                sc = _fwd_scalars(lay)
                return "\n".join(_coef_text(n, eps, **sc)), lay.views
            k = ctx.kernel(("bn_coef", n, eps_key), build_coef)
            v = k.views
            v["gamma"][...] = g[c0:c0 + n]
            v["beta"][...] = b[c0:c0 + n]
            v["mv"][...] = mv_in[c0:c0 + n]
            ctx.run(k)
            s, t = v["s"][:, 0].copy(), v["t"][:, 0].copy()
        # (read the results before another op reuses the machine's memory)
        mean_out[c0:c0 + n] = v["mv"][:, 0]
        var_out[c0:c0 + n] = v["mv"][:, 1]
        vf_out[c0:c0 + n] = v["vf"][:, 0]
        if not fused:
            y[c0:c0 + n] = tensor_scalar(a[c0:c0 + n], "mult", s, op1="add", operand1=t, dtype=dt,
                                         out_dtype=out_dt)
    return y, mean_out, var_out, vf_out


def batch_norm_backward(x, dy, mean, vf, gamma=None, *, training=True, dtype=None, out_dtype=None):
    """Gradients of batch norm over (C, E) data: (dx, dgamma, dbeta), dgamma/dbeta fp32 (C,).

    Training: GradAccum2 tiles → TensorTensor adds → A = γ·vf/N (TensorTensor, TensorScalar) →
    ParamLoad2 (N, mean, A, B = Σdy, C = Σdy·(x−μ)·vf²) → BackProp: one program per 128
    channels when a channel fits one pass (the chain of semantics.md §5.6).
    Inference statistics (training=False): dx = dy·γ·vf (TensorScalar), the sums as above."""
    x0, dt0 = _operand(x, dtype, "x")
    x1, dt1 = _operand(dy, dtype, "dy")
    if x0.shape != x1.shape:
        raise usage_error(f"batch_norm_backward: x {x0.shape} and dy {x1.shape} differ")
    if dt0 != dt1:
        raise usage_error("batch_norm_backward: x and dy must have one dtype")
    dt = dt0
    out_dt = dt if out_dtype is None else _dtype_name(out_dtype)
    ctx = _context()
    channels, elements = x0.shape
    m = _per_channel(mean, channels, "mean")
    f = _per_channel(vf, channels, "vf")
    g = _per_channel(1.0 if gamma is None else gamma, channels, "gamma")
    es, eo = _size(dt), _size(out_dt)
    fused = elements <= _pass_len(ctx, 2 * es + eo + 1)
    if not fused:
        return _batch_norm_backward_passes(x0, x1, m, f, g, dt, out_dt, training)
    dx = np.empty((channels, elements), _np_dtype(out_dt))
    sums = np.empty((channels, 3), np.float32)
    inv_n = np.float32(1.0 / elements)
    for c0, n in _chunks(channels, PARTITIONS):
        def build(n=n):
            lay = _Layout(ctx.capacity, n)
            m_off, f_off, g_off = lay.scalar("mean"), lay.scalar("vf"), lay.scalar("gamma")
            gv, a_off = lay.scalar(None), lay.scalar(None)
            x_off = lay.region("in0", dt, elements)
            dy_off = lay.region("in1", dt, elements)
            dx_off = lay.region("out", out_dt, elements)
            s_off = lay.region("sums", "fp32", 3 * len(_tiles(elements, STATS_TILE)))
            lines = _grad_text(n, (dt, dt), x_off, dy_off, elements, (es, es), m_off, f_off, s_off,
                               None)
            lines.append(f"TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=mult n={n} "
                         f"src0={_t(g_off, 1)} src1={_t(f_off, 1)} dst={_t(gv, 1)}")
            if training:
                lines.append(f"TensorScalarArith src={_t(gv, 1)} dst={_t(a_off, 1)} in_dtype=fp32 "
                             f"out_dtype=fp32 n={n} op0=mult imm0={_f32(inv_n)} op1=bypass")
                lines.append(f"BatchNormParamLoad2 src={_t(s_off, 2, 2)} element_count={_f32(elements)} "
                             f"src_dtype=fp32 immediate_dtype=fp32 n={n} imm0_ptr={_a(m_off)} "
                             f"imm1_ptr={_a(a_off)}")
                lines.append(f"BatchNormBackProp in_dtypes={dt},{dt} out_dtype={out_dt} n={n} "
                             f"src0={_t(x_off, elements)} src1={_t(dy_off, elements)} "
                             f"dst={_t(dx_off, elements)}")
            else:
                lines.append(f"TensorScalarArith src={_t(dy_off, elements)} dst={_t(dx_off, elements)} "
                             f"in_dtype={dt} out_dtype={out_dt} n={n} op0=mult imm0={_a(gv)} op1=bypass")
            return "\n".join(lines), lay.views
        k = ctx.kernel(("bn_bwd", n, elements, dt, out_dt, training), build)
        v = k.views
        v["mean"][...] = m[c0:c0 + n]
        v["vf"][...] = f[c0:c0 + n]
        v["gamma"][...] = g[c0:c0 + n]
        v["in0"][...] = x0[c0:c0 + n]
        v["in1"][...] = x1[c0:c0 + n]
        ctx.run(k)
        dx[c0:c0 + n] = v["out"]
        sums[c0:c0 + n] = v["sums"][:, :3]
    return dx, sums[:, 1].copy(), sums[:, 0].copy()


def _batch_norm_backward_passes(x0, x1, m, f, g, dt, out_dt, training):
    """The same chain when a channel needs several passes: sums first (accumulated on the
    device), then A, then ParamLoad2 + BackProp per pass."""
    channels, elements = x0.shape
    sums = bn_grad_accum(x0, x1, m, f, dtype=dt)
    gv = tensor_tensor(g.reshape(channels, 1), f.reshape(channels, 1), "mult")
    if not training:
        dx = tensor_scalar(x1, "mult", gv[:, 0], dtype=dt, out_dtype=out_dt)
    else:
        a = tensor_scalar(gv, "mult", np.float32(1.0 / elements))
        dx = bn_backprop(x0, x1, m, a, sums[:, 0], sums[:, 2], n=elements, dtype=dt,
                         out_dtype=out_dt)
    return dx, sums[:, 1].copy(), sums[:, 0].copy()


# ---------------------------------------------------------------------------------------------
# Search

def max8(x, *, dtype=None, out_dtype="fp32"):
    """The 8 largest values per channel in ascending order (Max8), (C, 8). More than 16384
    elements: Max8 per tile, then Max8 over the tiles' results."""
    a, dt = _operand(x, dtype, "x")
    out_dt = _dtype_name(out_dtype)
    channels, elements = a.shape
    if elements > SEARCH_MAX:
        tiles = _balanced(elements, SEARCH_MAX)
        cands = np.concatenate([max8(a[:, e0:e0 + cnt], dtype=dt) for e0, cnt in tiles], axis=1)
        return max8(cands, dtype="fp32", out_dtype=out_dt)
    return _per_channel_block("max8", a, dt, out_dt, 8, lambda n, x_off, o_off: (
        f"Max8 src={_t(x_off, elements)} in_dtype={dt} out_dtype={out_dt} n={n} "
        f"dst={_t(o_off, 8)}"))


def find_index8(x, keys, *, dtype=None, out_dtype="uint32"):
    """For each of 8 keys per channel, the index of its first match (MatchValueLoad +
    FindIndex8); equal keys take successive matches; 0xFFFFFFFF (0xFFFF for uint16) when none.
    keys: (C, 8) or (8,). More than 16384 elements: per tile, keys already matched disabled."""
    a, dt = _operand(x, dtype, "x")
    out_dt = _dtype_name(out_dtype)
    if out_dt not in ("uint32", "uint16"):
        raise usage_error(f"find_index8: out_dtype = {out_dt}, expected uint32 or uint16")
    ctx = _context()
    channels, elements = a.shape
    kv = _per_channel(keys, channels, "keys", width=8)
    found = np.full((channels, 8), _SENTINEL, np.uint32)
    tiles = _balanced(elements, SEARCH_MAX)
    for c0, n in _chunks(channels, PARTITIONS):
        active = np.array(kv[c0:c0 + n], dtype=np.float32)
        for e0, count in tiles:
            def build(n=n, count=count):
                lay = _Layout(ctx.capacity, n)
                k_off = lay.region("keys", "fp32", 8)
                x_off = lay.region("in0", dt, count)
                o_off = lay.region("out", "uint32", 8)
                return (f"MatchValueLoad src={_t(k_off, 8)} dtype=fp32 n={n}\n"
                        f"FindIndex8 src={_t(x_off, count)} in_dtype={dt} out_dtype=uint32 n={n} "
                        f"dst={_t(o_off, 8)}"), lay.views
            k = ctx.kernel(("find8", n, count, dt), build)
            k.views["keys"][...] = active
            k.views["in0"][...] = a[c0:c0 + n, e0:e0 + count]
            ctx.run(k)
            local = k.views["out"]
            hit = local != _SENTINEL
            found[c0:c0 + n][hit] = local[hit] + np.uint32(e0)
            active[hit] = np.nan     # a NaN key never matches: later tiles skip matched keys
            if len(tiles) > 1 and np.isnan(active).all():
                break
    if out_dt == "uint16":
        if elements > 0xFFFF:
            raise usage_error(f"find_index8: {elements} elements do not fit uint16 indices")
        return np.where(found == _SENTINEL, 0xFFFF, found).astype(np.uint16)
    return found


__all__ = [
    "tensor_scalar", "tensor_tensor", "reciprocal", "bn_stats", "bn_aggr", "batch_norm_stats",
    "bn_grad_accum", "bn_backprop", "batch_norm_forward", "batch_norm_backward", "max8",
    "find_index8", "machine", "set_generation", "set_tier", "tier", "set_threads", "threads",
    "clear_cache", "cache_info",
]
