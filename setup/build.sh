#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds trainplan in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
