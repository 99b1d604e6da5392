#!/usr/bin/env bash
# The main job: build, then replay the built-in batch-norm training step (forward statistics
# and backward chain, 128 channels x 4096 elements) with its accuracy against float64 and its
# speed: fp32 and bf16 on the interpreter, then fp32 compiled by the JIT, on one thread and on
# every core.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/tools/dvejit train-step --dtype fp32 --elements 4096 --steps 10
./build/tools/dvejit train-step --dtype bf16 --elements 4096 --steps 10
./build/tools/dvejit train-step --dtype fp32 --elements 4096 --steps 10 --tier jit
./build/tools/dvejit train-step --dtype fp32 --elements 4096 --steps 10 --tier jit --threads "$(( $(nproc) < 256 ? $(nproc) : 256 ))"
