#!/usr/bin/env python3
"""Run Intel Gaudi's run_llama.sh and its fork's argument checks on a script `trainplan export --to habana` wrote.

Usage: /usr/bin/python3 tools/check_habana_args.py --fork DIR SCRIPT [SCRIPT ...]

DIR holds a HabanaAI/Megatron-DeepSpeed checkout of the 1.19.0 branch (trainplan
writes for 891d6db). Each script runs in bash as written, with
MEGATRON_DEEPSPEED_ROOT=DIR, HL_RESULTS_DIR in a temporary folder and a
`deepspeed` first on PATH that records what it would launch instead of launching:
run_llama.sh's own checks (world size, layers over PP, Llama sizes) run as the
script has them. The pretrain_gpt.py arguments it would launch then go through
the fork's megatron/arguments.py parse_args and validate_args, with WORLD_SIZE
from the script's HL_NUM_NODES x HL_DEVICES_PER_NODE, on a host without an HPU:
torch is any CPU build (Debian 12's python3-torch 1.13), and DeepSpeed (its
config arguments, an HPU accelerator), the fork's retro and model helpers and
TransformerConfig are stand-ins, as the argument module needs nothing more of
them. The ds_config run_llama.sh wrote is read back. Prints "ok" with what the
client resolved, or the script's or the client's own error, per script; exits 1
if any fails. Nothing of the client is copied into trainplan: this runs a
checkout you point it at.
"""
import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import types

from one_per_process import check_each

RESOLVED = ["tensor_model_parallel_size", "pipeline_model_parallel_size", "data_parallel_size", "num_layers",
            "hidden_size", "num_attention_heads", "num_key_value_heads", "ffn_hidden_size", "seq_length",
            "micro_batch_size", "global_batch_size", "sequence_parallel", "recompute_granularity", "recompute_method",
            "transformer_impl", "use_fused_sdpa", "rope_theta", "zero_stage", "bf16"]

FAKE_DEEPSPEED = """#!/bin/bash
# Records the launcher's arguments, one per NUL-terminated entry, instead of launching.
printf '%s\\0' "$@" > "$TRAINPLAN_LAUNCH_RECORD"
"""


def launched(fork, script, scratch):
    """Runs the script; returns (world size, pretrain_gpt.py arguments, ds_config) or raises with its error."""
    bin_dir = os.path.join(scratch, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "deepspeed"), "w") as f:
        f.write(FAKE_DEEPSPEED)
    os.chmod(os.path.join(bin_dir, "deepspeed"), 0o755)
    record = os.path.join(scratch, "launch")
    env = dict(os.environ, MEGATRON_DEEPSPEED_ROOT=fork, HL_RESULTS_DIR=os.path.join(scratch, "out"),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), TRAINPLAN_LAUNCH_RECORD=record)
    run = subprocess.run(["bash", os.path.abspath(script)], env=env, cwd=scratch, capture_output=True, text=True)
    if run.returncode != 0 or not os.path.exists(record):
        lines = [l for l in (run.stdout + run.stderr).splitlines() if not l.startswith("+")]
        raise RuntimeError("run_llama.sh exited %d: %s" % (run.returncode, lines[-1] if lines else "(no output)"))
    words = open(record).read().split("\0")[:-1]
    nodes, devices = int(words[words.index("--num_nodes") + 1]), int(words[words.index("--num_gpus") + 1])
    command = shlex.split(words[-1])  # bash -c "$CMD"
    start = next(i for i, w in enumerate(command) if w.endswith("pretrain_gpt.py")) + 1
    argv = command[start:]
    config = next(w.split("=", 1)[1] for w in argv if w.startswith("--deepspeed_config="))
    return nodes * devices, argv, json.load(open(config))


def stand_ins():
    """The modules megatron/arguments.py imports beside torch, as far as it uses them."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def add_config_arguments(parser):  # DeepSpeed's command-line group
        group = parser.add_argument_group("DeepSpeed", "DeepSpeed configurations")
        group.add_argument("--deepspeed", default=False, action="store_true")
        group.add_argument("--deepspeed_config", default=None, type=str)
        group.add_argument("--deepscale", default=False, action="store_true")
        group.add_argument("--deepscale_config", default=None, type=str)
        return parser

    hpu = types.SimpleNamespace(device_name=lambda *a: "hpu", is_bf16_supported=lambda: True,
                                is_fp16_supported=lambda: True, communication_backend_name=lambda: "hccl")
    module("deepspeed", __version__="0.14.4", add_config_arguments=add_config_arguments)
    module("deepspeed.accelerator", get_accelerator=lambda: hpu)
    module("megatron", __path__=[])
    module("megatron.global_vars", set_retro_args=lambda *a: None, get_retro_args=lambda: None)
    module("tools", __path__=[])
    module("tools.retro", __path__=[])
    module("tools.retro.utils", get_args_path=lambda *a: None)
    module("megatron.core", __path__=[])
    module("megatron.core.transformer", TransformerConfig=type("TransformerConfig", (), {}))
    module("megatron.model", __path__=[])
    module("megatron.model.utils", init_method_normal=lambda sigma: None)


def check_one(fork, script):
    with tempfile.TemporaryDirectory() as scratch:
        world, argv, ds_config = launched(fork, script, scratch)
    os.environ.update({"WORLD_SIZE": str(world), "RANK": "0", "LOCAL_RANK": "0"})
    stand_ins()
    spec = importlib.util.spec_from_file_location("megatron.arguments", os.path.join(fork, "megatron", "arguments.py"))
    arguments = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(arguments)
    sys.argv = ["pretrain_gpt.py"] + argv
    args = arguments.validate_args(arguments.parse_args(), {})
    zero = ds_config.get("zero_optimization", {}).get("stage")
    accumulation = ds_config.get("data_types", {}).get("grad_accum_dtype", "(DeepSpeed's own)")
    return ("ok world %d " % world + " ".join("%s=%s" % (k, getattr(args, k, "?")) for k in RESOLVED) +
            " ds_config: train_batch_size=%s micro=%s zero_stage=%s grad_accum_dtype=%s bf16=%s" %
            (ds_config.get("train_batch_size"), ds_config.get("train_micro_batch_size_per_gpu"), zero, accumulation,
             ds_config.get("bf16", {}).get("enabled")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fork", required=True, help="a HabanaAI/Megatron-DeepSpeed checkout (1.19.0 branch)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("scripts", nargs="+")
    o = parser.parse_args()
    fork = os.path.abspath(o.fork)
    if o.one:  # one script per process: the client's module state does not carry over
        print(check_one(fork, o.scripts[0]))
        return 0
    return check_each(__file__, ["--fork", fork], o.scripts)


if __name__ == "__main__":
    sys.exit(main())
