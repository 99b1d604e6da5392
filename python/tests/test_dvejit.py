"""The dvejit Python package: machine, views, assembler, errors, conversions and eager ops.

Eager ops are checked against NumPy: element-wise fp32 ops bit for bit against NumPy float32
arithmetic (IEEE, round to nearest even: what the spec's fp32 hub computes), reductions and the
Newton paths against float64 within the tolerances stated at each test.
"""

import gc
import threading

import numpy as np
import pytest

import dvejit
from dvejit import ops

FWD = """
BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=4 even_count=256 odd_count=256 dst=sbuf[0]+0x1000[6:1]
BatchNormAggregate src=sbuf[0]+0x1000[6:1] in_dtype=fp32 out_dtype=fp32 n=4 dst=sbuf[0]+0x1100[2:1]
"""
ADD1 = "TensorScalarArith src=sbuf[0]+0x0[16:1] dst=sbuf[0]+0x0[16:1] in_dtype=fp32 out_dtype=fp32 n=8 op0=add imm0=1 op1=bypass"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def f64(a):
    return np.asarray(a, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Machine, programs, reports


def test_machine_defaults_and_geometry():
    m = dvejit.Machine()
    assert m.gen == "cayman" and m.profile == "contract"
    assert m.active_bytes("sbuf") == 224 * 1024
    assert m.pitch("sbuf") == m.active_bytes("sbuf") + 64  # rows one cache line apart (HostPitch)
    assert m.active_bytes("psum") == 16 * 1024
    assert dvejit.partition_stride("sbuf", "cayman") == 256 * 1024
    assert dvejit.Machine("maverick").active_bytes("sbuf") == 512 * 1024
    assert "cayman" in repr(m)


def test_assemble_disassemble_round_trip():
    raw = dvejit.assemble(FWD)
    assert isinstance(raw, bytes) and len(raw) == 128
    text = dvejit.disassemble(raw)
    assert text.splitlines()[0].startswith("BatchNormStats2 src=sbuf[0]+0x0[512:1,1:0,1:0,1:0]")
    assert dvejit.assemble(text) == raw
    prog = dvejit.Program(FWD)
    assert len(prog) == 2 and prog.to_bytes() == raw and bytes(prog) == raw
    assert prog.disassemble() == text
    assert dvejit.Program(raw).to_bytes() == raw
    recip = dvejit.assemble(".recip_table")
    assert len(recip) == 32 * 64


def test_validate_accepts_text_bytes_and_programs():
    assert dvejit.validate(FWD) is None
    assert dvejit.validate(dvejit.assemble(FWD)) is None
    assert dvejit.validate(dvejit.Program(FWD), for_execution=True) is None


def test_run_forward_statistics_and_report(rng):
    m = dvejit.Machine()
    m.preload_reciprocals()
    x = rng.normal(size=(4, 512)).astype(np.float32)
    m.sbuf(0, 4, 0, "fp32", 512)[:] = x
    report = m.run(FWD)
    assert report["executed"] == 2
    assert report["per_opcode"] == {"BatchNormStats2": 1, "BatchNormAggregate": 1}
    assert report["warnings"] == [] and report["tier"] in ("interp", "jit")
    assert "executed 2 instructions" in report["summary"]
    mv = m.sbuf(0, 4, 0x1100, "fp32", 2)
    assert np.allclose(mv[:, 0], f64(x).mean(1), rtol=0, atol=1e-6)
    assert np.allclose(mv[:, 1], f64(x).var(1), rtol=1e-5)
    # Programs from bytes and Program objects give the same bytes.
    before = np.array(mv)
    m.run(dvejit.assemble(FWD))
    m.run(dvejit.Program(FWD))
    assert m.execute(dvejit.Program(FWD)) == 2
    assert np.array_equal(mv, before)


def test_run_report_warning_trace_and_device_profile():
    m = dvejit.Machine()
    r = m.run("BatchNormParamLoad src=sbuf[0]+0x0[3:1] imm1=4 dtype=fp32 n=1 imm0_ptr=sbuf[0]+0x40",
              trace=True)
    assert any("deprecated" in w for w in r["warnings"])
    assert r["trace"][0]["name"] == "BatchNormParamLoad"
    d = dvejit.Machine(profile="device")
    r = d.run("TensorScalarImmLdArith src=sbuf[0]+0x0[2:1] dtype=fp32 n=1")
    assert r["device_noops"] == 1


def test_tiers_agree(rng):
    x = rng.normal(size=(8, 16)).astype(np.float32)
    results = {}
    for tier in ("interp", "auto", "jit"):
        m = dvejit.Machine()
        m.sbuf(0, 8, 0, "fp32", 16)[:] = x
        try:
            for _ in range(3):
                report = m.run(ADD1, tier=tier)
        except dvejit.UnsupportedError:   # a build without the JIT
            continue
        results[tier] = (np.array(m.sbuf(0, 8, 0, "fp32", 16)), report["tier"])
    assert "interp" in results
    for tier, (val, ran) in results.items():
        assert np.array_equal(val, ((x + np.float32(1)) + np.float32(1)) + np.float32(1)), tier
        assert ran in ("interp", "jit")
    with pytest.raises(dvejit.UsageError):
        dvejit.Machine().run(ADD1, tier="fast")


def test_threads_give_the_same_bits(rng):
    # 128 channels x 2048 fp32 elements, two TensorScalar ops: one compiled region of 8 channel
    # blocks that moves 4 MiB, split across the machine's threads; the bits do not change.
    x = rng.normal(size=(128, 2048)).astype(np.float32)
    prog = dvejit.Program(
        "TensorScalarArith src=sbuf[0]+0x0[2048:1] dst=sbuf[0]+0x2000[2048:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=mult imm0=3 op1=add imm1=0.5\n"
        "TensorScalarArith src=sbuf[0]+0x2000[2048:1] dst=sbuf[0]+0x4000[2048:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=subtract imm0=1 op1=bypass\n")
    expect = (x * np.float32(3) + np.float32(0.5)) - np.float32(1)
    for threads in (1, 2, 3):
        m = dvejit.Machine(threads=threads)
        assert m.threads == threads
        m.sbuf(0, 128, 0, "fp32", 2048)[:] = x
        try:
            report = m.run(prog, tier="jit")
        except dvejit.UnsupportedError:   # a build without the JIT
            pytest.skip("no JIT")
        assert report["tier"] == "jit" and report["jit_threads"] == threads
        assert np.array_equal(m.sbuf(0, 128, 0x4000, "fp32", 2048), expect), threads
    m = dvejit.Machine()
    assert m.threads == 1
    m.threads = 4
    assert m.threads == 4
    # Eager ops on threads: the same bits.
    saved = ops.tier()
    try:
        ops.set_tier("jit")
        one = ops.tensor_scalar(x, "mult", 3.0, False, "add", 0.5, False)
        ops.set_threads(2)
        assert ops.threads() == 2 and ops.machine().threads == 2
        two = ops.tensor_scalar(x, "mult", 3.0, False, "add", 0.5, False)
        assert np.array_equal(one, two)
        for bad in (0, 257, 1.5, True):
            with pytest.raises(dvejit.UsageError):
                ops.set_threads(bad)
    finally:
        ops.set_threads(1)
        ops.set_tier(saved)


# ---------------------------------------------------------------------------------------------
# Zero-copy views


def test_sbuf_view_is_zero_copy_and_strided(rng):
    m = dvejit.Machine()
    v = m.sbuf(2, 8, 0x40, "fp32", 16)
    assert v.shape == (8, 16) and v.dtype == np.float32
    assert v.strides == (m.pitch("sbuf"), 4)
    assert not v.flags.owndata and v.flags.writeable
    w = m.sbuf(2, 8, 0x40, np.float32, 16)
    assert np.shares_memory(v, w)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    v[:] = x                                   # write through the view ...
    assert np.array_equal(m.read("sbuf", 2, 8, 0x40, "fp32", 16), x)
    m.run(ADD1.replace("sbuf[0]+0x0", "sbuf[2]+0x40"))
    assert np.array_equal(v, x + 1)            # ... the run sees it, and the view sees the run
    m.write("sbuf", 2, 0x40, np.zeros((8, 16), np.float32))
    assert not v.any()


def test_view_keeps_machine_alive_and_survives_reset():
    m = dvejit.Machine()
    v = m.sbuf(0, 2, 0, "int32", 4)
    v[:] = 7
    m.reset()
    assert not v.any()                          # memory reused, view still valid
    v[:] = 5
    del m
    gc.collect()
    assert (v == 5).all()                       # the array's base holds the machine
    v += 1
    assert (v == 6).all()


def test_psum_bf16_fp8_views():
    m = dvejit.Machine()
    p = m.psum(0, 128, 0, "fp32", 8)
    p[:] = 1.5
    assert np.array_equal(m.read("psum", 127, 1, 0, "fp32", 8), np.full((1, 8), 1.5, np.float32))
    b = m.sbuf(0, 1, 0, "bf16", 4)
    assert b.dtype == np.uint16
    assert m.sbuf(0, 1, 0, "fp8e4", 4).dtype == np.uint8
    with pytest.raises(dvejit.UsageError):
        dvejit.Machine("maverick").psum(0, 1, 0, "fp32", 1)


def test_registers_and_param_ram_views():
    m = dvejit.Machine()
    regs = m.registers
    assert regs.shape == (64,) and regs.dtype == np.uint32
    regs[5] = 0xDEADBEEF
    assert m.get_register(5) == 0xDEADBEEF
    m.set_register(6, 42)
    assert regs[6] == 42
    pram = m.param_ram
    assert pram.shape == (256,) and not pram.any()
    m.preload_reciprocals()
    assert pram[0] == 1.0 and pram[2] == np.float32(1 / 3) and pram[255] == np.float32(1 / 256)
    m.set_param_ram(3, 2.5)
    assert m.get_param_ram(3) == 2.5 and pram[3] == 2.5
    lane = m.lane(0)
    assert lane["idx"] == [0xFFFFFFFF] * 8 and lane["bn"] == (0, 0, 0, 0, 0)


def test_register_addressed_copy_uses_register_view():
    m = dvejit.Machine()
    m.sbuf(0, 1, 0, "fp32", 4)[:] = [1, 2, 3, 4]
    m.registers[7] = 0x100  # sbuf[0]+0x100
    m.run("Copy src=sbuf[0]+0x0[4:1] dst=reg(7)[4:1] in_dtype=fp32 out_dtype=fp32 n=1")
    assert np.array_equal(m.sbuf(0, 1, 0x100, "fp32", 4), [[1, 2, 3, 4]])


# ---------------------------------------------------------------------------------------------
# Errors


def test_error_classes():
    for cls in (dvejit.DecodeError, dvejit.InvalidError, dvejit.UnsupportedError,
                dvejit.ExecutionError, dvejit.AsmSyntaxError, dvejit.UsageError):
        assert issubclass(cls, dvejit.DvejitError)
    assert issubclass(dvejit.UsageError, ValueError)
    assert issubclass(dvejit.AsmSyntaxError, ValueError)


def test_decode_errors():
    m = dvejit.Machine()
    with pytest.raises(dvejit.DecodeError) as e:
        m.run(b"\x00" * 63)
    assert e.value.kind == "decode" and "multiple of 64" in str(e.value)
    with pytest.raises(dvejit.DecodeError):
        dvejit.disassemble(bytes([0xFE, 0x10]) + bytes(62))


def test_syntax_error():
    with pytest.raises(dvejit.AsmSyntaxError) as e:
        dvejit.assemble("BatchNormStats2 in_dtype=fp33")
    assert str(e.value).startswith("syntax: line 1, column")
    assert "fp33" in str(e.value) and e.value.kind == "syntax"


def test_invalid_error_names_the_predicate():
    bad = FWD.replace("[512:1]", "[600:1]")
    with pytest.raises(dvejit.InvalidError) as e:
        dvejit.validate(bad)
    assert e.value.predicate == "has_bnstats2_src_element_cnt"
    assert "#0 @0x0 BatchNormStats2 (0x61)" in str(e.value)
    m = dvejit.Machine()
    v = m.sbuf(0, 4, 0x1000, "fp32", 6)
    v[:] = 3
    with pytest.raises(dvejit.InvalidError):
        m.run(bad)
    assert (v == 3).all()                                   # an invalid program changes nothing


def test_unsupported_error():
    with pytest.raises(dvejit.UnsupportedError) as e:
        dvejit.Machine().run("Exponential")
    assert e.value.predicate == "opcode_supported"


def test_execution_errors_carry_executed_count():
    m = dvejit.Machine()
    m.registers[7] = 0xFFFFFFF0          # not an SBUF/PSUM address
    prog = ADD1 + "\nCopy src=sbuf[0]+0x0[4:1] dst=reg(7)[4:1] in_dtype=fp32 out_dtype=fp32 n=1"
    with pytest.raises(dvejit.ExecutionError) as e:
        m.run(prog)
    assert e.value.kind == "runtime" and e.value.predicate == "register_address_valid"
    assert e.value.executed == 1
    assert (m.sbuf(0, 8, 0, "fp32", 16) == 1).all()         # the first instruction ran
    with pytest.raises(dvejit.ExecutionError) as e:
        m.run(ADD1.replace("TensorScalarArith", "TensorScalarArith wait=SEM_GE_IMM:1 semval=1"),
              strict_events=True)
    assert e.value.predicate == "event_wait_satisfiable" and e.value.executed == 0


def test_usage_errors():
    m = dvejit.Machine()
    cases = [
        lambda: dvejit.Machine("tpu"),
        lambda: dvejit.Machine(profile="fast"),
        lambda: m.sbuf(120, 10, 0, "fp32", 4),
        lambda: m.sbuf(0, 1, m.active_bytes("sbuf") - 4, "fp32", 2),
        lambda: m.sbuf(0, 1, 2, "fp32", 1),
        lambda: m.sbuf(0, 1, 0, "complex64", 1),
        lambda: m.set_register(64, 1),
        lambda: m.get_param_ram(256),
        lambda: m.run(12345),
        lambda: m.write("sbuf", 0, m.active_bytes("sbuf"), np.zeros(4, np.uint8)),
        lambda: dvejit.to_fp8(np.zeros(2), "e2m5"),
        lambda: dvejit.Machine(threads=0),
        lambda: dvejit.Machine(threads=257),
        lambda: setattr(m, "threads", 0),
    ]
    for case in cases:
        with pytest.raises(dvejit.UsageError):
            case()


def test_errors_never_kill_the_interpreter():
    m = dvejit.Machine()
    for junk in (b"\xff" * 64, b"\x61" + bytes(63), "LoadParameterRam param_ram_offset=255",
                 bytes(range(256)) * 4):
        with pytest.raises(dvejit.DvejitError):
            m.run(junk)
    assert m.run(ADD1)["executed"] == 1


# ---------------------------------------------------------------------------------------------
# Conversions (semantics.md §3.2)


def test_bf16_round_to_nearest_even():
    vals = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 3.4e38, np.inf, np.nan, 1e-40],
                    np.float32)
    raw = dvejit.to_bf16(vals)
    assert raw.dtype == np.uint16
    assert list(raw[:6]) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0x7F80]
    assert raw[6] == 0x7FC0                                   # canonical NaN
    back = dvejit.from_bf16(raw)
    assert back.dtype == np.float32 and back[3] == -2.5
    x = np.random.default_rng(0).normal(size=1000).astype(np.float32) * 100
    expect = ((x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    assert np.array_equal(dvejit.to_bf16(x), expect)
    assert np.array_equal(dvejit.to_bf16(x.reshape(10, 100)).shape, (10, 100))


def test_fp8_conversions():
    e4 = dvejit.to_fp8(np.array([1.0, 448.0, 1000.0, -np.inf, np.nan, 0.3], np.float32), "e4m3")
    assert list(e4[:5]) == [0x38, 0x7E, 0x7E, 0xFE, 0x7F]
    assert dvejit.from_fp8(e4, "e4m3")[1] == 448.0
    e5 = dvejit.to_fp8(np.array([np.inf, 1e6, 1.0], np.float32), "e5m2")
    assert list(e5) == [0x7C, 0x7B, 0x3C]
    for kind in ("e4m3", "e5m2", "e3m4"):
        codes = np.arange(256, dtype=np.uint8)
        vals = dvejit.from_fp8(codes, kind)
        ok = ~np.isnan(vals)
        assert np.array_equal(dvejit.to_fp8(vals[ok], kind), codes[ok]), kind


def test_encode_decode_generic():
    x = np.array([-1.7, 0.5, 300.2], np.float32)
    assert list(dvejit.encode(x, "int8")) == [-1, 0, 127]          # truncate, saturate
    assert dvejit.decode(dvejit.encode(x, "fp16"), "fp16").dtype == np.float32
    with pytest.raises(dvejit.UsageError):
        dvejit.decode(np.zeros(3, np.uint8), "bf16")                 # wrong item size


# ---------------------------------------------------------------------------------------------
# Eager ops


def test_tensor_scalar_exact_vs_numpy_float32(rng):
    x = rng.normal(size=(5, 300)).astype(np.float32)
    a = rng.normal(size=5).astype(np.float32)
    b = np.float32(0.75)
    got = ops.tensor_scalar(x, "subtract", a, op1=np.multiply, operand1=b)
    assert np.array_equal(got, (x - a[:, None]) * b)
    got = ops.tensor_scalar(x, np.add, 2.0, reverse0=True)
    assert np.array_equal(got, x + np.float32(2))
    got = ops.tensor_scalar(x, "subtract", a, reverse0=True, op1="max", operand1=0.0)
    assert np.array_equal(got, np.maximum(a[:, None] - x, 0))
    got = ops.tensor_scalar(x, "mult", 3.0, op1="subtract", operand1=1.0, reverse1=True)
    assert np.array_equal(got, np.float32(1) - x * np.float32(3))
    assert np.array_equal(ops.tensor_scalar(x, "is_ge", 0.0), (x >= 0).astype(np.float32))


def test_tensor_scalar_bitvec_and_integer_output():
    x = (np.arange(-8, 8, dtype=np.int32) * 37).reshape(2, 8)
    assert np.array_equal(ops.tensor_scalar(x, "bitwise_and", 0xFF), x & 0xFF)
    assert np.array_equal(ops.tensor_scalar(x, np.right_shift, np.array([1, 2])),
                          x >> np.array([[1], [2]]))
    got = ops.tensor_scalar(x.astype(np.float32) + np.float32(0.75), "add", 0.0, out_dtype="int32")
    assert got.dtype == np.int32 and np.array_equal(got, np.trunc(x + 0.75).astype(np.int32))


def test_tensor_scalar_rsqrt_and_reciprocal_vs_float64(rng):
    x = rng.uniform(0.01, 100.0, size=(3, 1000)).astype(np.float32)
    r = ops.tensor_scalar(x, "rsqrt")
    assert np.max(np.abs(f64(r) * np.sqrt(f64(x)) - 1)) <= 2**-21      # two Newton steps
    rec = ops.reciprocal(x * np.sign(rng.normal(size=x.shape)).astype(np.float32))
    assert np.max(np.abs(f64(rec) * f64(x) * np.sign(f64(rec)) - 1)) <= 2**-22


def test_tensor_tensor_exact(rng):
    a = rng.normal(size=(7, 257)).astype(np.float32)
    b = rng.normal(size=(7, 257)).astype(np.float32)
    for op, ref in (("add", a + b), (np.subtract, a - b), ("mult", a * b), ("max", np.maximum(a, b)),
                    ("absolute_diff", np.abs(a - b))):
        assert np.array_equal(ops.tensor_tensor(a, b, op), ref), op
    ia = rng.integers(0, 1 << 20, size=(2, 64), dtype=np.int32)
    ib = rng.integers(0, 1 << 20, size=(2, 64), dtype=np.int32)
    assert np.array_equal(ops.tensor_tensor(ia, ib, np.bitwise_xor), ia ^ ib)


def test_tensor_tensor_tiled_then_one_program_of_a_tile(rng):
    # An op larger than a partition runs in tiles; a later op of exactly one tile's shape reuses
    # that tile's cached program on the one-program path.
    step = ops._pass_len(ops._context(), 3 * 4, tile=1)
    a = rng.normal(size=(130, step + 5)).astype(np.float32)
    b = rng.normal(size=(130, step + 5)).astype(np.float32)
    assert np.array_equal(ops.tensor_tensor(a, b, "add"), a + b)
    programs = ops.cache_info()["programs"]
    a1, b1 = a[:128, :step] * 2, b[:128, :step] * 3
    assert np.array_equal(ops.tensor_tensor(a1, b1, "add"), a1 + b1)
    assert ops.cache_info()["programs"] == programs


def test_bn_stats_layout_and_aggregate_vs_float64(rng):
    x = (rng.normal(size=(6, 1300)) * 2 + 0.5).astype(np.float32)
    st = ops.bn_stats(x)
    assert st.shape == (6, 18)                             # 3 tiles: 512, 512, 276
    assert list(st[0, 0::3]) == [256, 256, 256, 256, 138, 138]
    mv = ops.bn_aggr(st)
    ref_m, ref_v = f64(x).mean(1), f64(x).var(1)
    assert np.max(np.abs(mv[:, 0] - ref_m) / (np.abs(ref_m) + np.sqrt(ref_v))) <= 1e-6
    assert np.max(np.abs(mv[:, 1] - ref_v) / ref_v) <= 1e-5
    m, v = ops.batch_norm_stats(x)                          # the fused program: same bits
    assert np.array_equal(m, mv[:, 0]) and np.array_equal(v, mv[:, 1])
    assert ops.bn_aggr(st[:, :6]).shape == (6, 2)
    # an odd-length tile: one element more in the even stream
    odd = ops.bn_stats(x[:, :7])
    assert list(odd[0, [0, 3]]) == [4, 3]


def _grad_ref(x, dy, gamma, eps=1e-5):
    x, dy = f64(x), f64(dy)
    mean = x.mean(1, keepdims=True)
    vf = 1 / np.sqrt(x.var(1, keepdims=True) + eps)
    xh = (x - mean) * vf
    s0, s1 = dy.sum(1), (dy * xh).sum(1)
    n = x.shape[1]
    dx = f64(gamma)[:, None] * vf / n * (n * dy - s0[:, None] - xh * s1[:, None])
    return dx, s1, s0, np.abs(dy).sum(1), np.abs(dy * xh).sum(1)


def test_bn_grad_accum_and_backprop_vs_float64(rng):
    x = (rng.normal(size=(4, 2000)) + 1).astype(np.float32)
    dy = rng.normal(size=(4, 2000)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, size=4).astype(np.float32)
    mean, var = ops.batch_norm_stats(x)
    vf = ops.tensor_scalar(ops.tensor_scalar(var[:, None], "add", 1e-5), "rsqrt")[:, 0]
    sums = ops.bn_grad_accum(x, dy, mean, vf)
    dx_ref, s1_ref, s0_ref, abs0, abs1 = _grad_ref(x, dy, gamma)
    assert np.max(np.abs(sums[:, 0] - s0_ref) / abs0) <= 1e-5
    assert np.max(np.abs(sums[:, 1] - s1_ref) / abs1) <= 1e-5
    n = x.shape[1]
    a = gamma * vf / np.float32(n)
    dx = ops.bn_backprop(x, dy, mean, a, sums[:, 0], sums[:, 2])
    assert np.max(np.abs(dx - dx_ref)) / np.max(np.abs(dx_ref)) <= 1e-5
    dx2, dgamma, dbeta = ops.batch_norm_backward(x, dy, mean, vf, gamma)
    assert np.max(np.abs(dx2 - dx_ref)) / np.max(np.abs(dx_ref)) <= 1e-5
    assert np.array_equal(dgamma, sums[:, 1]) and np.array_equal(dbeta, sums[:, 0])


def test_batch_norm_forward_vs_float64(rng):
    x = (rng.normal(size=(3, 1000)) * 3 - 2).astype(np.float32)
    g = rng.uniform(0.5, 2, size=3).astype(np.float32)
    b = rng.normal(size=3).astype(np.float32)
    y, mean, var, vf = ops.batch_norm_forward(x, g, b, 1e-3)
    xd = f64(x)
    ref = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-3) * g[:, None] + b[:, None]
    assert np.max(np.abs(y - ref)) <= 1e-5 * np.max(np.abs(ref))
    assert np.max(np.abs(vf * np.sqrt(f64(var) + 1e-3) - 1)) <= 2**-21
    # inference with given statistics
    y2, m2, v2, _ = ops.batch_norm_forward(x, g, b, 1e-3, mean=np.zeros(3), var=np.ones(3))
    assert np.allclose(y2, x / np.sqrt(1.001) * g[:, None] + b[:, None], rtol=1e-6, atol=1e-6)
    assert not m2.any() and (v2 == 1).all()


def test_max8_and_find_index8(rng):
    x = rng.normal(size=(5, 700)).astype(np.float32)
    x[1, 10] = x[1, 20] = x[1, 30] = 9.0           # duplicates are kept
    top = ops.max8(x)
    assert np.array_equal(top, np.sort(x, axis=1)[:, -8:])
    idx = ops.find_index8(x, top)
    assert idx.dtype == np.uint32
    for c in range(5):
        assert np.array_equal(x[c, idx[c]], top[c])
    assert sorted(idx[1][-3:]) == [10, 20, 30]
    keys = np.array([x[0, 5], 1234.0, x[0, 5], np.nan, x[0, 9], -0.0, 0.0, x[0, 5]], np.float32)
    got = ops.find_index8(x[:1], keys)[0]
    assert got[0] == 5 and got[4] == 9 and got[1] == 0xFFFFFFFF and got[3] == 0xFFFFFFFF
    assert got[2] == 0xFFFFFFFF and got[7] == 0xFFFFFFFF     # one element, one match
    assert ops.find_index8(x[:1], keys, out_dtype="uint16")[0][1] == 0xFFFF


# ---------------------------------------------------------------------------------------------
# Tiling: > 128 channels, > instruction limits, > one pass of SBUF


def test_tiling_channels_over_128(rng):
    x = rng.normal(size=(300, 600)).astype(np.float32)
    assert np.array_equal(ops.tensor_scalar(x, "mult", 2.0, op1="add", operand1=np.arange(300)),
                          x * np.float32(2) + np.arange(300, dtype=np.float32)[:, None])
    m, v = ops.batch_norm_stats(x)
    assert m.shape == (300,)
    assert np.max(np.abs(v - f64(x).var(1)) / f64(x).var(1)) <= 1e-5
    assert np.array_equal(ops.max8(x), np.sort(x, 1)[:, -8:])


def test_tiling_beyond_one_pass(rng):
    e = 70000                                              # > 32768 elements per program
    x = (rng.normal(size=(2, e)) + 3).astype(np.float32)
    dy = rng.normal(size=(2, e)).astype(np.float32)
    assert np.array_equal(ops.tensor_tensor(x, dy, "mult"), x * dy)
    st = ops.bn_stats(x)
    assert st.shape == (2, 6 * 137)
    m, v = ops.batch_norm_stats(x)
    mv = ops.bn_aggr(st)
    assert np.array_equal(m, mv[:, 0]) and np.array_equal(v, mv[:, 1])
    assert np.max(np.abs(v - f64(x).var(1)) / f64(x).var(1)) <= 1e-5
    gamma = np.array([0.5, 2.0], np.float32)
    y, mean, var, vf = ops.batch_norm_forward(x, gamma, None)
    xd = f64(x)
    ref = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5) * gamma[:, None]
    assert np.max(np.abs(y - ref)) <= 2e-5 * np.max(np.abs(ref))
    dx, dgamma, dbeta = ops.batch_norm_backward(x, dy, mean, vf, gamma)
    dx_ref, s1_ref, s0_ref, abs0, abs1 = _grad_ref(x, dy, gamma)
    assert np.max(np.abs(dx - dx_ref)) / np.max(np.abs(dx_ref)) <= 1e-5
    assert np.max(np.abs(dbeta - s0_ref) / abs0) <= 1e-5
    assert np.max(np.abs(dgamma - s1_ref) / abs1) <= 1e-5
    top = ops.max8(x)                                      # > 16384: tiles, then Max8 of tiles
    assert np.array_equal(top, np.sort(x, 1)[:, -8:])
    idx = ops.find_index8(x, top)
    assert np.array_equal(np.take_along_axis(x, idx.astype(np.int64), 1), top)


