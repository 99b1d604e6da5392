#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS (default 60)
# from its seed corpus, up to nproc targets at once. Fails on any crash or sanitizer report; the
# inputs that caused it are kept in build-fuzz/artifacts/.
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
# Each target is one libFuzzer process (one core): up to nproc of them run at once, so each
# still fuzzes for SECONDS of a core (on CI's two cores three targets take 90 s, not 135). A
# target's whole output goes to its log; its last lines are printed, all of them on a failure.
# Crash, timeout and slow-unit inputs are written to build-fuzz/artifacts/.
artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
logs=$(mktemp -d)
fuzz_one() {
  local target=$1 bin=build-fuzz/test/fuzz/$1 corpus_seed work status=0
  corpus_seed=test/fuzz/corpus/${target%_fuzz}
  [ -d "$corpus_seed" ] || corpus_seed=test/fuzz/corpus/${target%_reader_fuzz}
  work=$(mktemp -d)
  local seeds_written=0
  if [ "$target" = interpreter_fuzz ] || [ "$target" = jit_diff_fuzz ]; then  # seeds.h's, written
    seeds_written=1
    corpus_seed=$(mktemp -d)
    DVEJIT_FUZZ_WRITE_SEEDS="$corpus_seed" "$bin"
  fi
  echo "fuzz: $target for ${seconds}s (seeds: $corpus_seed)"
  "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$target-" -print_final_stats=1 "$work" "$corpus_seed" 2>&1 \
    || status=$?
  rm -rf "$work"
  if [ "$seeds_written" = 1 ]; then rm -rf "$corpus_seed"; fi
  return "$status"
}
parallel=$(nproc)
declare -A pid_of
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$target" >"$logs/$target.log" 2>&1 &
  pid_of[$target]=$!
done
failed=()
for target in "${targets[@]}"; do
  if wait "${pid_of[$target]}"; then
    head -n 1 "$logs/$target.log"
    tail -n 5 "$logs/$target.log"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; its output:"
    cat "$logs/$target.log"
  fi
done
rm -rf "$logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in $artifacts/)"
  exit 1
fi
