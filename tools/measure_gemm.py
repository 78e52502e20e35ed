#!/usr/bin/env python3
"""Time the GEMMs of one transformer layer and the LM head on this machine's
accelerator with PyTorch, and write the CSV that
`trainplan calibrate import --gemm FILE.csv --hardware NAME` fits into the GEMM
shape-efficiency curve of a calibration.

The shapes are the ones trainplan's cost model prices (src/cost/layer_compute.cpp)
for one micro-batch on one tensor-parallel rank, with T = micro-batch x seq-len
tokens: fused QKV (T, (heads + 2 kv_heads)/tp x head_dim, hidden), attention
output projection (T, hidden, hidden/tp), MLP up (+gate for SwiGLU)
(T, ffn/tp (x2), hidden), MLP down (T, hidden, ffn/tp) and the LM head
(T, padded vocab/tp, hidden). Each linear layer runs three GEMMs: forward
(T, out, in), input gradient (T, in, out) and weight gradient (in, out, T),
read transposed as the backward pass reads them. (m, n, k): C (m x n) = A (m x k) B (k x n).

Devices: CUDA (torch.cuda), AWS Neuron (torch-neuronx, through torch_xla),
Habana Gaudi (habana_frameworks.torch), else the CPU. --device picks one;
auto takes the first present in that order. Only the CPU path is exercised by
trainplan's tests (Debian's python3-torch); the others follow each vendor's
documented synchronisation (torch.cuda.synchronize, xm.mark_step +
xm.wait_device_ops, htcore.mark_step + torch.hpu.synchronize).

Each GEMM: a warm-up, then calls in batches of at least --min-time seconds,
--reps batches; the CSV holds the median seconds per call (--statistic min: the
fastest batch, for a machine shared with other work, where contention only adds
time) and the spread (max - min) / median of the batches.

Examples:
  python3 tools/measure_gemm.py --model llama2-7b --tp 8 --micro-batch 1 --seq-len 4096 --out h100-gemm.csv
  python3 tools/measure_gemm.py --model path/to/config.json --tp 4 --micro-batch 2 --seq-len 2048 --out gemm.csv
  /usr/bin/python3 tools/measure_gemm.py --model megatron-ci-gpt-12l-512h --seq-len 256 --device cpu --out cpu.csv
"""
import argparse
import csv
import datetime
import json
import math
import os
import pathlib
import platform
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Refusal(Exception):
    """Bad input, said in one line."""


# ---------------------------------------------------------------- the model
def load_model(name_or_path):
    """A trainplan model (models/NAME.json or a path) or a Hugging Face config.json, as the shapes need it."""
    looks_like_path = "/" in name_or_path or name_or_path.endswith(".json")
    path = pathlib.Path(name_or_path) if looks_like_path else ROOT / "models" / (name_or_path + ".json")
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise Refusal(f"{path}: no such model file (a name from trainplan's models/ or a path to a JSON file)")
    except (OSError, ValueError) as error:
        raise Refusal(f"{path}: not a readable JSON model ({error})")
    model = load_model_dict(data, path)
    # Named as a user of the repository would type it when it is one of trainplan's models.
    model["path"] = str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)
    return model


def load_model_dict(data, path):
    """The shape figures of a parsed trainplan model or Hugging Face config; `path` names it in refusals."""
    path = pathlib.Path(path)
    if not isinstance(data, dict):
        raise Refusal(f"{path}: expected a JSON object describing a model")

    def whole(key):
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise Refusal(f"{path}: {key}: expected a whole number >= 1, got {value!r}")
        return value

    if "architectures" in data:  # Hugging Face, as trainplan's spec/load.cpp reads it
        arch = data["architectures"][0] if isinstance(data["architectures"], list) and data["architectures"] else "?"
        heads = whole("num_attention_heads")
        model = {
            "name": data.get("_name_or_path") or path.parent.name or path.stem,
            "hidden": whole("hidden_size"),
            "heads": heads,
            "kv_heads": whole("num_key_value_heads") if "num_key_value_heads" in data else heads,
            "ffn": whole("intermediate_size"),
            "vocab": whole("vocab_size"),
            "pad": 1,  # a HF vocab_size is already padded as trained
            "swiglu": arch in ("LlamaForCausalLM", "MistralForCausalLM"),
        }
    else:
        if "mlp" not in data:
            raise Refusal(f"{path}: expected a trainplan model (hidden, heads, ffn_hidden, mlp, ...) or a Hugging Face "
                          "config.json (architectures, hidden_size, ...)")
        model = {
            "name": data.get("name", path.stem),
            "hidden": whole("hidden"),
            "heads": whole("heads"),
            "kv_heads": whole("kv_heads"),
            "ffn": whole("ffn_hidden"),
            "vocab": whole("vocab"),
            "pad": whole("vocab_pad_multiple"),
            "swiglu": data["mlp"] == "swiglu",
        }
    if model["hidden"] % model["heads"]:
        raise Refusal(f"{path}: heads ({model['heads']}) must divide hidden ({model['hidden']})")
    return model


