#!/usr/bin/env bash
# Written by trainplan for Megatron-LM core_r0.13.0 (option names from NVIDIA/Megatron-LM@73a28a1078a8da8e6062199f7f1079a52173ab77 megatron/training/arguments.py).
# llama2-70b on 16 x p5.48xlarge, stack megatron-lm. Add your data, tokenizer, optimizer and checkpoint options.
# trainplan: model=llama2-70b hardware=p5.48xlarge stack=megatron-lm
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1  # asserted by Megatron-LM when TP > 1 or CP > 1
torchrun --nnodes 16 --nproc_per_node 8 --node_rank "${NODE_RANK:-0}" --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-6000}" \
  pretrain_gpt.py \
  --tensor-model-parallel-size 8 \
  --pipeline-model-parallel-size 4 \
  --num-virtual-stages-per-pipeline-rank 2 \
  --sequence-parallel \
  --micro-batch-size 1 \
  --global-batch-size 1024 \
  --seq-length 4096 \
  --max-position-embeddings 4096 \
  --bf16 \
  --use-distributed-optimizer \
  --recompute-granularity selective \
  --overlap-grad-reduce \
  --overlap-param-gather \
  --num-layers 80 \
  --hidden-size 8192 \
  --ffn-hidden-size 28672 \
  --num-attention-heads 64 \
  --group-query-attention \
  --num-query-groups 8 \
  --position-embedding-type rope \
  --rotary-base 10000 \
  --normalization RMSNorm \
  --swiglu \
  --untie-embeddings-and-output-weights \
  --disable-bias-linear \
  --attention-dropout 0.0 \
  --hidden-dropout 0.0 \
  --vocab-size 32000 \
  --make-vocab-size-divisible-by 1 \
  "$@"
