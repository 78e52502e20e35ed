torchrun pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 --num-layers-per-virtual-pipeline-stage 2
