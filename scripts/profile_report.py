#!/usr/bin/python3
"""Reads what scripts/jit_sampler.c wrote (DIR) and prints where the samples fell: the share of
each mapped file (with the hottest functions of the dvejit binary and its libraries), and for the
JIT's code the hottest loops (ranges closed by a backward jump), 256-byte regions and
instructions, disassembled from the bytes that ran.

    /usr/bin/python3 scripts/profile_report.py DIR [--top N]
"""
import argparse
import bisect
import collections
import os
import re
import subprocess


def read_maps(path):
    """(lo, hi, file offset, permissions, path) per mapping, sorted by address."""
    maps = []
    for line in open(path):
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split('-'))
        maps.append((lo, hi, int(parts[2], 16), parts[1], parts[5] if len(parts) > 5 else ''))
    return sorted(maps)


def map_name(m):
    if m is None:
        return '[unmapped]'
    return m[4] or ('[jit code]' if 'x' in m[3] else '[anon]')


def disassemble(dump, lo):
    """Instruction address → text, for a raw code dump loaded at `lo`."""
    out = subprocess.run(['objdump', '-D', '-b', 'binary', '-m', 'i386:x86-64',
                          f'--adjust-vma={lo:#x}', dump], capture_output=True, text=True).stdout
    insns = {}
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(\S.*)', line)
        if m:
            insns[int(m.group(1), 16)] = m.group(2).split('#')[0].strip()
    return insns


def functions(path, offsets, counts):
    """Samples per function name of a mapped ELF file (addr2line on its file offsets)."""
    top = counts.most_common(400)
    out = subprocess.run(['addr2line', '-f', '-C', '-e', path] + [hex(offsets[a]) for a, _ in top],
                         capture_output=True, text=True).stdout.splitlines()
    by_name = collections.Counter()
    for i, (_, n) in enumerate(top):
        by_name[out[2 * i] if 2 * i < len(out) else '?'] += n
    return by_name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--top', type=int, default=25)
    args = ap.parse_args()
    samples = [int(x, 16) for x in open(os.path.join(args.dir, 'samples.txt'))]
    maps = read_maps(os.path.join(args.dir, 'maps.txt'))
    total = len(samples)
    if total == 0:
        print('no samples')
        return
    pct = lambda n: f'{100.0 * n / total:5.1f}%'
    starts = [m[0] for m in maps]
    per_map = collections.defaultdict(collections.Counter)
    for s in samples:
        i = bisect.bisect_right(starts, s) - 1  # the mapping starting at or before s, if it holds s
        per_map[maps[i] if i >= 0 and s < maps[i][1] else None][s] += 1
    in_map = {m: sum(c.values()) for m, c in per_map.items()}
    print(f'{total} samples')
    shares = collections.Counter()
    for m, n in in_map.items():
        shares[map_name(m)] += n
    for name, n in shares.most_common(10):
        print(f'  {pct(n)}  {name}')
    for m, c in per_map.items():
        if m is None or not m[4].startswith('/') or in_map[m] < 0.01 * total:
            continue
        print(f'\nhottest functions in {m[4]}:')
        offsets = {a: a - m[0] + m[2] for a in c}
        for name, n in functions(m[4], offsets, c).most_common(8):
            print(f'  {pct(n)}  {name[:100]}')
    for m, c in sorted(per_map.items(), key=lambda kv: -in_map[kv[0]]):
        dump = m and os.path.join(args.dir, f'code_{m[0]:x}.bin')
        if not m or m[4] or not os.path.exists(dump) or in_map[m] < 0.01 * total:
            continue
        insns = disassemble(dump, m[0])
        addrs = sorted(insns)
        print(f'\nJIT code at {m[0]:#x} ({pct(in_map[m])} of samples):')
        loops = []
        for a in addrs:
            j = re.match(r'j\w+\s+0x([0-9a-f]+)', insns[a])
            if j and int(j.group(1), 16) < a:
                t = int(j.group(1), 16)
                loops.append((sum(n for x, n in c.items() if t <= x <= a), t, a))
        print('  loops (from the target of a backward jump to the jump):')
        for n, t, a in sorted(loops, reverse=True)[:8]:
            print(f'    {pct(n)}  {t - m[0]:#x}..{a - m[0]:#x}')
        regions = collections.Counter()
        for x, n in c.items():
            regions[(x - m[0]) // 256 * 256] += n
        print('  256-byte regions (offset from the mapping):')
        for r, n in sorted(regions.items()):
            if n >= 0.005 * total:
                print(f'    {r:#7x}  {pct(n)}')
        print('  instructions:')
        for x, n in c.most_common(args.top):
            print(f'    {x - m[0]:#7x}  {pct(n)}  {insns.get(x, "?")[:80]}')


if __name__ == '__main__':
    main()
