#!/usr/bin/env bash
# Installs a dvejit build into a temporary prefix (`cmake --install`), then configures, builds and
# runs examples/consumer against that prefix alone (-DCMAKE_PREFIX_PATH): the installed headers,
# libdvejit.a and the CMake package must be all a consumer needs.
#   usage: scripts/test-install.sh [BUILD_DIR]    (default: build)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvejit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# What `cmake --install` installs must exist: the CLI and the library (no-ops when built).
cmake --build "$build" --target dvejit dvejit_lib
cmake --install "$build" --prefix "$prefix"

config=$(find "$prefix" -name dvejitConfig.cmake -print -quit)
for f in "$prefix/include/dvejit/dvejit.h" "$prefix/include/dvejit/dvejit_c.h" \
         "$prefix/bin/dvejit" "$prefix/share/dvejit/torch_bn_bench.py" "$config" "$(dirname "$config")/dvejitConfigVersion.cmake" \
         "$(dirname "$config")/dvejitTargets.cmake"; do
  [[ -n "$f" && -f "$f" ]] || { echo "test-install: missing from the install: $f" >&2; exit 1; }
done
[[ -n "$(find "$prefix" -name libdvejit.a -print -quit)" ]] || { echo "test-install: no libdvejit.a" >&2; exit 1; }
# The public headers stand alone: nothing of the source tree is included.
if grep -E '#include "(frontend|runtime|kernels|ir|jit|api)/' "$prefix"/include/dvejit/*.h; then
  echo "test-install: installed headers include internal headers" >&2
  exit 1
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# A sanitizer build installs an instrumented archive: its consumer links the sanitizer runtime.
flags=()
sanitize=$(sed -n 's/^DVEJIT_SANITIZE:BOOL=//p' "$build/CMakeCache.txt")
if [[ "${sanitize^^}" =~ ^(ON|1|TRUE|YES|Y)$ ]]; then
  san="-fsanitize=address,undefined -fno-omit-frame-pointer"
  flags=(-DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san"
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined")
fi
cmake -S "$src/examples/consumer" -B "$tmp/consumer" "${generator[@]}" "${flags[@]}" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
# The package must have come from the prefix, not from anywhere else on the system.
found=$(sed -n 's/^dvejit_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ "$found" == "$prefix"/* ]] || { echo "test-install: dvejit found at '$found', not under $prefix" >&2; exit 1; }
cmake --build "$tmp/consumer"
"$tmp/consumer/consumer"
"$tmp/consumer/consumer_c"
"$prefix/bin/dvejit" --help >/dev/null
echo "test-install: ok (installed to a temporary prefix, consumer built and run)"