def test_find_index8_duplicate_keys_across_tiles():
    x = np.zeros((1, 40000), np.float32)
    x[0, [100, 20000, 39999]] = 7.0
    keys = np.array([7, 7, 7, 7, 5, 5, 5, 5], np.float32)
    got = ops.find_index8(x, keys)[0]
    assert list(got[:4]) == [100, 20000, 39999, 0xFFFFFFFF]
    assert (got[4:] == 0xFFFFFFFF).all()


# ---------------------------------------------------------------------------------------------
# bf16 path


def test_bf16_ops(rng):
    xf = rng.normal(size=(4, 1000)).astype(np.float32)
    xb = dvejit.to_bf16(xf)
    xv = dvejit.from_bf16(xb)                              # the values the device sees
    y = ops.tensor_scalar(xb, "mult", 3.0, op1="add", operand1=1.0, dtype="bf16")
    assert y.dtype == np.uint16
    assert np.array_equal(y, dvejit.to_bf16(xv * np.float32(3) + np.float32(1)))
    y32 = ops.tensor_scalar(xb, "mult", 3.0, dtype="bf16", out_dtype="fp32")
    assert np.array_equal(y32, xv * np.float32(3))
    assert np.array_equal(ops.tensor_scalar(xf, "bypass", dtype="bf16"), xb)   # floats are rounded
    m, v = ops.batch_norm_stats(xb, dtype="bf16")
    assert np.max(np.abs(v - f64(xv).var(1)) / f64(xv).var(1)) <= 1e-5
    dyb = dvejit.to_bf16(rng.normal(size=(4, 1000)))
    gamma = np.ones(4, np.float32)
    vf = 1 / np.sqrt(v + np.float32(1e-5))
    dx, dgamma, dbeta = ops.batch_norm_backward(xb, dyb, m, vf, gamma, dtype="bf16")
    assert dx.dtype == np.uint16
    dx_ref = _grad_ref(xv, dvejit.from_bf16(dyb), gamma)[0]
    assert np.max(np.abs(dvejit.from_bf16(dx) - dx_ref)) / np.max(np.abs(dx_ref)) <= 1e-2


