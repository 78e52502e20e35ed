#!/usr/bin/env bash
# Installs and builds as needed, then runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
