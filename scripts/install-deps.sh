#!/usr/bin/env bash
# The one install step: every Debian 12 package dvejit needs to build, test and benchmark.
# Run as root on a fresh machine. Nothing else is downloaded.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ninja-build git
  clang libclang-rt-14-dev            # the sanitizer build and the fuzz targets (libFuzzer)
  llvm-16-dev llvm-16-tools           # ORC JIT; FileCheck for golden IR tests
  libxsimd-dev xtl-dev                # SIMD kernels (xsimd 8.1 needs xtl)
  libabsl-dev                         # absl::Status / StatusOr
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev                  # microcode dve_info.json
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"
