torchrun pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 --num-layers 2 --hidden-size 1073741824 --num-attention-heads 1 --vocab-size 100 --swiglu
