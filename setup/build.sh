#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds trainplan in build/.
# Arguments name targets to build (default: everything, tests and benchmarks too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
