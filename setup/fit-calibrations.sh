#!/usr/bin/env bash
# Refits every committed calibration in data/calibration from the measured runs
# in data/measured: one per accelerator family (all its stacks) and one per
# (family, stack) with published runs. Run after changing the corpus or the model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash setup/build.sh trainplan
T=./build/trainplan
D=data/calibration
# family: a hardware of that family, then the stacks fitted on their own
fit() {
  local hardware=$1 family=$2; shift 2
  $T calibrate fit --hardware "$hardware" --out "$D/$family.json" | tail -1
  for stack in "$@"; do
    $T calibrate fit --hardware "$hardware" --stack "$stack" --out "$D/$family+$stack.json" | tail -1
  done
}
fit dgx-a100-80gb a100 composer-fsdp megatron-deepspeed megatron-deepspeed-fp16 megatron-lm-2021 torchtitan torchtitan-fused-rmsnorm
fit dgx-h100 h100 composer-fsdp megatron-lm nemo nemo-24.07 torchtitan torchtitan-compile torchtitan-compile-2025
fit dl1.24xlarge gaudi1 deepspeed-habana
fit hls-gaudi2 gaudi2 megatron-deepspeed-habana optimum-habana
fit hls-gaudi3 gaudi3 optimum-habana
fit trn1.32xlarge trainium1 neuronx-nemo-megatron neuronx-distributed neuronx-distributed-2.20 torch-neuronx-hf torch-neuronx-hf-2.20 torch-neuronx-hf-2.21
# The held-out error bands that estimate puts on its figures (the test
# ErrorBands.ShippedFileMatchesTheCorpus fails until they are regenerated).
$T validate --hold-out source --write-error-bands data/error-bands.json > /dev/null
