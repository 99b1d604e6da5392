#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS of a core
# (default 60) from its seed corpus, up to nproc fuzzer processes at once. Fails on any crash or
# sanitizer report; the inputs that caused it are kept in build-fuzz/artifacts/.
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
# Each target fuzzes for SECONDS of a core, one libFuzzer process (one core) at a time, up to
# nproc processes at once. Where the targets do not fill the cores evenly (three targets on CI's
# two: 45 s with both busy, then 45 s with one idle), each target's SECONDS are cut into PARTS
# runs one after another on the same corpus (the later runs start from what the earlier found):
# on two cores, three targets in two runs each take 67.5 s instead of 90. PARTS is the count
# (1 to 4, runs of at least 15 s) that ends soonest. A run's whole output goes to its log; its
# last lines are printed, all of them on a failure. Crash, timeout and slow-unit inputs are
# written to build-fuzz/artifacts/.
artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
logs=$(mktemp -d)
parallel=$(nproc)
parts=1
best=$(( (${#targets[@]} + parallel - 1) / parallel * seconds ))
for p in 2 3 4; do
  (( seconds / p >= 15 )) || break
  ends=$(( (${#targets[@]} * p + parallel - 1) / parallel * seconds / p ))
  (( ends >= seconds )) || ends=$seconds  # a target's runs never overlap
  if (( ends < best )); then best=$ends; parts=$p; fi
done
declare -A corpus_of seeds_of written_seeds
for target in "${targets[@]}"; do
  corpus_of[$target]=$(mktemp -d)
  seeds_of[$target]=test/fuzz/corpus/${target%_fuzz}
  [ -d "${seeds_of[$target]}" ] || seeds_of[$target]=test/fuzz/corpus/${target%_reader_fuzz}
  if [ "$target" = interpreter_fuzz ] || [ "$target" = jit_diff_fuzz ]; then  # seeds.h's, written
    seeds_of[$target]=$(mktemp -d)
    written_seeds[$target]=1
    DVEJIT_FUZZ_WRITE_SEEDS="${seeds_of[$target]}" "build-fuzz/test/fuzz/$target"
  fi
done
# Run PART of TARGET, for RUN_SECONDS, in the background: its output goes to its log, its exit
# status to its .status file.
fuzz_run() {
  local target=$1 part=$2 run_seconds=$3 status=0
  {
    echo "fuzz: $target for ${run_seconds}s, run $((part + 1)) of $parts (seeds: ${seeds_of[$target]})"
    "build-fuzz/test/fuzz/$target" -max_total_time="$run_seconds" -max_len=4096 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$artifacts/$target-" -print_final_stats=1 \
      "${corpus_of[$target]}" "${seeds_of[$target]}" 2>&1
  } >"$logs/$target.$part.log" || status=$?
  echo "$status" >"$logs/$target.$part.status"
}
declare -A pid_of
runs=()
for (( part = 0; part < parts; ++part )); do
  for target in "${targets[@]}"; do
    run_seconds=$(( seconds / parts + (part < seconds % parts ? 1 : 0) ))
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    # A target's runs one after another: run k starts from the corpus that run k-1 left.
    if (( part > 0 )); then wait "${pid_of[$target.$((part - 1))]}" || true; fi
    fuzz_run "$target" "$part" "$run_seconds" &
    pid_of[$target.$part]=$!
    runs+=("$target.$part")
  done
done
wait
failed=()
for run in "${runs[@]}"; do
  if [ "$(cat "$logs/$run.status" 2>/dev/null)" = 0 ]; then
    head -n 1 "$logs/$run.log"
    tail -n 5 "$logs/$run.log"
  else
    failed+=("$run")
    echo "fuzz: $run FAILED; its output:"
    cat "$logs/$run.log"
  fi
done
for target in "${targets[@]}"; do
  rm -rf "${corpus_of[$target]}"
  if [ -n "${written_seeds[$target]:-}" ]; then rm -rf "${seeds_of[$target]}"; fi
done
rm -rf "$logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in $artifacts/)"
  exit 1
fi
