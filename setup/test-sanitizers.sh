#!/usr/bin/env bash
# Builds the whole project under AddressSanitizer and UndefinedBehaviorSanitizer
# (GCC, Debian 12) in build-sanitize/ and runs the test suite there: any
# out-of-bounds access, use-after-free, leak or undefined behaviour fails a test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/install-deps.sh
# -g1 (line tables only): reports keep file:line while the build stays small
# enough for CI's disk (with -g it took 5.6 GB, and a CI run failed on "No space left on device").
flags="-O1 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# Debug keeps assertions on; its default -g is replaced, or it would follow -g1 and win.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-sanitize -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)"
