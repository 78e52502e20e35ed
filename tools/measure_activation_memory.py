#!/usr/bin/env python3
"""Measure the activation memory of a transformer's training step with PyTorch:
the bytes autograd keeps for backward after the forward pass, and on CUDA the
peak allocated during forward + backward, beside the parameters and gradients.

Two layer families, each written here op by op as the named code runs it, so
that trainplan's activation terms (src/cost/memory) can be checked against a
measurement rather than a formula alone:
  bert  - post-LN BERT encoder with unfused attention (matmul, scale, mask add,
          softmax, dropout, matmul), dropout after each projection, residual
          add then LayerNorm, and GELU computed as x*0.5*(1+erf(x/1.41421))
          (--gelu erf, the expression NVIDIA's BERT modeling.py scripts) or
          torch's fused gelu (--gelu fused); a 2-logit QA head and its loss.
  llama - pre-norm decoder: RMSNorm with an FP32 upcast (as Hugging Face's
          LlamaRMSNorm / Qwen2RMSNorm), QKV with optional bias, rotary
          embedding, scaled_dot_product_attention (flash on CUDA), SwiGLU MLP,
          untied LM head, loss on logits.float() (Hugging Face's causal LM loss).
          Separate Q, K, V and gate / up projections, as Hugging Face's Llama
          and Qwen2 modeling code has them; attention through the flash kernel.
          --checkpoint block wraps each block in torch.utils.checkpoint
          (use_reentrant=True, as Hugging Face's gradient checkpointing did in 2023).

Saved bytes: the sum over distinct storages that autograd's saved-tensor hooks
see during forward, parameters excluded. Peak (CUDA only): max_memory_allocated
over forward + backward less memory_allocated before it, with the gradients
already allocated (zero_grad(set_to_none=False) after a warm-up step).

Example:
  python3 tools/measure_activation_memory.py --family bert --layers 24 --hidden 1024 \
      --heads 16 --ffn 4096 --vocab 30528 --seq-len 384 --micro-batch 1,2,4 --dtype fp16 --out bert.json
"""
import argparse
import json
import math
import platform
import sys

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn


def erf_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn, gelu, dropout):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.up_weight = nn.Parameter(torch.empty(ffn, hidden).normal_(0, 0.02))
        self.up_bias = nn.Parameter(torch.zeros(ffn))
        self.down = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.gelu, self.p = gelu, dropout

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, v = self.split(self.q(x)), self.split(self.v(x))
        k = self.split(self.k(x)).transpose(-1, -2)
        scores = torch.matmul(q, k) / math.sqrt(self.head_dim) + mask
        probs = F.dropout(torch.softmax(scores, dim=-1), self.p, self.training)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().flatten(2)
        a = self.ln1(F.dropout(self.attn_out(ctx), self.p, self.training) + x)
        y = F.linear(a, self.up_weight)
        h = erf_gelu(y + self.up_bias) if self.gelu == "erf" else F.gelu(y + self.up_bias)
        return self.ln2(F.dropout(self.down(h), self.p, self.training) + a)


