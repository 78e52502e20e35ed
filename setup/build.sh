#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds trainplan in build/.
# Arguments name targets to build (default: everything, tests and benchmarks too);
# with targets named, only the packages the program needs are installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then bash setup/install-deps.sh core; else bash setup/install-deps.sh; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
