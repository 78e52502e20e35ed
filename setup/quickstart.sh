#!/usr/bin/env bash
# Installs and builds as needed, then runs the default scenario: the scaling
# sweep of Llama 2 7B on trn1.32xlarge (seed document 002's workload: seq 4096,
# global batch 1024, BF16 with stochastic rounding) over 1..128 instances,
# printing the scaling table and writing reports/scaling-llama2-7b-trn1.png.
# Builds the Python module too (build/python; README, "Python").
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/build.sh trainplan trainplan_python
mkdir -p reports
./build/trainplan sweep --model llama2-7b --hardware trn1.32xlarge --instances 1..128 \
  --seq-len 4096 --global-batch 1024 --precision bf16-sr \
  --plot reports/scaling-llama2-7b-trn1.png