class Bert(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.pos = nn.Embedding(a.seq_len, a.hidden)
        self.ln = nn.LayerNorm(a.hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(a.hidden, a.heads, a.ffn, a.gelu, 0.1) for _ in range(a.layers))
        self.qa = nn.Linear(a.hidden, 2)

    def forward(self, ids):
        x = F.dropout(self.ln(self.embed(ids) + self.pos.weight[: ids.shape[1]]), 0.1, self.training)
        mask = torch.zeros(ids.shape[0], 1, 1, ids.shape[1], dtype=x.dtype, device=x.device)
        for layer in self.layers:
            x = layer(x, mask)
        start, end = self.qa(x).split(1, dim=-1)
        target = torch.zeros(ids.shape[0], dtype=torch.long, device=ids.device)
        return (F.cross_entropy(start.squeeze(-1), target) + F.cross_entropy(end.squeeze(-1), target)) / 2


class RMSNorm(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        x32 = x.to(torch.float32)
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * x32.to(x.dtype)


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn, qkv_bias):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.norm1, self.norm2 = RMSNorm(hidden), RMSNorm(hidden)
        self.q = nn.Linear(hidden, heads * self.head_dim, bias=qkv_bias)
        self.k = nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.v = nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.o = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate, self.up = nn.Linear(hidden, ffn, bias=False), nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        n = self.norm1(x)
        q, k, v = self.q(n), self.k(n), self.v(n)
        q = rotate(q.view(b, s, self.heads, self.head_dim).transpose(1, 2), cos, sin)
        k = rotate(k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2), cos, sin)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.kv_heads != self.heads:
            k, v = (t.repeat_interleave(self.heads // self.kv_heads, dim=1) for t in (k, v))
        if hasattr(F, "scaled_dot_product_attention") and q.is_cuda:  # the flash kernel, as HF's sdpa / flash_attention_2
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif hasattr(F, "scaled_dot_product_attention"):
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2: the unfused equivalent, for tests on CPU
            causal = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            scores = (q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)).masked_fill(causal, float("-inf"))
            attn = torch.softmax(scores, dim=-1) @ v
        x = x + self.o(attn.transpose(1, 2).reshape(b, s, -1))
        n = self.norm2(x)
        return x + self.down(F.silu(self.gate(n)) * self.up(n))


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.blocks = nn.ModuleList(
            LlamaBlock(a.hidden, a.heads, a.kv_heads or a.heads, a.ffn, a.qkv_bias) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        self.checkpoint, self.head_dim = a.checkpoint, a.hidden // a.heads

    def forward(self, ids):
        s = ids.shape[1]
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, device=ids.device).float() / self.head_dim))
        freqs = torch.outer(torch.arange(s, device=ids.device).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        x = self.embed(ids)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for block in self.blocks:
            if self.checkpoint == "block":
                x = torch.utils.checkpoint.checkpoint(block, x, cos, sin, use_reentrant=True)
            else:
                x = block(x, cos, sin)
        logits = self.head(self.norm(x)).float()
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def saved_bytes_of(model, run):
    """Runs `run` under saved-tensor hooks; returns (its result, bytes of distinct non-parameter storages saved)."""
    def storage(t):
        return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()  # PyTorch < 2

    params = {storage(p).data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        st = storage(t)
        if st.data_ptr() not in params:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run()
    return out, sum(seen.values())


def measure(model, a, device, micro_batch, seq_len):
    ids = torch.randint(0, a.vocab, (micro_batch, seq_len), device=device)
    cuda = device.type == "cuda"
    for _ in range(a.warmup):
        model(ids).backward()
    model.zero_grad(set_to_none=False)
    if cuda:
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    loss, saved = saved_bytes_of(model, lambda: model(ids))
    row = {"micro_batch": micro_batch, "seq_len": seq_len, "saved_bytes": saved}
    if cuda:
        torch.cuda.synchronize()
        row["after_forward_bytes"] = torch.cuda.memory_allocated() - base
    loss.backward()
    if cuda:
        torch.cuda.synchronize()
        row["peak_bytes"] = torch.cuda.max_memory_allocated() - base
    del loss
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", choices=["bert", "llama"], required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, default=0, help="llama: key/value heads (default: --heads)")
    p.add_argument("--ffn", type=int, required=True)
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--qkv-bias", action="store_true", help="llama: bias on the fused QKV projection (Qwen)")
    p.add_argument("--gelu", choices=["erf", "fused"], default="erf", help="bert: GELU as an erf expression or torch's fused op")
    p.add_argument("--checkpoint", choices=["none", "block"], default="none", help="llama: recompute each block")
    p.add_argument("--seq-len", default="384", help="comma-separated sequence lengths")
    p.add_argument("--micro-batch", default="1", help="comma-separated micro-batches")
    p.add_argument("--dtype", choices=["fp16", "bf16", "fp32"], default="bf16")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--warmup", type=int, default=2, help="training steps before the measured one")
    p.add_argument("--label", default="", help="a name for this configuration in the output")
    p.add_argument("--out", help="append the result as one JSON line to this file (default: print it)")
    a = p.parse_args(argv)
    device = torch.device(a.device)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[a.dtype]
    torch.manual_seed(0)
    a.seq_len_list = [int(s) for s in a.seq_len.split(",")]
    a.seq_len = max(a.seq_len_list)
    build = Bert if a.family == "bert" else Llama
    if hasattr(torch.device, "__enter__"):  # PyTorch 2: build in place on the device
        with device:
            model = build(a).to(dtype)
    else:
        model = build(a).to(dtype).to(device)
    model.train()
    rows = [measure(model, a, device, b, s)
            for s in a.seq_len_list for b in (int(m) for m in a.micro_batch.split(","))]
    result = {
        "label": a.label or a.family, "family": a.family, "layers": a.layers, "hidden": a.hidden,
        "heads": a.heads, "kv_heads": a.kv_heads or a.heads, "ffn": a.ffn, "vocab": a.vocab,
        "qkv_bias": a.qkv_bias, "gelu": a.gelu if a.family == "bert" else None,
        "checkpoint": a.checkpoint if a.family == "llama" else "none", "dtype": a.dtype,
        "parameters": sum(t.numel() for t in model.parameters()),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__, "runs": rows,
    }
    line = json.dumps(result)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")
    else:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
