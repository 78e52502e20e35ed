#!/usr/bin/env bash
# Installs and builds as needed, then runs the default scenario:
# Llama 2 7B on trn1.32xlarge (seed document 002).
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/build.sh
./build/trainplan estimate --model llama2-7b --hardware trn1.32xlarge --instances 128 \
  --tp 8 --pp 1 --sp --seq-len 4096 --global-batch 1024 --micro-batch 1 \
  --recompute selective --zero 1 --precision bf16-sr
