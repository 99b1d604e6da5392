#!/usr/bin/env bash
# Where a command's time goes, JIT-compiled code included, without perf counters: runs COMMAND
# with scripts/jit_sampler.c preloaded (a timer samples the instruction pointer) and prints
# scripts/profile_report.py's summary. Samples stay in OUT (default build/profile).
#   scripts/profile-jit.sh [--out DIR] [--period-us N] -- COMMAND [ARGS...]
# Example: where bf16 statistics at 128 × 8192 spend their time
#   scripts/profile-jit.sh -- build/tools/dvejit bench --workload bn_stats \
#       --benchmark_filter=8192/bf16/jit_fused --benchmark_min_time=5
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 [--out DIR] [--period-us N] -- COMMAND [ARGS...]" >&2; exit 2; }
out=build/profile
period=433
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --period-us) period=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
mkdir -p build "$out"
rm -f "$out"/samples.txt "$out"/maps.txt "$out"/code_*.bin
cc -O2 -shared -fPIC -o build/jit_sampler.so scripts/jit_sampler.c -lrt
DVEJIT_SAMPLER_OUT="$(realpath "$out")" DVEJIT_SAMPLER_US="$period" LD_PRELOAD="$PWD/build/jit_sampler.so" "$@"
/usr/bin/python3 scripts/profile_report.py "$out"
