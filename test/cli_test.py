"""Contract tests of the dvejit command line (tools/dvejit.cc): asm, dis, validate, run.

Run with Debian's Python (it has NumPy and pytest):

    DVEJIT=build/tools/dvejit /usr/bin/python3 -m pytest -q test/cli_test.py

DVEJIT defaults to build/tools/dvejit under the repository root. Exit codes follow
spec/validation.md §1: 0 success, 1 an invalid program or a runtime error, 2 usage errors.
"""
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DVEJIT = Path(os.environ.get("DVEJIT", ROOT / "build" / "tools" / "dvejit"))
if not DVEJIT.is_absolute():
    DVEJIT = ROOT / DVEJIT
PY = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

DTYPES = ["fp32", "fp16", "bf16", "fp8e3", "fp8e4", "fp8e5",
          "int8", "uint8", "int16", "uint16", "int32", "uint32"]
# What a --dump of each DTYPE saves: bf16 as uint16 bits, fp8 as uint8 bits.
NPY_OF = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16, "fp8e3": np.uint8,
          "fp8e4": np.uint8, "fp8e5": np.uint8, "int8": np.int8, "uint8": np.uint8,
          "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32}
SBUF_STRIDE = 256 * 1024  # cayman (the default generation): SBUF partition stride


@pytest.fixture(scope="session", autouse=True)
def _binary():
    if not DVEJIT.is_file():
        pytest.fail(f"dvejit binary not found at {DVEJIT} (set DVEJIT or build the dvejit target)")


