"""dvejit: the AWS Neuron DVE vector engine emulated on the CPU, from Python.

    import dvejit, numpy as np
    m = dvejit.Machine()                      # gen="cayman", profile="contract"
    m.preload_reciprocals()                   # Parameter RAM k = 1/(k+1) (Stats2 needs it)
    x = m.sbuf(0, 4, 0x0, "fp32", 512)        # a (4, 512) float32 view of SBUF, no copy
    x[:] = np.random.rand(4, 512)
    report = m.run('''
        BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=4 even_count=256 odd_count=256 dst=sbuf[0]+0x1000[6:1]
        BatchNormAggregate src=sbuf[0]+0x1000[6:1] in_dtype=fp32 out_dtype=fp32 n=4 dst=sbuf[0]+0x1100[2:1]
    ''')
    mean_var = m.sbuf(0, 4, 0x1100, "fp32", 2)

The machine and the assembler live in the C++ extension `dvejit._dvejit`; everything it
exports is re-exported here. `dvejit.ops` has eager NumPy ops (bn_stats, tensor_scalar, ...) and
`dvejit.torch` a batch-norm layer for PyTorch whose statistics and backward run on dvejit.

Views (`Machine.sbuf`, `Machine.psum`, `Machine.registers`, `Machine.param_ram`) alias the
machine's memory: writes through them are what the next run reads, and each view keeps its
machine alive. bf16 and fp8 data are exchanged as raw uint16 / uint8 bits; `to_bf16`,
`from_bf16`, `to_fp8`, `from_fp8` convert with the spec's rounding (semantics.md §3.2).

Errors are `DvejitError` subclasses, one per kind of the spec's error model: `DecodeError`,
`InvalidError` (`.predicate` names the failed check of validation.md), `UnsupportedError`,
`ExecutionError` (kind "runtime"; `.executed` counts completed instructions), `AsmSyntaxError`
and `UsageError` (bad API arguments; both also ValueError).
"""

from . import _dvejit
from ._dvejit import (  # noqa: F401  (re-exports)
    AsmSyntaxError,
    DecodeError,
    DvejitError,
    ExecutionError,
    InvalidError,
    Machine,
    Program,
    UnsupportedError,
    UsageError,
    alu_op_names,
    assemble,
    decode,
    disassemble,
    dtype_name,
    dtype_size,
    encode,
    numpy_dtype,
    partition_stride,
    tiers,
    validate,
)

__version__ = "0.1.0"
PARTITIONS = _dvejit.PARTITIONS

_FP8 = {"e4m3": "fp8e4", "e5m2": "fp8e5", "e3m4": "fp8e3",
        "fp8e4": "fp8e4", "fp8e5": "fp8e5", "fp8e3": "fp8e3"}


def _fp8_name(kind):
    try:
        return _FP8[str(kind).lower()]
    except KeyError:
        raise usage_error(f"fp8 kind = {kind!r}, expected e4m3, e5m2 or e3m4") from None


def to_bf16(x):
    """float values (any float array) -> raw bf16 bits (uint16), round to nearest even."""
    return encode(x, "bf16")


def from_bf16(raw):
    """raw bf16 bits (uint16) -> float32 (exact)."""
    return decode(raw, "bf16")


def to_fp8(x, kind="e4m3"):
    """float values -> raw fp8 bits (uint8): kind e4m3 (FP8_EXP4), e5m2 (FP8_EXP5), e3m4 (FP8_EXP3),
    with the spec's rounding and saturation."""
    return encode(x, _fp8_name(kind))


def from_fp8(raw, kind="e4m3"):
    """raw fp8 bits (uint8) -> float32 (exact)."""
    return decode(raw, _fp8_name(kind))


def to_fp16(x):
    """float values -> float16 (IEEE, round to nearest even, canonical NaN 0x7E00)."""
    return encode(x, "fp16")


def usage_error(message):
    """A UsageError raised from Python code, shaped like the ones the extension raises."""
    e = UsageError("usage: " + message)
    e.kind, e.predicate, e.message, e.executed = "usage", "", "usage: " + message, None
    return e


from . import ops  # noqa: E402,F401  (needs the names above)

__all__ = [
    "Machine", "Program", "assemble", "disassemble", "validate", "encode", "decode",
    "to_bf16", "from_bf16", "to_fp8", "from_fp8", "to_fp16", "numpy_dtype", "dtype_name",
    "dtype_size", "partition_stride", "alu_op_names", "tiers", "ops", "usage_error",
    "DvejitError", "DecodeError", "InvalidError", "UnsupportedError", "ExecutionError",
    "AsmSyntaxError", "UsageError", "PARTITIONS",
]
