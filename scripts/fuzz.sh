#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS (default 60)
# from its seed corpus. Fails on any crash or sanitizer report.
#   scripts/fuzz.sh [SECONDS [TARGET...]]
# Targets: frontend_fuzz, interpreter_fuzz, microcode_reader_fuzz (the default set) and
# jit_diff_fuzz (the JIT against the interpreter; it builds LLVM-linked code with the sanitizers,
# so it runs only when named).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDVEJIT_FUZZ=ON >/dev/null
# Only the fuzz targets (they link the frontend, and the interpreter's kernels): the rest of the
# tree built with clang and the sanitizers took minutes of CI's 20.
shift $(( $# > 0 ? 1 : 0 ))
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=(frontend_fuzz interpreter_fuzz)
  [ -f test/fuzz/microcode_reader_fuzz.cc ] && targets+=(microcode_reader_fuzz)
fi
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
for target in "${targets[@]}"; do
  bin=build-fuzz/test/fuzz/$target
  corpus_seed=test/fuzz/corpus/${target%_fuzz}
  [ -d "$corpus_seed" ] || corpus_seed=test/fuzz/corpus/${target%_reader_fuzz}
  work=$(mktemp -d)
  seeds_written=0
  if [ "$target" = interpreter_fuzz ] || [ "$target" = jit_diff_fuzz ]; then  # seeds.h's, written
    seeds_written=1
    corpus_seed=$(mktemp -d)
    DVEJIT_FUZZ_WRITE_SEEDS="$corpus_seed" "$bin"
  fi
  echo "fuzz: $target for ${seconds}s (seeds: $corpus_seed)"
  "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work" "$corpus_seed" 2>&1 | tail -n 5
  rm -rf "$work"
  if [ "$seeds_written" = 1 ]; then rm -rf "$corpus_seed"; fi
done