# ---------------------------------------------------------------------------------------------
# Cache, threads, op errors


def test_programs_are_cached_by_shape(rng):
    ops.clear_cache()
    x = rng.normal(size=(3, 64)).astype(np.float32)
    ops.tensor_scalar(x, "add", 1.0)
    n = ops.cache_info()["programs"]
    for k in range(5):
        ops.tensor_scalar(x, "add", float(k))            # new values, same program
        ops.tensor_scalar(x * 2, "add", 2.0)
    assert ops.cache_info()["programs"] == n
    ops.tensor_scalar(x[:, :32], "add", 1.0)
    assert ops.cache_info()["programs"] == n + 1


def test_eager_ops_default_to_auto_and_match_the_interpreter(rng):
    # The default tier compiles a program when it repeats; every repeat must give the
    # interpreter's bits.
    assert ops.tier() == "auto"
    x = rng.normal(size=(40, 1000)).astype(np.float32)
    dy = rng.normal(size=(40, 1000)).astype(np.float32)
    xb = dvejit.to_bf16(x)

    def run_all():
        mean, var = ops.batch_norm_stats(x)
        vf = (1 / np.sqrt(var + np.float32(1e-5))).astype(np.float32)
        sums = ops.bn_grad_accum(x, dy, mean, vf)
        return [mean, var, sums,
                ops.bn_backprop(x, dy, mean, vf / 1000, sums[:, 0], sums[:, 2]),
                ops.tensor_scalar(x, "mult", 1.5, op1="add", operand1=-0.25),
                ops.tensor_tensor(x, dy, "subtract"),
                ops.reciprocal(xb, dtype="bf16"),
                ops.max8(x)]
    try:
        auto = [run_all() for _ in range(3)]
        ops.set_tier("interp")
        ref = run_all()
    finally:
        ops.set_tier("auto")
    for k in range(3):
        for a, b in zip(auto[k], ref):
            assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_one_machine_per_thread(rng):
    x = rng.normal(size=(16, 1024)).astype(np.float32)
    want = ops.batch_norm_stats(x)
    results, machines = [None] * 4, [None] * 4

    def work(i):
        for _ in range(5):
            results[i] = ops.batch_norm_stats(x)
        machines[i] = ops.machine()                      # kept alive: ids stay distinct
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(m) for m in machines}) == 4
    for r in results:
        assert np.array_equal(r[0], want[0]) and np.array_equal(r[1], want[1])


def test_op_errors_map_to_dvejit_errors(rng):
    x = rng.normal(size=(2, 8)).astype(np.float32)
    with pytest.raises(dvejit.InvalidError) as e:
        ops.tensor_scalar(x, "square")                   # SQUARE exists from MARIANA on
    assert e.value.predicate == "tensor_scalar_valid_ops"
    with pytest.raises(dvejit.InvalidError):
        ops.max8(x[:, :4])                               # fewer than 8 elements
    with pytest.raises(dvejit.UsageError):
        ops.tensor_tensor(x, x[:, :4], "add")
    with pytest.raises(dvejit.UsageError):
        ops.tensor_scalar(x, "frobnicate", 1.0)
    with pytest.raises(dvejit.UsageError):
        ops.tensor_scalar(np.zeros((2, 2, 2)), "add", 1.0)
    ops.machine().reset()                                # even a reset machine recovers
    m, v = ops.batch_norm_stats(x)
    assert np.allclose(m, x.mean(1), atol=1e-6)
