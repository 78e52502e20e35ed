#!/usr/bin/env python3
"""Run Megatron-LM's own argument checks on a script `trainplan export --to megatron` wrote.

Usage: /usr/bin/python3 tools/check_megatron_args.py --megatron DIR SCRIPT [SCRIPT ...]

DIR holds a Megatron-LM checkout (its `megatron/` folder; trainplan writes for
core_r0.13.0, NVIDIA/Megatron-LM@73a28a10). For each script the pretrain_gpt.py
arguments go through the client's parse_args, validate_args and
core_transformer_config_from_args (TransformerConfig.__post_init__), with
WORLD_SIZE from the script's --nnodes x --nproc_per_node and its exported
environment, on a host without a GPU: torch (any CPU build; Debian 12's
python3-torch 1.13 works) stands in for the container's, the torch 2.x
submodules it lacks and Transformer Engine (reported as 2.5.0) are stubs, and
the CUDA device reads as an H100. Megatron's package __init__ files, which
import the whole training stack, are skipped; the argument modules load as
written. Prints "ok" and the settings the client resolved, or the client's own
error, per script; exits 1 if any script fails. Nothing of the client is copied
into trainplan: this runs a checkout you point it at.
"""
import argparse
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import re
import shlex
import sys
import types
import unittest.mock

from one_per_process import check_each

RESOLVED = ["tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
            "context_parallel_size", "expert_model_parallel_size", "sequence_parallel", "use_distributed_optimizer",
            "use_custom_fsdp", "data_parallel_sharding_strategy", "overlap_grad_reduce", "overlap_param_gather",
            "tp_comm_overlap", "recompute_granularity", "recompute_method", "gradient_accumulation_fusion", "bf16",
            "fp8", "grad_reduce_in_bf16", "moe_token_dispatcher_type", "moe_grouped_gemm", "rotary_base",
            "add_qkv_bias", "qk_layernorm", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
            "attention_backend", "moe_enable_deepep"]


def script_arguments(path):
    """(environment, world size, pretrain_gpt.py arguments) of an exported script."""
    text = open(path).read()
    env = dict(re.findall(r"^export (\w+)=(\S+)", text, re.M))
    joined = text.replace("\\\n", " ")
    line = next(l for l in joined.splitlines() if "pretrain_gpt.py" in l and not l.lstrip().startswith("#"))
    words = shlex.split(line)
    counts = {"--nnodes": 1, "--nproc_per_node": 1, "--nproc-per-node": 1}
    for i, word in enumerate(words):
        name = word.split("=")[0]
        if name in counts:
            counts[name] = int(word.split("=")[1]) if "=" in word else int(words[i + 1])
    start = next(i for i, w in enumerate(words) if w.endswith("pretrain_gpt.py")) + 1
    world = counts["--nnodes"] * max(counts["--nproc_per_node"], counts["--nproc-per-node"])
    return env, world, [w for w in words[start:] if w not in ("$@", '"$@"')]


def lenient(module):
    """Attributes a module lacks read as mocks (torch 1.13 for the 2.x names Megatron imports)."""
    def fallback(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return unittest.mock.MagicMock(name=module.__name__ + "." + name)
    module.__getattr__ = fallback


class Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """torch submodules this torch lacks, and those listed in `always` (whose 1.13 code breaks
    on Python 3.11), and Transformer Engine, as empty lenient modules."""
    always = ("torch.distributed.fsdp", "torch.distributed._shard", "torch.distributed.checkpoint",
              "torch.distributed._tensor", "torch.distributed.tensor", "transformer_engine")

    def find_spec(self, name, path, target=None):
        if any(name == s or name.startswith(s + ".") for s in self.always):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        if not name.startswith("torch."):
            return None
        for finder in sys.meta_path:
            if finder is not self and not isinstance(finder, BarePackages):
                try:
                    if finder.find_spec(name, path, target) is not None:
                        return None
                except Exception:
                    pass
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        lenient(module)
        return module

    def exec_module(self, module):
        pass


class BarePackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """megatron, megatron.core and megatron.training as folders without their __init__."""
    def __init__(self, root):
        self.root = root

    def find_spec(self, name, path, target=None):
        if name not in ("megatron", "megatron.core", "megatron.training"):
            return None
        spec = importlib.machinery.ModuleSpec(name, self, is_package=True)
        spec.submodule_search_locations = [os.path.join(self.root, *name.split("."))]
        return spec

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = spec.submodule_search_locations
        lenient(module)
        return module

    def exec_module(self, module):
        pass


def check_one(megatron, script):
    """In this process: the client's checks on one script (os.environ and sys are changed)."""
    env, world, argv = script_arguments(script)
    os.environ.update(env)
    os.environ.update({"WORLD_SIZE": str(world), "RANK": "0", "LOCAL_RANK": "0"})
    import torch
    import torch.distributed  # noqa: F401
    for name, module in list(sys.modules.items()):
        if name == "torch" or name.startswith("torch."):
            lenient(module)
    identity = lambda fn=None, *a, **k: fn if fn is not None else (lambda f: f)
    torch.jit.script = identity
    torch.compile = identity
    torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(
        major=9, minor=0, name="NVIDIA H100 80GB HBM3", total_memory=80 << 30)
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    real_version = importlib.metadata.version
    importlib.metadata.version = lambda name: (
        "2.5.0" if name.replace("_", "-").startswith("transformer-engine") else real_version(name))
    sys.path.insert(0, megatron)
    sys.meta_path.insert(0, Stubs())
    sys.meta_path.insert(0, BarePackages(megatron))
    from megatron.training.arguments import core_transformer_config_from_args, parse_args, validate_args
    sys.argv = ["pretrain_gpt.py"] + argv
    args = validate_args(parse_args(), {})
    core_transformer_config_from_args(args)
    return "ok world %d " % world + " ".join("%s=%s" % (k, getattr(args, k, "?")) for k in RESOLVED)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megatron", required=True, help="a Megatron-LM checkout (the folder holding megatron/)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("scripts", nargs="+")
    o = parser.parse_args()
    if o.one:  # one script per process: the client's globals do not carry over
        print(check_one(os.path.abspath(o.megatron), o.scripts[0]))
        return 0
    return check_each(__file__, ["--megatron", o.megatron], o.scripts)


if __name__ == "__main__":
    sys.exit(main())