def gemm_shapes(model, tp, micro_batch, seq_len):
    """(label, m, n, k) per GEMM, as src/cost/layer_compute.cpp prices them; identical shapes once."""
    h, heads, kv, f = model["hidden"], model["heads"], model["kv_heads"], model["ffn"]
    for what, total in (("heads", heads), ("hidden", h), ("ffn hidden", f)):
        if total % tp:
            raise Refusal(f"--tp {tp} must divide the model's {what} ({total})")
    d = h // heads
    kv_local = kv // tp if kv % tp == 0 else 1  # KV heads replicated when TP exceeds them
    multiple = model["pad"] * tp
    vocab_local = (model["vocab"] + multiple - 1) // multiple * multiple // tp
    tokens = micro_batch * seq_len
    linears = [
        ("qkv", (heads // tp + 2 * kv_local) * d, h),
        ("attn-out", h, h // tp),
        ("mlp-up" + ("+gate" if model["swiglu"] else ""), f // tp * (2 if model["swiglu"] else 1), h),
        ("mlp-down", h, f // tp),
        ("lm-head", vocab_local, h),
    ]
    shapes, seen = [], {}
    for name, out_features, in_features in linears:
        for step, (m, n, k) in (("forward", (tokens, out_features, in_features)),
                                ("dgrad", (tokens, in_features, out_features)),
                                ("wgrad", (in_features, out_features, tokens))):
            label = f"{name} {step}"
            if (m, n, k) in seen:
                shapes[seen[(m, n, k)]][0] += " = " + label
                continue
            seen[(m, n, k)] = len(shapes)
            shapes.append([label, m, n, k, step])
    return shapes


# ---------------------------------------------------------------- the device
class Device:
    """Where the GEMMs run: allocation, the call that waits for queued work, and names for the CSV."""

    def __init__(self, torch, kind):
        self.torch, self.kind = torch, kind
        self.sync = lambda: None
        self.step = lambda: None  # lazy backends run traced work at a step boundary
        if kind == "cuda":
            self.device = torch.device("cuda")
            self.name = torch.cuda.get_device_name(0)
            self.sync = torch.cuda.synchronize
        elif kind == "neuron":
            import torch_xla.core.xla_model as xm  # torch-neuronx runs PyTorch through XLA
            self.device = xm.xla_device()
            self.name = "AWS Neuron " + str(xm.xla_device_hw(self.device))
            self.step = xm.mark_step
            self.sync = xm.wait_device_ops
        elif kind == "hpu":
            import habana_frameworks.torch.core as htcore
            self.device = torch.device("hpu")
            self.name = torch.hpu.get_device_name()
            self.step = htcore.mark_step
            self.sync = torch.hpu.synchronize
        else:
            self.device = torch.device("cpu")
            self.name = cpu_name()

    def matrices(self, dtype, *shapes):
        return [self.torch.randn(*s, dtype=dtype, device=self.device) for s in shapes]


def cpu_name():
    """The CPU's model name as /proc/cpuinfo gives it: trainplan checks it against the host it measures."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def pick_device(torch, wanted):
    def has_neuron():
        try:
            import torch_neuronx  # noqa: F401
            return True
        except ImportError:
            return False

    def has_hpu():
        try:
            import habana_frameworks.torch.core  # noqa: F401
            return hasattr(torch, "hpu") and torch.hpu.is_available()
        except ImportError:
            return False

    present = {"cuda": lambda: torch.cuda.is_available(), "neuron": has_neuron, "hpu": has_hpu, "cpu": lambda: True}
    if wanted != "auto":
        if not present[wanted]():
            raise Refusal(f"--device {wanted}: not available to this PyTorch")
        return Device(torch, wanted)
    for kind in ("cuda", "neuron", "hpu", "cpu"):
        if present[kind]():
            return Device(torch, kind)


# ---------------------------------------------------------------- timing
def gemm_call(dev, dtype, m, n, k, step):
    """The call the backward or forward pass makes for this (m, n, k), with its operands' layout."""
    torch = dev.torch
    out_kw = dev.kind in ("cpu", "cuda")  # writing into one buffer keeps allocation out of the timing
    if step == "forward":  # y = x W^T, W stored [out, in]
        x, w = dev.matrices(dtype, (m, k), (n, k))
        a, b = x, w.t()
    elif step == "dgrad":  # dx = dy W, W stored [out, in] = [k, n]
        dy, w = dev.matrices(dtype, (m, k), (k, n))
        a, b = dy, w
    else:  # dW^T = x^T dy: the activations read transposed
        x, dy = dev.matrices(dtype, (k, m), (k, n))
        a, b = x.t(), dy
    if out_kw:
        c = torch.empty(m, n, dtype=dtype, device=dev.device)
        return lambda: torch.mm(a, b, out=c)
    return lambda: torch.mm(a, b)


def time_call(dev, call, min_time_s, reps, statistic):
    def batch(count):
        dev.sync()
        start = time.perf_counter()
        for _ in range(count):
            call()
            dev.step()
        dev.sync()
        return time.perf_counter() - start

    batch(2)  # warm-up: first-call set-up, graph compilation on lazy backends
    count = 1
    while True:
        elapsed = batch(count)
        if elapsed >= min_time_s:
            break
        count = max(count + 1, math.ceil(count * min_time_s / max(elapsed, 1e-9) * 1.2))
    per_call = sorted(batch(count) / count for _ in range(reps))
    median = statistics.median(per_call)
    return (median if statistic == "median" else per_call[0]), (per_call[-1] - per_call[0]) / median


# ---------------------------------------------------------------- main
def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--model", required=True,
                        help="a trainplan model name (models/NAME.json), a trainplan model file or a Hugging Face "
                             "config.json")
    parser.add_argument("--tp", type=int, default=1, help="tensor-parallel degree of the plan (default 1)")
    parser.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch (default 1)")
    parser.add_argument("--seq-len", type=int, required=True, help="sequence length in tokens")
    parser.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16", help="GEMM dtype (default bf16)")
    parser.add_argument("--device", choices=["auto", "cuda", "neuron", "hpu", "cpu"], default="auto",
                        help="where to run (default auto: cuda, neuron, hpu, then cpu)")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU: threads every pool uses (PyTorch's, OpenMP's, the BLAS's; default: every CPU this "
                             "process may run on); the CSV records it, and trainplan measures the peak over as many")
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timed batch (default 0.05)")
    parser.add_argument("--reps", type=int, default=5, help="timed batches per GEMM (default 5)")
    parser.add_argument("--statistic", choices=["median", "min"], default="median",
                        help="seconds per call: the median batch (default) or the fastest (a shared machine)")
    parser.add_argument("--out", required=True, help="CSV to write ('-': standard output)")
    args = parser.parse_args(argv)
    try:
        for flag, value, lo in (("--tp", args.tp, 1), ("--micro-batch", args.micro_batch, 1),
                                ("--seq-len", args.seq_len, 1), ("--reps", args.reps, 1), ("--threads", args.threads, 0)):
            if value < lo:
                raise Refusal(f"{flag} {value}: expected a whole number >= {lo}")
        if not (args.min_time > 0):
            raise Refusal(f"--min-time {args.min_time}: expected seconds above 0")
        model = load_model(args.model)
        shapes = gemm_shapes(model, args.tp, args.micro_batch, args.seq_len)
        # Before PyTorch loads: its BLAS (OpenBLAS in Debian's build) keeps its own thread pool, which
        # torch.set_num_threads does not reach; unset, it took every core while PyTorch reported 1 thread.
        threads = args.threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        for pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
            os.environ[pool] = str(threads)
        try:
            import torch
        except ImportError:
            raise Refusal("PyTorch is not importable by " + sys.executable + " (Debian: apt-get install python3-torch)")
        dev = pick_device(torch, args.device)
        if dev.kind == "cpu":
            torch.set_num_threads(threads)
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
        rows = []
        for i, (label, m, n, k, step) in enumerate(shapes):
            print(f"[{i + 1}/{len(shapes)}] {label}: m {m}, n {n}, k {k}", file=sys.stderr, flush=True)
            seconds, spread = time_call(dev, gemm_call(dev, dtype, m, n, k, step), args.min_time, args.reps,
                                        args.statistic)
            rows.append({"m": m, "n": n, "k": k, "dtype": args.dtype, "seconds": f"{seconds:.6e}",
                         "device": dev.name, "label": label, "spread": f"{spread:.4f}"})
        busy = (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)
    except Refusal as refusal:
        print(f"measure_gemm: {refusal}", file=sys.stderr)
        return 2
    meta = {
        "tool": "tools/measure_gemm.py",
        "backend": dev.kind,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "model": f"{model['name']} ({model['path']})",
        "plan": f"tp {args.tp}, micro-batch {args.micro_batch}, seq-len {args.seq_len}",
        "timing": f"{args.statistic} of {args.reps} batches of >= {args.min_time} s each, after a warm-up",
        "date": datetime.date.today().isoformat(),
    }
    if dev.kind == "cpu":
        meta["threads"] = str(threads)
        # CPU seconds per wall second while timing: about `threads` when every pool kept to them.
        meta["cpu_busy"] = f"{busy:.2f}"
        if busy > threads + 0.25:
            print(f"measure_gemm: warning: {busy:.2f} CPUs busy while timing with {threads} threads: a pool ran "
                  "more threads than recorded, so the peak trainplan measures will be too low", file=sys.stderr)
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    try:
        out.write("# GEMM timings for `trainplan calibrate import --gemm`\n")
        for key, value in meta.items():
            out.write(f"# {key}: {value}\n")
        writer = csv.DictWriter(out, fieldnames=["m", "n", "k", "dtype", "seconds", "device", "label", "spread"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    finally:
        if out is not sys.stdout:
            out.close()
    if args.out != "-":
        print(f"measure_gemm: {len(rows)} GEMMs on {dev.name} ({dev.kind}) written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