def dvejit(*args, cwd=None, timeout=60, env=None):
    """Runs dvejit (`env`: variables added to the environment); checks it exited normally (no
    signal, no abort) with a known code."""
    p = subprocess.run([str(DVEJIT), *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, errors="replace", timeout=timeout,
                       env=None if env is None else {**os.environ, **env})
    assert p.returncode in (0, 1, 2), f"dvejit {args}: exit {p.returncode}\n{p.stderr}"
    return p


def write(path, text):
    path.write_text(text)
    return path


def save(path, array):
    np.save(path, array)
    return path


def random_bits(rng, shape, np_dtype):
    """An array of np_dtype whose bytes are uniformly random (NaNs, infinities and all)."""
    size = np.dtype(np_dtype).itemsize
    raw = rng.integers(0, 256, size=(*shape[:-1], shape[-1] * size), dtype=np.uint8)
    return raw.view(np_dtype)


# ---------------------------------------------------------------------------------------------
# --help

@pytest.mark.parametrize("cmd", ["asm", "dis", "validate", "run", "ucode", "train-step", "ir", "bench"])
def test_help_of_every_subcommand(cmd):
    p = dvejit(cmd, "--help")
    assert p.returncode == 0, p.stderr
    assert "usage" in p.stdout.lower()


def test_top_level_help_and_usage():
    p = dvejit("--help")
    assert p.returncode == 0 and "usage" in p.stdout.lower()
    assert dvejit().returncode == 2
    assert dvejit("frobnicate").returncode == 2


def test_run_help_documents_the_options():
    out = dvejit("run", "--help").stdout
    for word in ["--gen", "--profile", "--preload-recip", "--reg", "--load", "--dump"]:
        assert word in out


# ---------------------------------------------------------------------------------------------
# asm / dis

ASM_FILES = sorted((EXAMPLES / "asm").glob("*.s")) + sorted(EXAMPLES.glob("bn_*.s"))


@pytest.mark.parametrize("src", ASM_FILES, ids=lambda p: p.name)
def test_asm_bin_dis_round_trip(tmp_path, src):
    b1, b2, txt = tmp_path / "a.bin", tmp_path / "b.bin", tmp_path / "a.s"
    assert dvejit("asm", src, "-o", b1).returncode == 0
    data = b1.read_bytes()
    assert len(data) > 0 and len(data) % 64 == 0
    d1 = dvejit("dis", b1)
    assert d1.returncode == 0, d1.stderr
    assert len(d1.stdout.splitlines()) == len(data) // 64  # one line per record
    write(txt, d1.stdout)
    assert dvejit("asm", txt, "-o", b2).returncode == 0
    assert b2.read_bytes() == data  # byte for byte
    assert dvejit("dis", b2).stdout == d1.stdout  # canonical
    # the record stream and the text validate alike
    assert dvejit("validate", b1).returncode == 0
    assert dvejit("validate", src).returncode == 0


def test_asm_header_bytes(tmp_path):
    src = write(tmp_path / "s.s", "BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 "
                "out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x1000[6:1]\n")
    assert dvejit("asm", src, "-o", tmp_path / "s.bin").returncode == 0
    rec = (tmp_path / "s.bin").read_bytes()
    assert len(rec) == 64 and rec[0] == 0x61 and rec[1] == 0x10


def test_asm_usage_and_syntax_errors(tmp_path):
    src = write(tmp_path / "c.s", "EngineNop\n")
    assert dvejit("asm", src).returncode == 2  # no -o
    assert dvejit("asm", "-o", tmp_path / "x.bin").returncode == 2  # no input
    assert dvejit("asm", tmp_path / "missing.s", "-o", tmp_path / "x.bin").returncode == 2
    assert dvejit("asm", src, "-o", tmp_path / "x.bin", "--gen", "bogus").returncode == 2
    bad = write(tmp_path / "bad.s", "Copy in_dtype=fp33\n")
    p = dvejit("asm", bad, "-o", tmp_path / "y.bin")
    assert p.returncode == 1 and "fp33" in p.stderr
    assert dvejit("dis").returncode == 2
    assert dvejit("dis", tmp_path / "missing.bin").returncode == 2


# ---------------------------------------------------------------------------------------------
# validate

STATS2 = ("BatchNormStats2 src=sbuf[0]+0x0[{cnt}:1] in_dtype=fp32 out_dtype=fp32 n={n} "
          "even_count={ec} odd_count=256 dst=sbuf[0]+0x1000[{dcnt}:1]\n")
INVALID = [
    ("has_bnstats2_src_element_cnt", STATS2.format(cnt=600, n=128, ec=300, dcnt=6), "invalid"),
    ("has_bnstats2_dst_element_cnt", STATS2.format(cnt=512, n=128, ec=256, dcnt=5), "invalid"),
    ("has_bns_finite_even_count", STATS2.format(cnt=512, n=128, ec="inf", dcnt=6), "invalid"),
    ("check_active_channels",
     "Copy src=sbuf[0]+0x0[256:1] dst=sbuf[0]+0x1000[256:1] in_dtype=fp32 out_dtype=fp32 n=0\n",
     "invalid"),
    ("start_addr_active_channels",
     "Copy src=sbuf[100]+0x0[256:1] dst=sbuf[100]+0x1000[256:1] in_dtype=fp32 out_dtype=fp32 n=64\n",
     "invalid"),
    ("tensor4d_valid",  # the source runs past the 229376 active bytes of a partition
     "Copy src=sbuf[0]+0x3FFF0[256:1] dst=sbuf[0]+0x1000[256:1] in_dtype=fp32 out_dtype=fp32 n=1\n",
     "invalid"),
    ("s4d4_tr_dtypes",  # Copy needs in == out
     "Copy src=sbuf[0]+0x0[16:1] dst=sbuf[0]+0x1000[16:1] in_dtype=fp32 out_dtype=bf16 n=1\n",
     "invalid"),
    ("opcode_supported", "Exponential\n", "unsupported"),
]


@pytest.mark.parametrize("pred,text,kind", INVALID, ids=[c[0] for c in INVALID])
def test_validate_invalid_names_the_predicate(tmp_path, pred, text, kind):
    src = write(tmp_path / "p.s", "EngineNop\n" + text)  # the bad record is #1
    p = dvejit("validate", src)
    assert p.returncode == 1
    assert pred in p.stderr
    assert kind in p.stderr
    # the same through the binary form
    assert dvejit("asm", src, "-o", tmp_path / "p.bin").returncode == 0
    p = dvejit("validate", tmp_path / "p.bin")
    assert p.returncode == 1 and pred in p.stderr
    # dis is lossless for invalid (but decodable) records too
    d = dvejit("dis", tmp_path / "p.bin")
    assert d.returncode == 0, d.stderr
    write(tmp_path / "q.s", d.stdout)
    assert dvejit("asm", tmp_path / "q.s", "-o", tmp_path / "q.bin").returncode == 0
    assert (tmp_path / "q.bin").read_bytes() == (tmp_path / "p.bin").read_bytes()


def test_validate_depends_on_generation(tmp_path):
    src = write(tmp_path / "ri.s", "DveReadIndices dtype=uint32 n=1 dst_element_count=8 "
                "dst=sbuf[0]+0x0[8:1]\n")
    assert dvejit("validate", src).returncode == 0  # cayman
    assert dvejit("validate", "--gen", "cayman", src).returncode == 0
    p = dvejit("validate", "--gen", "sunda", src)
    assert p.returncode == 1 and "opcode_in_generation" in p.stderr


def test_validate_decode_errors(tmp_path):
    odd = tmp_path / "odd.bin"
    odd.write_bytes(bytes([0x9F, 0x10]) + bytes(98))  # 100 bytes: not a multiple of 64
    p = dvejit("validate", odd)
    assert p.returncode == 1 and "decode" in p.stderr
    unk = tmp_path / "unk.bin"
    unk.write_bytes(bytes([0x9F, 0x10]) + bytes(62) + bytes([0xFF, 0x10]) + bytes(62))
    p = dvejit("validate", unk)
    assert p.returncode == 1 and "decode" in p.stderr
    for f in (odd, unk):
        assert dvejit("dis", f).returncode == 1
        assert dvejit("run", f).returncode == 1


def test_validate_usage_errors(tmp_path):
    ok = write(tmp_path / "ok.s", "EngineNop\n")
    p = dvejit("validate", ok)
    assert p.returncode == 0
    assert dvejit("validate").returncode == 2
    assert dvejit("validate", tmp_path / "missing.bin").returncode == 2
    assert dvejit("validate", "--gen", "bogus", ok).returncode == 2
    assert dvejit("validate", "--gen").returncode == 2
    assert dvejit("validate", "--bogus", ok).returncode == 2
    assert dvejit("validate", ok, ok).returncode == 2


# ---------------------------------------------------------------------------------------------
# run: --load / --dump

def copy_program(tmp_path, dtype, cols, rows, src_off=0, dst_off=0x1000):
    return write(tmp_path / f"copy_{dtype}.s",
                 f"Copy src=sbuf[0]+{src_off:#x}[{cols}:1] dst=sbuf[0]+{dst_off:#x}[{cols}:1] "
                 f"in_dtype={dtype} out_dtype={dtype} n={rows}\n")


@pytest.mark.parametrize("dtype", DTYPES)
def test_load_copy_dump_every_dtype_keeps_bits(tmp_path, dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    rows, cols = 4, 64
    want = random_bits(rng, (rows, cols), NPY_OF[dtype])
    inp = save(tmp_path / "in.npy", want)
    out = tmp_path / "out.npy"
    prog = copy_program(tmp_path, dtype, cols, rows)
    p = dvejit("run", prog, "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0x1000:{dtype}:{rows}x{cols}={out}")
    assert p.returncode == 0, p.stderr
    got = np.load(out)
    assert got.dtype == np.dtype(NPY_OF[dtype])
    assert got.shape == (rows, cols)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_dump_reads_raw_bytes_at_any_offset(tmp_path, dtype):
    # No instruction: the dump reads back exactly what the load wrote (decimal OFF here).
    rng = np.random.default_rng(100 + DTYPES.index(dtype))
    size = np.dtype(NPY_OF[dtype]).itemsize
    raw = rng.integers(0, 256, size=(3, 24), dtype=np.uint8)
    inp = save(tmp_path / "raw.npy", raw)
    out = tmp_path / "o.npy"
    empty = write(tmp_path / "empty.s", "# nothing\n")
    p = dvejit("run", empty, "--load", f"sbuf:5:96={inp}",
               "--dump", f"sbuf:5:96:{dtype}:3x{24 // size}={out}")
    assert p.returncode == 0, p.stderr
    got = np.load(out)
    assert got.shape == (3, 24 // size) and got.dtype == np.dtype(NPY_OF[dtype])
    assert got.tobytes() == raw.tobytes()


def test_load_rows_go_to_consecutive_partitions(tmp_path):
    a = np.arange(3 * 8, dtype=np.int32).reshape(3, 8) + 1
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    p = dvejit("run", write(tmp_path / "e.s", ""), "--load", f"sbuf:10:0x40={inp}",
               "--dump", f"sbuf:9:0x40:int32:5x8={out}")
    assert p.returncode == 0, p.stderr
    got = np.load(out)
    assert (got[0] == 0).all() and (got[4] == 0).all()  # memory starts zeroed
    assert (got[1:4] == a).all()


def test_1d_load_is_one_row(tmp_path):
    a = np.arange(1, 9, dtype=np.int16)
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    p = dvejit("run", write(tmp_path / "e.s", ""), "--load", f"sbuf:5:0x20={inp}",
               "--dump", f"sbuf:4:0x20:int16:3x8={out}")
    assert p.returncode == 0, p.stderr
    got = np.load(out)
    assert (got[1] == a).all()
    assert (got[0] == 0).all() and (got[2] == 0).all()


def test_fortran_ordered_load(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5)
    inp = tmp_path / "f.npy"
    np.save(inp, a)
    assert b"'fortran_order': True" in inp.read_bytes()[:128]
    out = tmp_path / "o.npy"
    p = dvejit("run", copy_program(tmp_path, "fp32", 4, 3), "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0x1000:fp32:3x4={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == np.ascontiguousarray(a)).all()


@pytest.mark.parametrize("descr,dtype", [(">f4", "fp32"), (">i2", "int16"), (">u4", "uint32")])
def test_big_endian_load(tmp_path, descr, dtype):
    a = (np.arange(2 * 6).reshape(2, 6) * 3 + 1).astype(descr)
    inp = tmp_path / "be.npy"
    np.save(inp, a)
    assert descr.encode() in inp.read_bytes()[:128]
    out = tmp_path / "o.npy"
    p = dvejit("run", copy_program(tmp_path, dtype, 6, 2), "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0x1000:{dtype}:2x6={out}")
    assert p.returncode == 0, p.stderr
    got = np.load(out)
    assert (got == a.astype(a.dtype.newbyteorder("<"))).all()


def test_big_endian_fortran_load(tmp_path):
    a = np.asfortranarray((np.arange(8).reshape(2, 4) - 3).astype(">i4"))
    inp = tmp_path / "bef.npy"
    np.save(inp, a)
    out = tmp_path / "o.npy"
    p = dvejit("run", write(tmp_path / "e.s", ""), "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0:int32:2x4={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


def test_load_of_any_dtype_copies_raw_bytes(tmp_path):
    a = np.array([[1.5, -2.25]], dtype=np.float64)  # no DVE dtype, still raw bytes
    inp = save(tmp_path / "d.npy", a)
    out = tmp_path / "o.npy"
    p = dvejit("run", write(tmp_path / "e.s", ""), "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0:uint32:1x4={out}")
    assert p.returncode == 0, p.stderr
    assert np.load(out).tobytes() == a.tobytes()


def test_psum_load_and_dump(tmp_path):
    a = np.arange(2 * 16, dtype=np.float32).reshape(2, 16) - 7.25
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    p = dvejit("run", write(tmp_path / "e.s", ""), "--load", f"psum:3:0x100={inp}",
               "--dump", f"psum:3:256:fp32:2x16={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


def test_run_accepts_binary_programs(tmp_path):
    a = np.arange(16, dtype=np.uint32).reshape(1, 16)
    inp = save(tmp_path / "a.npy", a)
    src = copy_program(tmp_path, "uint32", 16, 1)
    assert dvejit("asm", src, "-o", tmp_path / "c.bin").returncode == 0
    out = tmp_path / "o.npy"
    p = dvejit("run", tmp_path / "c.bin", "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0x1000:uint32:1x16={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


def test_run_report_on_stderr(tmp_path):
    prog = write(tmp_path / "r.s",
                 "Memset dtype=fp32 n=2 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
                 "Copy src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] in_dtype=fp32 out_dtype=fp32 n=2\n"
                 "Copy src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x200[8:1] in_dtype=fp32 out_dtype=fp32 n=2\n")
    out = tmp_path / "o.npy"
    p = dvejit("run", prog, "--dump", f"sbuf:0:0x200:fp32:2x8={out}")
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert "3" in p.stderr and "Copy" in p.stderr and "Memset" in p.stderr
    assert re.search(r"Copy\D*2", p.stderr)
    assert (np.load(out) == 1.0).all()


# ---------------------------------------------------------------------------------------------
# run: --reg, runtime errors, invalid programs

REG_COPY = ("Copy src=sbuf[{p}]+0x0[16:1] dst=reg(7)[16:1] in_dtype=fp32 out_dtype=fp32 n=2\n")


@pytest.mark.parametrize("value", ["0x80200", str(2 * SBUF_STRIDE + 0x200)])
def test_reg_holds_a_destination_address(tmp_path, value):
    a = np.arange(2 * 16, dtype=np.float32).reshape(2, 16) + 0.5
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    prog = write(tmp_path / "rc.s", REG_COPY.format(p=2))
    # r7 = sbuf[2]+0x200: channels 0, 1 of the copy land in partitions 2, 3 at 0x200
    p = dvejit("run", prog, "--reg", f"7={value}", "--load", f"sbuf:2:0={inp}",
               "--dump", f"sbuf:2:0x200:fp32:2x16={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


def test_gen_selects_the_run_geometry(tmp_path):
    prog = write(tmp_path / "e.s", "")
    out = tmp_path / "o.npy"
    # one fp32 just past cayman's 229376 active SBUF bytes per partition
    for gen, rc in [(None, 2), ("cayman", 2), ("sunda", 2), ("mariana", 0), ("maverick", 0)]:
        flags = [] if gen is None else ["--gen", gen]
        p = dvejit("run", prog, *flags, "--dump", f"sbuf:0:229376:fp32:1x1={out}")
        assert p.returncode == rc, f"{gen}: {p.stderr}"


def test_gen_selects_the_partition_stride_of_register_addresses(tmp_path):
    a = np.arange(2 * 16, dtype=np.float32).reshape(2, 16) - 3
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    prog = write(tmp_path / "rc.s", REG_COPY.format(p=2))
    # maverick: 1 MiB partition stride, so sbuf[2]+0x200 is 0x200200
    p = dvejit("run", prog, "--gen", "maverick", "--reg", "7=0x200200",
               "--load", f"sbuf:2:0={inp}", "--dump", f"sbuf:2:0x200:fp32:2x16={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


@pytest.mark.parametrize("value", ["0x201", "0x7FFFFFF0", "0x3FFF0"])
def test_runtime_error_exits_1_and_writes_no_dump(tmp_path, value):
    # misaligned, not an immediate-form address, past the active bytes
    prog = write(tmp_path / "rc.s", REG_COPY.format(p=0))
    out = tmp_path / "o.npy"
    p = dvejit("run", prog, "--reg", f"7={value}", "--dump", f"sbuf:0:0:fp32:1x4={out}")
    assert p.returncode == 1
    assert "register_address_valid" in p.stderr and "runtime" in p.stderr
    assert not out.exists()


def test_invalid_program_run_exits_1_and_writes_no_dump(tmp_path):
    prog = write(tmp_path / "bad.s", "EngineNop\n" + STATS2.format(cnt=600, n=128, ec=300, dcnt=6))
    out = tmp_path / "o.npy"
    p = dvejit("run", prog, "--dump", f"sbuf:0:0:fp32:1x4={out}")
    assert p.returncode == 1 and "has_bnstats2_src_element_cnt" in p.stderr
    assert not out.exists()
    p = dvejit("run", write(tmp_path / "syn.s", "Copy in_dtype=fp33\n"),
               "--dump", f"sbuf:0:0:fp32:1x4={out}")
    assert p.returncode == 1 and not out.exists()


def test_unsupported_opcode_run_exits_1(tmp_path):
    p = dvejit("run", write(tmp_path / "u.s", "Exponential\n"))
    assert p.returncode == 1 and "opcode_supported" in p.stderr


# ---------------------------------------------------------------------------------------------
# run: --preload-recip, --profile

# The seed's worked example (s4d2_bn.h): 5 elements, 3 even and 2 odd.
STATS2_5 = ("BatchNormStats2 src=sbuf[0]+0x0[5:1] in_dtype=fp32 out_dtype=fp32 n=1 "
            "even_count=3 odd_count=2 dst=sbuf[0]+0x100[6:1]\n")


def run_stats5(tmp_path, prog, *flags):
    inp = save(tmp_path / "x5.npy", np.array([1, 2, 3, 4, 5], dtype=np.float32))
    out = tmp_path / "s5.npy"
    if out.exists():
        out.unlink()
    p = dvejit("run", prog, *flags, "--load", f"sbuf:0:0={inp}",
               "--dump", f"sbuf:0:0x100:fp32:1x6={out}")
    assert p.returncode == 0, p.stderr
    return np.load(out)[0]


def test_preload_recip_stats2_seed_example(tmp_path):
    prog = write(tmp_path / "s5.s", STATS2_5)
    # even 1,3,5: mean 3, n*var 8; odd 2,4: mean 3, n*var 2; the counts are copied through
    want = np.array([3, 3, 8, 2, 3, 2], dtype=np.float32)
    got = run_stats5(tmp_path, prog, "--preload-recip")
    assert got.tobytes() == want.tobytes()
    # .recip_table in the program loads the same reciprocals
    table = write(tmp_path / "s5t.s", ".recip_table\n" + STATS2_5)
    assert run_stats5(tmp_path, table).tobytes() == want.tobytes()
    # without them the Parameter RAM is empty and the means come out wrong
    bare = run_stats5(tmp_path, prog)
    assert bare[0] == 3 and bare[3] == 2
    assert bare.tobytes() != want.tobytes()


IMMLD = ("TensorScalarImmLdArith src=sbuf[0]+0x0[2:1] dtype=fp32 n=1\n"
         "TensorScalarPtrMultiArith src=sbuf[0]+0x100[4:1,1:0,1:0,2:4] in_dtype=fp32 "
         "out_dtype=fp32 n=1 op=add op_dim=xyz dst=sbuf[0]+0x200[4:1,1:0,1:0,2:4]\n")


def make_gen3_tables(d, ops):
    """A minimal gen3 (cayman) microcode table directory whose 'default' set enables `ops`."""
    d.mkdir()
    sizes = {"opcode_table": 1024, "control_fast_table": 4096, "control_slow_table": 4096,
             "datapath_table": 16384}
    table = {"name": "default", "ops": list(ops)}
    for key, size in sizes.items():
        table[key] = f"default_{key}.bin"
        blob = bytearray(size)
        if key == "opcode_table":  # V = fast row (nonzero: enabled), no slow row
            for i, op in enumerate(ops):
                blob[4 * op:4 * op + 4] = (i + 1).to_bytes(4, "little")
        (d / table[key]).write_bytes(bytes(blob))
    (d / "dve_info.json").write_text(json.dumps({"dve_table_keys": list(sizes), "tables": [table]}))
    (d / "version.json").write_text('{"neuronx_cc": "cli_test"}')
    return d


def run_immld(tmp_path, *flags):
    prog = write(tmp_path / "immld.s", IMMLD)
    imm = save(tmp_path / "imm.npy", np.array([10, 100], dtype=np.float32))
    t = save(tmp_path / "t.npy", np.arange(8, dtype=np.float32))
    sentinel = save(tmp_path / "s.npy", np.full(8, -1.0, dtype=np.float32))
    out = tmp_path / "o.npy"
    p = dvejit("run", prog, *flags, "--load", f"sbuf:0:0={imm}", "--load", f"sbuf:0:0x100={t}",
               "--load", f"sbuf:0:0x200={sentinel}", "--dump", f"sbuf:0:0x200:fp32:1x8={out}")
    return p, (np.load(out)[0] if out.exists() else None)


@pytest.mark.parametrize("flags", [[], ["--profile", "contract"]], ids=["default", "contract"])
def test_contract_profile_executes_immld(tmp_path, flags):
    p, got = run_immld(tmp_path, *flags)
    assert p.returncode == 0, p.stderr
    assert (got == [10, 11, 12, 13, 104, 105, 106, 107]).all()
    assert "deprecated" in p.stderr.lower()  # both opcodes are marked 'n': a warning


@pytest.mark.parametrize("profile", ["contract", "device"])
def test_profile_device_makes_immld_a_no_op(tmp_path, profile):
    # A table set that enables 0x70 and 0x4F, so the device roster lets them through.
    tables = make_gen3_tables(tmp_path / "dve_bin_gen3", [0x70, 0x4F])
    p, got = run_immld(tmp_path, "--ucode", tables, "--profile", profile)
    assert p.returncode == 0, p.stderr
    if profile == "device":
        assert (got == -1.0).all()  # ImmLd and PtrMulti are logged no-ops: nothing is written
    else:
        assert (got == [10, 11, 12, 13, 104, 105, 106, 107]).all()
    assert "deprecated" in p.stderr.lower()


def test_profile_device_immld_is_a_no_op_with_builtin_roster(tmp_path):
    # The built-in default rosters (microcode.md §4) do not enable 0x70/0x4F; the firmware stubs
    # are still logged no-ops under the device profile (docs/spec-notes.md, item 15).
    p, got = run_immld(tmp_path, "--profile", "device")
    assert p.returncode == 0, p.stderr
    assert (got == -1.0).all()
    assert "stub" in p.stderr


def test_profile_device_runs_ordinary_programs(tmp_path):
    a = np.arange(4 * 16, dtype=np.float32).reshape(4, 16) * 0.75
    inp = save(tmp_path / "a.npy", a)
    out = tmp_path / "o.npy"
    p = dvejit("run", copy_program(tmp_path, "fp32", 16, 4), "--profile", "device",
               "--load", f"sbuf:0:0={inp}", "--dump", f"sbuf:0:0x1000:fp32:4x16={out}")
    assert p.returncode == 0, p.stderr
    assert (np.load(out) == a).all()


# ---------------------------------------------------------------------------------------------
# run: usage errors

def _npy(name, array):
    return lambda d: save(d / name, array)


OK_NPY = _npy("ok.npy", np.zeros((2, 4), np.float32))
OUT = "{d}/o.npy"
# name -> arguments after `run PROGRAM`; "{d}" is the test's directory, a callable makes a file.
USAGE_CASES = {
    "bad_space": ["--load", "dram:0:0=", OK_NPY],
    "p_128": ["--load", "sbuf:128:0=", OK_NPY],
    "p_hex": ["--load", "sbuf:0x1:0=", OK_NPY],
    "p_negative": ["--load", "sbuf:-1:0=", OK_NPY],
    "off_negative": ["--load", "sbuf:0:-4=", OK_NPY],
    "off_garbage": ["--load", "sbuf:0:0xZZ=", OK_NPY],
    "load_no_file": ["--load", "sbuf:0:0"],
    "load_empty_file_name": ["--load", "sbuf:0:0="],
    "load_no_value": ["--load"],
    "load_too_many_rows": ["--load", "sbuf:0:0=", _npy("r129.npy", np.zeros((129, 1), np.uint8))],
    "load_rows_past_127": ["--load", "sbuf:127:0=", OK_NPY],
    "load_row_too_long": ["--load", "sbuf:0:0=", _npy("wide.npy", np.zeros((1, 57345), np.float32))],
    "load_past_the_end": ["--load", "sbuf:0:229370=", OK_NPY],
    "load_3d": ["--load", "sbuf:0:0=", _npy("d3.npy", np.zeros((2, 2, 2), np.float32))],
    "load_0d": ["--load", "sbuf:0:0=", _npy("d0.npy", np.float32(1))],
    "load_missing": ["--load", "sbuf:0:0={d}/missing.npy"],
    "load_not_npy": ["--load", "sbuf:0:0=", lambda d: write(d / "junk.npy", "not an npy file")],
    "dump_cols_outside": ["--dump", "sbuf:0:0:fp32:1x57345=" + OUT],
    "dump_off_outside": ["--dump", "sbuf:0:229373:fp32:1x1=" + OUT],
    "dump_rows_past_127": ["--dump", "sbuf:127:0:fp32:2x1=" + OUT],
    "dump_129_rows": ["--dump", "sbuf:0:0:fp32:129x1=" + OUT],
    "dump_zero_rows": ["--dump", "sbuf:0:0:fp32:0x4=" + OUT],
    "dump_bad_shape": ["--dump", "sbuf:0:0:fp32:4=" + OUT],
    "dump_psum_outside": ["--dump", "psum:0:16384:fp32:1x1=" + OUT],
    "dump_p_128": ["--dump", "sbuf:128:0:fp32:1x1=" + OUT],
    "dump_no_file": ["--dump", "sbuf:0:0:fp32:1x4"],
    "dtype_float32": ["--dump", "sbuf:0:0:float32:1x4=" + OUT],
    "dtype_fp32r": ["--dump", "sbuf:0:0:fp32r:1x4=" + OUT],
    "dtype_int64": ["--dump", "sbuf:0:0:int64:1x4=" + OUT],
    "dtype_fp64": ["--dump", "sbuf:0:0:fp64:1x4=" + OUT],
    "dtype_empty": ["--dump", "sbuf:0:0::1x4=" + OUT],
    "unknown_flag": ["--frobnicate"],
    "bad_profile": ["--profile", "fast"],
    "profile_no_value": ["--profile"],
    "bad_gen": ["--gen", "bogus"],
    "reg_64": ["--reg", "64=0"],
    "reg_too_big": ["--reg", "7=0x100000000"],
    "reg_no_value": ["--reg", "7"],
    "reg_garbage": ["--reg", "x=1"],
    "two_programs": ["{d}/e.s"],
    "threads_0": ["--threads", "0"],
    "threads_257": ["--threads", "257"],
    "threads_garbage": ["--threads", "2x"],
    "threads_negative": ["--threads", "-2"],
    "threads_no_value": ["--threads"],
    "maverick_psum_dump": ["--gen", "maverick", "--dump", "psum:0:0:fp32:1x1=" + OUT],
}


def usage_args(case, d):
    """The case's arguments: a callable's file path is appended to the argument before it."""
    args = []
    for item in USAGE_CASES[case]:
        if callable(item):
            args[-1] += str(item(d))
        else:
            args.append(item.replace("{d}", str(d)))
    return args


@pytest.mark.parametrize("case", list(USAGE_CASES))
def test_run_usage_errors_exit_2(tmp_path, case):
    prog = write(tmp_path / "e.s", "EngineNop\n")
    p = dvejit("run", prog, *usage_args(case, tmp_path))
    assert p.returncode == 2, f"{case}: exit {p.returncode}\n{p.stderr}"
    assert "dvejit" in p.stderr
    assert not (tmp_path / "o.npy").exists()


def test_run_usage_errors_without_program(tmp_path):
    assert dvejit("run").returncode == 2
    assert dvejit("run", tmp_path / "missing.s").returncode == 2
    assert dvejit("run", tmp_path).returncode == 2  # a directory


def test_dump_at_the_last_byte_is_fine(tmp_path):
    prog = write(tmp_path / "e.s", "")
    for spec in ["sbuf:0:0:fp32:1x57344", "sbuf:0:229372:fp32:1x1", "sbuf:127:0:uint8:1x1",
                 "sbuf:0:0:uint8:128x1", "psum:0:16380:fp32:1x1"]:
        out = tmp_path / "o.npy"
        p = dvejit("run", prog, "--dump", f"{spec}={out}")
        assert p.returncode == 0, f"{spec}: {p.stderr}"
        assert out.exists()
        out.unlink()


# ---------------------------------------------------------------------------------------------
# garbage and huge program files: a clear error, never a crash

def test_garbage_program_files(tmp_path):
    rng = np.random.default_rng(7)
    junk = rng.integers(0, 256, size=1 << 20, dtype=np.uint8).tobytes()
    junk = bytes([0xFF]) + junk[1:]  # 0xFF is no opcode
    for name in ["junk.bin", "junk.s", "junk"]:
        f = tmp_path / name
        f.write_bytes(junk)
        for cmd in (["run", f], ["validate", f]):
            p = dvejit(*cmd)
            assert p.returncode == 1, f"{cmd}: {p.stderr}"
            assert p.stderr.startswith("dvejit") and len(p.stderr) < 2000
    text = write(tmp_path / "words.s", "this is not assembly\n" * 1000)
    p = dvejit("run", text)
    assert p.returncode == 1 and "line 1" in p.stderr


def test_huge_program_file(tmp_path):
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as f:
        f.truncate((257 << 20))  # sparse: 257 MiB of zeros, more than a program may be
    for cmd in ("run", "validate", "dis"):
        p = dvejit(cmd, huge, timeout=30)
        assert p.returncode in (1, 2) and p.stderr.startswith("dvejit")
    p = dvejit("asm", huge, "-o", tmp_path / "x.bin", timeout=30)
    assert p.returncode in (1, 2) and not (tmp_path / "x.bin").exists()


def test_empty_program_runs(tmp_path):
    for name in ["empty.s", "empty.bin"]:
        f = tmp_path / name
        f.write_bytes(b"")
        assert dvejit("run", f).returncode == 0
        assert dvejit("validate", f).returncode == 0


# ---------------------------------------------------------------------------------------------
# examples/: the batch-norm flow of examples/README.md, end to end

def readme_commands(tmp, dvejit_path):
    """The shell commands of the README's first ```sh block, with its paths replaced."""
    text = (EXAMPLES / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    cmds = []
    for line in block.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = line.replace("/tmp/bn", str(tmp)).replace("build/tools/dvejit", str(dvejit_path))
        cmds.append(shlex.split(line))
    return cmds


def test_bn_example_end_to_end(tmp_path):
    cmds = readme_commands(tmp_path, DVEJIT)
    assert sum(c[0] == str(DVEJIT) for c in cmds) == 2
    for cmd in cmds:
        if cmd[0] == "/usr/bin/python3":
            cmd[0] = PY
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, f"{cmd}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    last = p  # check_bn.py
    assert "OK" in last.stdout
    for name in ["x", "dy", "gamma", "mean_var", "dx", "sums"]:
        assert (tmp_path / f"{name}.npy").exists()
    assert np.load(tmp_path / "dx.npy").shape == (128, 1024)
    # the errors themselves, through check_bn's own function
    spec = importlib.util.spec_from_file_location("check_bn", EXAMPLES / "check_bn.py")
    check_bn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_bn)
    errs = check_bn.errors(str(tmp_path))
    assert errs["mean"][1] <= 1e-5, errs
    assert errs["var"][1] <= 1e-5, errs
    assert errs["dx"][1] <= 1e-4, errs
    assert errs["dbeta"][1] <= 1e-4 and errs["dgamma"][1] <= 1e-4, errs


def test_bn_examples_validate_on_every_generation():
    for gen in ["sunda", "cayman", "mariana", "maverick"]:
        for f in ["bn_forward.s", "bn_backward.s"]:
            p = dvejit("validate", "--gen", gen, EXAMPLES / f)
            assert p.returncode == 0, f"{gen} {f}: {p.stderr}"


def test_profile_jit_script_attributes_samples_to_jit_code(tmp_path):
    # scripts/profile-jit.sh (a developer tool): the samples of a JIT benchmark must fall mostly
    # in the JIT's code, and the report must disassemble it.
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "profile-jit.sh"), "--out", str(tmp_path), "--period-us", "200", "--",
         str(DVEJIT), "bench", "--workload", "bn_stats", "--benchmark_filter=512/fp32/jit_fused",
         "--benchmark_min_time=1.5"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    shares = dict((name, float(p.rstrip("%"))) for p, name in re.findall(r"^\s+([\d.]+%)\s+(\[jit code\])$", out.stdout, re.M))
    assert shares.get("[jit code]", 0) > 25, out.stdout  # about 60 % alone; set-up is the rest
    assert re.search(r"^JIT code at 0x[0-9a-f]+", out.stdout, re.M), out.stdout
    assert re.search(r"^\s+0x[0-9a-f]+\s+[\d.]+%\s+v\w+", out.stdout, re.M), out.stdout  # vector instructions
    assert (tmp_path / "samples.txt").stat().st_size > 0


def test_bench_json_entries_and_counters(tmp_path):
    # `dvejit bench --json FILE`: one entry per WORKLOAD/CHANNELSxELEMENTS/DTYPE/TIER with the
    # counters other tools read; the ratios are to the roof row of the same run, and
    # bytes_per_second is the roof's minimal bytes over the median. Nothing here is a speed claim.
    out = tmp_path / "bench.json"
    p = dvejit("bench", "--quick", "--workload", "tensor_scalar", "--benchmark_filter=128x512/|tiny",
               "--benchmark_min_time=0.01", "--json", out, timeout=300)
    assert p.returncode == 0, p.stderr
    entries = {b["name"]: b for b in json.loads(out.read_text())["benchmarks"]}
    tiers = ["roof", "interp", "jit_unfused", "jit_fused"]
    for dtype, size in [("fp32", 4), ("bf16", 2)]:
        roof = entries[f"tensor_scalar/128x512/{dtype}/roof"]
        for tier in tiers:
            e = entries[f"tensor_scalar/128x512/{dtype}/{tier}"]
            assert "error_occurred" not in e, e
            assert e["median_us"] > 0, e
            assert e["ratio_to_roof"] == pytest.approx(e["median_us"] / roof["median_us"], rel=1e-6), e
            minimal = 2 * 128 * 512 * size  # TensorScalar reads x once and writes its result once
            assert e["bytes_per_second"] * e["median_us"] * 1e-6 == pytest.approx(minimal, rel=1e-6), e
        assert roof["ratio_to_roof"] == 1
    assert not [n for n in entries if not n.startswith("tiny/")
                and not re.fullmatch(r"tensor_scalar/128x512/(fp32|bf16)/(roof|interp|jit_unfused|jit_fused)", n)]
    # The tiny instructions' counter is in nanoseconds (an inverted rate would be seconds, 1e-8).
    for tier in ["interp", "jit"]:
        e = entries[f"tiny/1x8/fp32/{tier}"]
        assert "error_occurred" not in e, e
        assert e["ns_per_instruction"] >= 1, e


def test_bench_threads_in_the_context(tmp_path):
    # --threads runs the jit tiers on that many threads (the names do not change); the JSON's
    # context says how many (1 by default). 128 x 8192 fp32 TensorScalar moves 8 MiB: split.
    for threads in ["1", "2"]:
        out = tmp_path / f"bench{threads}.json"
        args = [] if threads == "1" else ["--threads", threads]
        p = dvejit("bench", *args, "--workload", "tensor_scalar", "--benchmark_filter=128x8192/fp32/jit_fused",
                   "--benchmark_min_time=0.01", "--json", out, timeout=300)
        assert p.returncode == 0, p.stderr
        doc = json.loads(out.read_text())
        assert doc["context"]["jit_threads"] == threads, doc["context"]
        names = [b["name"] for b in doc["benchmarks"]]
        assert names == ["tensor_scalar/128x8192/fp32/jit_fused"], names
        assert "error_occurred" not in doc["benchmarks"][0]


def test_bench_cold_caches_in_the_context(tmp_path):
    # --cold evicts each workload's rows from the caches before every timed run of every tier (the
    # roof's too); the names and counters are those of a warm run, and the JSON's context says
    # which it was ("warm" by default). Nothing here is a speed claim.
    for cold in [False, True]:
        out = tmp_path / f"bench_{cold}.json"
        args = ["--cold"] if cold else []
        p = dvejit("bench", *args, "--workload", "tensor_tensor", "--benchmark_filter=128x512/bf16/(roof|jit_fused)",
                   "--benchmark_min_time=0.01", "--json", out, timeout=300)
        assert p.returncode == 0, p.stderr
        doc = json.loads(out.read_text())
        assert doc["context"]["caches"] == ("cold" if cold else "warm"), doc["context"]
        entries = {b["name"]: b for b in doc["benchmarks"]}
        assert sorted(entries) == ["tensor_tensor/128x512/bf16/jit_fused", "tensor_tensor/128x512/bf16/roof"]
        roof = entries["tensor_tensor/128x512/bf16/roof"]
        for e in entries.values():
            assert "error_occurred" not in e, e
            assert e["ratio_to_roof"] == pytest.approx(e["median_us"] / roof["median_us"], rel=1e-6), e
    p = dvejit("bench", "--help", timeout=30)
    assert "--cold" in p.stdout and "clflush" in p.stdout, p.stdout


@pytest.mark.parametrize("args,message", [
    (["--workload", "bn_stat"], "unknown workload 'bn_stat' (one of bn_stats, bn_backward,"),
    (["--workload"], "--workload needs a value"),
    (["--json"], "--json needs a value"),
    (["--json", "/nonexistent-dir/out.json"], "cannot write '/nonexistent-dir/out.json'"),
    (["--benchmark_filtr=tiny"], "unrecognized command-line flag: --benchmark_filtr=tiny"),
    (["--benchmark_min_time=abc"], "--benchmark_min_time"),
    (["--quik"], "unexpected argument '--quik'"),
    (["--benchmark_filter=tiny/(jit"], "--benchmark_filter 'tiny/(jit' is not a regular expression"),
    (["--benchmark_filter=bn_stat/"], "--benchmark_filter 'bn_stat/' matches no benchmark"),
    (["--threads", "0"], "--threads needs a whole number from 1 to 256"),
    (["--threads"], "--threads needs a whole number from 1 to 256"),
])
def test_bench_usage_errors_exit_2_before_running(args, message, tmp_path):
    # Refused before any workload is set up: nothing runs, and a --json file given beside the
    # error is not created (a filter that matches nothing leaves no empty one behind either).
    out = tmp_path / "out.json"
    for extra in ([], ["--json", out]):
        p = dvejit("bench", *extra, *args, timeout=30)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert message in p.stderr, p.stderr
        assert "Benchmark" not in p.stdout, p.stdout
        assert not out.exists()


def test_bench_compare_torch_runs_from_any_directory(tmp_path):
    # --compare-torch finds its script from the binary's location, not the working directory,
    # and its ratios are the two times it prints (no speed claim is checked here).
    p = dvejit("bench", "--compare-torch", "--benchmark_filter=^$", cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    for what in ["forward statistics", "backward chain"]:
        m = re.search(what + r":\s+torch ([\d.]+) ms, dvejit ([\d.]+) ms, dvejit ([\d.]+)x faster", p.stdout)
        assert m, p.stdout
        torch_ms, dvejit_ms, ratio = map(float, m.groups())
        assert torch_ms > 0 and dvejit_ms > 0
        assert ratio == pytest.approx(torch_ms / dvejit_ms, rel=0.05), m.group(0)  # printed rounded
    assert '"forward_stats_ms"' in p.stdout and '"backward_ms"' in p.stdout


def run_bn_forward(tmp_path, name, *extra, env=None):
    """Runs examples/bn_forward.s on random x; returns (process, the mean/var dump's bytes)."""
    x = tmp_path / "x.npy"
    if not x.exists():
        save(x, np.random.default_rng(4).normal(size=(128, 1024)).astype(np.float32))
    out = tmp_path / f"{name}.npy"
    p = dvejit("run", EXAMPLES / "bn_forward.s", "--preload-recip", "--load", f"sbuf:0:0={x}",
               "--dump", f"sbuf:0:0x3040:fp32:128x2={out}", *extra, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    return p, np.load(out).tobytes()


def test_run_tiers_report_and_agree(tmp_path):
    # --tier interp runs the interpreter, jit compiles the stream, auto interprets a stream the
    # first time it sees it (one run per process here); all three write the same bytes.
    p_interp, interp = run_bn_forward(tmp_path, "interp", "--tier", "interp")
    p_jit, jit = run_bn_forward(tmp_path, "jit", "--tier", "jit")
    p_auto, auto = run_bn_forward(tmp_path, "auto", "--tier", "auto")
    assert "(interp)" in p_interp.stderr, p_interp.stderr
    assert re.search(r"\(jit, 35 compiled, (compiled|loaded from the object cache) in \d+ ms\)",
                     p_jit.stderr), p_jit.stderr
    assert "(interp)" in p_auto.stderr, p_auto.stderr
    assert jit == interp and auto == interp


def test_run_threads_write_the_same_bytes(tmp_path):
    # --threads is accepted up to 256 and the bytes do not change. (This stream's region moves
    # 512 KiB, under the 1 MiB from which regions are split: dvejit train-step below, the
    # differential tests and block_threads_test split theirs.)
    _, interp = run_bn_forward(tmp_path, "interp", "--tier", "interp")
    for threads in ["1", "2", "3", "256"]:
        p, out = run_bn_forward(tmp_path, "t" + threads, "--tier", "jit", "--threads", threads)
        assert "(jit, 35 compiled" in p.stderr, p.stderr
        assert (f", {threads} threads)" in p.stderr) == (threads != "1"), p.stderr
        assert out == interp, threads


def test_train_step_threads(tmp_path):
    p = dvejit("train-step", "--tier", "jit", "--threads", "2", "--elements", "1024", "--steps", "2", timeout=120)
    assert p.returncode == 0, p.stderr
    assert "jit, 2 threads" in p.stdout and "FAIL" not in p.stdout, p.stdout
    for bad in [["--threads", "0"], ["--threads", "x"], ["--threads"]]:
        q = dvejit("train-step", *bad)
        assert q.returncode == 2 and "--threads needs a whole number from 1 to 256" in q.stderr, (bad, q.stderr)


def test_run_jit_unavailable_runs_interpreted_with_the_reason(tmp_path):
    # A cache directory the engine cannot create makes the JIT unavailable: the stream still
    # runs (interpreted, the same bytes) and the report says why.
    blocker = write(tmp_path / "a-file", "")
    _, interp = run_bn_forward(tmp_path, "interp", "--tier", "interp")
    p, out = run_bn_forward(tmp_path, "jit", "--tier", "jit", env={"DVEJIT_JIT_CACHE_DIR": str(blocker / "cache")})
    assert "jit failed, interpreted: the JIT is unavailable: cannot create object cache directory" in p.stderr, p.stderr
    assert out == interp


def test_run_jit_cache_dir_serves_later_processes(tmp_path):
    cache = tmp_path / "cache" / "nested"  # created with its parents
    _, first = run_bn_forward(tmp_path, "first", "--tier", "jit", "--jit-cache", cache)
    objects = {f.name: f.stat().st_mtime_ns for f in cache.iterdir()}
    assert objects and all(name.endswith(".o") for name in objects), objects
    p, second = run_bn_forward(tmp_path, "second", "--tier", "jit", "--jit-cache", cache)
    assert re.search(r"\(jit, 35 compiled, loaded from the object cache in \d+ ms\)", p.stderr), p.stderr
    assert second == first
    # Loaded, not compiled anew: a compile would have written its object again.
    assert {f.name: f.stat().st_mtime_ns for f in cache.iterdir()} == objects
    # A path that cannot be a directory is a usage error, before anything runs.
    blocker = write(tmp_path / "a-file", "")
    for bad in [blocker, blocker / "sub"]:
        q = dvejit("run", EXAMPLES / "bn_forward.s", "--tier", "jit", "--jit-cache", bad)
        assert q.returncode == 2, q.stderr
        assert f"'{blocker}' is a file" in q.stderr, q.stderr


# ---------------------------------------------------------------------------------------------
# ir: the IR a run compiles, with its registers and profile

def test_ir_help_lists_the_pipeline_in_order():
    out = dvejit("ir", "--help").stdout
    for word in ["--gen", "--profile", "--reg"]:
        assert word in out
    names = ["channel-independence", "fuse-elementwise-chains", "forward-lane-state",
             "dead-lane-sets", "dead-values", "reroll-repeats"]
    positions = [out.find(n) for n in names]
    assert -1 not in positions and positions == sorted(positions), out


def test_ir_resolves_register_addresses_as_a_run_does(tmp_path):
    prog = write(tmp_path / "rc.s", REG_COPY.format(p=2))
    # r7 = sbuf[2]+0x200: the copy's rows meet only themselves, so it runs channel-major;
    # r7 = sbuf[2]+0x20: the destination overlaps the source's elements, so it is interpreted
    apart = dvejit("ir", prog, "--reg", "7=0x80200")
    assert apart.returncode == 0, apart.stderr
    after = apart.stdout.split("; after passes")[1]
    assert "channel-major" in after and "copy," in after
    overlap = dvejit("ir", prog, "--reg", "7=0x80020")
    assert overlap.returncode == 0, overlap.stderr
    after = overlap.stdout.split("; after passes")[1]
    assert "interp" in after and "copy," not in after
    # the run's own error for a register that holds no valid address; registers default to 0
    bad = dvejit("ir", prog, "--reg", "7=0x201")
    assert bad.returncode == 1 and "register_address_valid" in bad.stderr, bad.stderr
    assert dvejit("ir", prog).returncode == 0
    for args in [["--reg", "64=0"], ["--reg"], ["--reg", "7"], ["--profile", "hardware"]]:
        assert dvejit("ir", prog, *args).returncode == 2, args


def test_ir_profile_decides_what_immld_and_ptrmulti_lower_to(tmp_path):
    prog = write(tmp_path / "immld.s", IMMLD)
    contract = dvejit("ir", prog)
    device = dvejit("ir", prog, "--profile", "device")
    assert contract.returncode == 0 and device.returncode == 0, contract.stderr + device.stderr
    assert "device-noop" not in contract.stdout and "imm.load" in contract.stdout
    assert "device-noop" in device.stdout and "imm.load" not in device.stdout
