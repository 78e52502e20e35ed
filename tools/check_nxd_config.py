#!/usr/bin/env python3
"""Run NeuronX Distributed Training's own start-up path on YAML files `trainplan export --to nxd` wrote.

Usage: /usr/bin/python3 tools/check_nxd_config.py [--nxdt REPO] [--nxd REPO] [--nemo REPO] JOB.yaml [JOB.yaml ...]

trainplan writes for Neuron SDK 2.20: aws-neuron/neuronx-distributed-training@ff83d7bd
(NxDT), which runs on neuronx-distributed 0.9.0 (aws-neuron/neuronx-distributed@083d3ea,
"Fix merge conflicts for 2.20 release") and nemo_toolkit 1.14 (NVIDIA/NeMo v1.14.0,
NxDT's requirements.txt). Each REPO is a git directory (a bare mirror: the pinned commit
is extracted to a temporary folder; --nxdt-commit etc. change it) or a checkout. The
defaults are the mirrors under /work/.mirror; if one is absent, or omegaconf is not
installed, the run prints SKIPPED and exits 0. Nothing of the clients is copied into
trainplan: their files are read from the repositories you point at, at run time.

Each job is run twice through the client's Hydra main body (examples/training_orchestrator.py
process_config, then examples/training.py train() through configure_optimizers; no data set
is built and no step is run):

  as written  the file is the whole config, as `train.sh --config-path=conf --config-name=JOB`
              loads it: Hydra hands main() the file alone in struct mode, so a key it lacks
              fails where the client reads it by attribute. Each missing key is reported with
              the client line that reads it, filled from the example config and the run
              retried, so one run lists them all; then once more with COMPILE=1, the
              `neuron_parallel_compile` pass of train.sh (process_config assigns
              trainer.max_steps there). A file with a Hydra defaults list is composed first
              (config names from examples/conf; _self_ last unless placed).
  composed    the file over the example config (--base; default megatron_llama_7B_config,
              megatron_mixtral_8x7b_config for a megatron file with model.moe.num_experts above 1, or
              hf_llama3_70B_config for model_source hf: the one trainplan's header names), as
              `defaults: [BASE, _self_]` would compose them; struct mode after.

In both, the user's data keys (data.data_prefix, data.tokenizer; data.train_dir on the HF path)
come from the example; the tokenizer reports the vocabulary trainplan's header states. Client code that runs as
written: process_config; train(); MegatronDataModule.setup (vocabulary padding); NxDT's
exp_manager (the ExpManagerConfig merge of utils/exp_manager.py:164-165 over NeMo 1.14's
dataclasses, check_resume, configure_checkpointing; NeMo's log-dir helpers point at a scratch
folder); MegatronGPTModel with MegatronBaseModel._validate_and_override_config and
BaseModelModule's NxD config; the megatron GPTModel constructor (transformer.py,
language_model.py, gpt_model.py: safe_divide of heads and KV heads by TP, norms, RoPE, MLP;
for MoE files NeuronSwitchMLP's asserts and NxD's own modules/moe: RouterTopK / RouterSinkhorn, ExpertMLPs
(top_k and capacity-factor checks), Experts and the expert-parallel linear layers, which divide the experts
by EP and shape each rank's expert weights on the meta device, then one micro-batch of ExpertMLPs' training
forward on CPU with the expert GEMMs alone stood in for: the path the client takes (full capacity or
capacity factor), the expert capacity it computes, or what it raises, e.g. EP without a capacity factor);
configure_optimizers; for model_source hf instead (tools/check_nxd_hf.py): HFDataModule, HFLLamaModule
(llama_model.py: LlamaConfig from model.model_config, sequence_parallel, qkv_linear, kv_replicator,
flash attention, layer/hidden/RoPE overrides, activation checkpointing) and NxDT's modeling_llama.py
(LlamaAttention's divide of the heads and of KV heads x kv_replicator by TP, the MLP, norms, embedding and
lm_head) with NxD's GQAQKVColumnParallelLinear constructor (its TP / kv_size_multiplier checks and
_initialize_kv_group; no weights); NxD's neuronx_distributed_config, initialize_parallel_model (activation
checkpointing) and initialize_parallel_optimizer (ZeRO-1, master weights), its pipeline
create_partitions and its 1F1B / interleaved schedules; NeMo's optimizer and scheduler
registries and NeMo's resolvers (hydra_runner.py). Stubbed: torch_xla; the rest of
neuronx_distributed (parallel_state keeps NxD's world-size check, the parallel layers call
NxD's divide() on their sizes and allocate no weights, but an expert layer's weight on the meta
device; parallel_state's TP=4-with-EP refusal is kept too); apex; NeMo's module bases; PyTorch
Lightning (a trainer with PTL 1.8.6's defaults for the keys the file omits; its keyword
names are not checked); transformers (always: stand-ins for 4.31.0's LlamaConfig and Llama module
bases, tools/check_nxd_hf.py, named in the report); einops and any other module not installed (listed in
the report). torch: a CPU build if installed (Debian's python3-torch 1.13), else a stub
(also with CHECK_NXD_NO_TORCH=1). NxDT targets Python 3.8-3.10: under 3.11 its
utils/exp_manager.py:49 (a dataclass instance as a field default) is refused, so dataclasses
made here get a hash; fields and defaults are unchanged.

Prints, per file, each mode's status with the client's own error and the client file:line
that raised it (innermost first), the keys the file lacks that the client reads, what the
file alone runs with otherwise (PTL and client defaults), the keys the file writes that the
example lacks or that the start-up path never reads (with where the name appears), and what
the client resolved: world = TP x PP x DP, micro-batches, SP, ZeRO-1, master weights and
FP32 gradient accumulation, modules wrapped for activation checkpointing, heads and KV heads
per TP rank (HF path: with kv_replicator, the QKV layer built and the LlamaConfig resolved), MoE (router,
top_k, capacity factor as ExpertMLPs resolved it, experts per EP rank and their weight shapes, expert DP, the
training forward's path and expert capacity), layers per pipeline stage, schedule, precision environment. Exits 1 if a file
fails in composed mode (--strict: in either mode).
"""
import argparse
import ast
import contextlib
import copy
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import traceback
import types

import check_nxd_hf

MIRRORS = "/work/.mirror"
PINS = {  # repository, commit, folder a checkout must hold
    "nxdt": ("aws-neuron+neuronx-distributed-training", "ff83d7bdb1b21fcc4c282c4775ae25a6ffdfbf36",
             "src/neuronx_distributed_training"),
    "nxd": ("aws-neuron+neuronx-distributed", "083d3ea", "src/neuronx_distributed"),
    "nemo": ("NVIDIA+NeMo", "v1.14.0", "nemo"),
}
NEMO_FILES = ["nemo/core/config/hydra_runner.py", "nemo/utils/exp_manager.py", "nemo/core/optim/optimizers.py",
              "nemo/core/optim/lr_scheduler.py"]
# trainplan leaves these to the user ("Add your data, tokenizer"; the HF path's header: "Add data.train_dir")
USER_KEYS = {"megatron": ["data.data_prefix", "data.tokenizer"], "hf": ["data.train_dir"]}
BASES = {"megatron": "megatron_llama_7B_config", "hf": "hf_llama3_70B_config",  # the examples the headers name
         "megatron moe": "megatron_mixtral_8x7b_config"}
# NxD 0.9's MoE modules, loaded from the NxD tree in this order (each imports the ones before it)
MOE_FILES = ["model_utils", "moe_parallel_layers", "experts", "expert_mlps", "routing", "loss_function", "model"]


# ----------------------------------------------------------------------------- repositories

def extract(kind, where, commit, scratch):
    """A folder holding the pinned files of one repository, or (None, why)."""
    repo, default_commit, marker = PINS[kind]
    where = where or os.path.join(MIRRORS, repo, "repo")
    commit = commit or default_commit
    if os.path.isdir(os.path.join(where, marker)):
        return where, "checkout %s (commit not checked)" % where
    if not os.path.isdir(where):
        return None, "no %s repository at %s" % (kind, where)
    git = ["git", "--git-dir", where]
    full = subprocess.run(git + ["rev-parse", "--verify", "--quiet", commit + "^{commit}"],
                          capture_output=True, text=True)
    if full.returncode != 0:
        return None, "%s has no commit %s" % (where, commit)
    sha = full.stdout.strip()
    out = os.path.join(scratch, kind)
    os.makedirs(out, exist_ok=True)
    paths = {"nxdt": [], "nxd": ["src/neuronx_distributed"], "nemo": NEMO_FILES}[kind]
    archive = subprocess.run(git + ["archive", "--format=tar", sha] + paths, capture_output=True)
    if archive.returncode != 0:
        return None, "git archive %s %s: %s" % (where, sha, archive.stderr.decode(errors="replace").strip())
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(out)
    return out, "%s@%s" % (repo.replace("+", "/"), sha[:12])


# ----------------------------------------------------------------------------- stubs

class _AnyMeta(type):
    """Classes whose every attribute is another such class: a stubbed package's names,
    usable as base classes, decorators, enums and type annotations."""
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        sub = _AnyMeta(name, (Anything,), {"__module__": cls.__module__})
        type.__setattr__(cls, name, sub)
        return sub

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and (isinstance(args[0], type) or callable(args[0])) \
                and not isinstance(args[0], Anything) and cls.__dict__.get("_decorates", True):
            return args[0]  # used as a decorator
        return type.__call__(cls, *args, **kwargs)

    def __getitem__(cls, item):
        return cls

    def __setitem__(cls, key, value):
        pass

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __iter__(cls):
        return iter(())


class Anything(metaclass=_AnyMeta):
    _decorates = True

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Anything):
            return args[0]
        return Anything()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __getitem__(self, key):
        return Anything()

    def __setitem__(self, key, value):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __bool__(self):
        return False

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    def _same(self, *args, **kwargs):
        return Anything()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = __neg__ = __mod__ = __matmul__ = _same


def lenient(module):
    def fallback(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _AnyMeta(name, (Anything,), {"__module__": module.__name__})
        setattr(module, name, value)
        return value
    module.__getattr__ = fallback
    return module


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Every module under `roots` that is not already in sys.modules: an empty lenient package."""
    def __init__(self, roots):
        self.roots = roots

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        return lenient(module)

    def exec_module(self, module):
        pass


class MissingFinder(StubFinder):
    """Last on sys.meta_path: a module no other finder has becomes a lenient stub (named in the report)."""
    stubbed = set()
    keep = {"omegaconf", "yaml", "numpy", "packaging", "typing_extensions"}

    def __init__(self):
        StubFinder.__init__(self, set())

    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in self.keep or top.startswith("_"):
            return None
        if top in ("neuronx_distributed_training", "training", "training_orchestrator"):
            return None
        self.stubbed.add(top)
        return importlib.machinery.ModuleSpec(name, self, is_package=True)


def module(name, **attrs):
    """Register a stub module (and its parents) with these attributes."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        if sub not in sys.modules:
            m = lenient(types.ModuleType(sub))
            m.__path__ = []
            sys.modules[sub] = m
            if i > 1:
                setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], m)
    m = sys.modules[name]
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


def load_file(name, path):
    """Import a client file as module `name` (its own line numbers in tracebacks)."""
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    parent, _, leaf = name.rpartition(".")
    if parent:
        module(parent)
        setattr(sys.modules[parent], leaf, m)
    spec.loader.exec_module(m)
    return m


def functions_from(path, names, namespace):
    """Only the named top-level definitions of a client file, compiled under its own path."""
    tree = ast.parse(open(path).read(), path)
    body = [n for n in tree.body if getattr(n, "name", None) in names]
    missing = set(names) - {n.name for n in body}
    if missing:
        raise RuntimeError("%s lacks %s" % (path, ", ".join(sorted(missing))))
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)
    return namespace


def registry_names(path, variable):
    """String keys the client puts in a registry dict (literal and item assignments)."""
    names = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == variable and isinstance(node.value, ast.Dict):
                    names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
                if isinstance(target, ast.Subscript) and getattr(target.value, "id", None) == variable \
                        and isinstance(target.slice, ast.Constant):
                    names.add(target.slice.value)
    return names


# ----------------------------------------------------------------------------- the harness world

class World:
    """What one run resolved (filled by the stubs as the client calls them)."""
    def __init__(self):
        self.world = 1
        self.tp = self.pp = self.ep = 1
        self.initialized = False
        self.vocab = 32000
        self.record = {}
        self.scratch = []


W = World()
HF = types.SimpleNamespace(job_dir=None)  # what check_nxd_hf's stand-ins need from the harness


def hashable_dataclasses():
    """NxDT's utils/exp_manager.py:49 gives a dataclass field a dataclass instance as default, which
    Python 3.11 refuses (mutable default); NxDT runs on Python 3.8-3.10, which allow it. Dataclasses
    made here get a hash, so the check passes; their fields and defaults are unchanged."""
    import dataclasses
    real = dataclasses.dataclass

    def dataclass(cls=None, **kw):
        if not kw.get("frozen") and "unsafe_hash" not in kw and kw.get("eq", True):
            kw["unsafe_hash"] = True
        return real(**kw) if cls is None else real(cls, **kw)
    dataclasses.dataclass = dataclass


def install_stubs(trees):
    hashable_dataclasses()
    nxd, nemo = trees["nxd"], trees["nemo"]
    nxd_src = os.path.join(nxd, "src/neuronx_distributed")
    roots = {"apex", "nemo", "neuronx_distributed", "torch_xla", "pytorch_lightning", "lightning_lite",
             "lightning_utilities", "einops", "transformers", "torchmetrics", "hydra", "datasets",
             "sentencepiece", "accelerate", "megatron", "tensorboard", "wandb", "h5py"}
    try:
        if os.environ.get("CHECK_NXD_NO_TORCH"):
            raise ImportError("CHECK_NXD_NO_TORCH is set")
        import torch  # noqa: F401
        real_torch = True
    except Exception:
        real_torch = False
        roots.add("torch")
    sys.meta_path.insert(0, StubFinder(roots))
    sys.meta_path.append(MissingFinder())  # anything else the client imports that is not installed
    if not real_torch:
        torch_stub()
    import torch
    import torch.distributed
    if real_torch:
        import torch.utils.checkpoint  # noqa: F401 (transformer.py:68 reads it as an attribute)
    torch.distributed.is_initialized = lambda: True  # the strategy's init_process_group("xla") has run
    torch.distributed.get_world_size = lambda *a, **k: W.world
    torch.distributed.get_rank = lambda *a, **k: 0
    torch.distributed.all_reduce = lambda *a, **k: None
    torch.distributed.barrier = lambda *a, **k: None

    # hydra: main() is what this harness calls
    module("hydra", main=lambda **kw: (lambda fn: fn))

    # torch_xla
    module("torch_xla.core.xla_model", xrt_world_size=lambda: W.world, get_ordinal=lambda: 0,
           get_local_ordinal=lambda: 0, xla_device=lambda *a: torch.device("cpu") if real_torch else "cpu",
           rendezvous=lambda *a, **k: None, mark_step=lambda: None, add_step_closure=lambda *a, **k: None,
           is_master_ordinal=lambda *a, **k: True)

    # neuronx_distributed: parallel_state keeps NxD's checks; divide() and the pipeline code run from NxD
    ns = functions_from(os.path.join(nxd_src, "parallel_layers/utils.py"), ["ensure_divisibility", "divide"], {})
    divide = ns["divide"]
    module("neuronx_distributed.parallel_layers.utils", divide=divide, ensure_divisibility=ns["ensure_divisibility"],
           param_is_not_tensor_parallel_duplicate=lambda p: True)
    ps_file = os.path.join(nxd_src, "parallel_layers/parallel_state.py")
    ps_lines = open(ps_file).read().splitlines()
    check_line = next(i + 1 for i, l in enumerate(ps_lines) if "world_size % (tensor_model_parallel_size * pipeline_model_parallel_size) != 0" in l)
    tp4_line = next(i + 1 for i, l in enumerate(ps_lines) if "TP=4 case not yet implemented for expert parallelism" in l)

    def initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                                  expert_model_parallel_size=1):
        tp, pp, ep = (min(x, W.world) for x in (tensor_model_parallel_size, pipeline_model_parallel_size,
                                               expert_model_parallel_size))
        if W.world % (tp * pp) != 0:
            raise RuntimeError("invalid implied data parallel degree: `world_size` (%d) is not divisible by "
                               "tensor_model_parallel_size (%d) x pipeline_model_parallel_size (%d) "
                               "[neuronx_distributed/parallel_layers/parallel_state.py:%d]" % (W.world, tp, pp, check_line))
        if W.world % (tp * pp * ep) != 0:
            raise RuntimeError("invalid implied expert data parallel degree [parallel_state.py:%d]" % (check_line + 9))
        if tp == 4 and ep > 1:
            raise NotImplementedError("TP=4 case not yet implemented for expert parallelism [parallel_state.py:%d]" % tp4_line)
        W.tp, W.pp, W.ep, W.initialized = tp, pp, ep, True
        W.record["nxd.parallel_state"] = "world %d = TP %d x PP %d x DP %d" % (W.world, tp, pp, W.world // (tp * pp)) + (
            "; experts: EP %d x expert DP %d" % (ep, W.world // (tp * pp * ep)) if ep > 1 else "")

    group = lambda as_list=False: [[0]] if as_list else Anything()
    ps = dict(
        initialize_model_parallel=initialize_model_parallel,
        model_parallel_is_initialized=lambda: W.initialized,
        get_tensor_model_parallel_size=lambda: W.tp, get_tensor_model_parallel_rank=lambda: 0,
        get_pipeline_model_parallel_size=lambda: W.pp, get_pipeline_model_parallel_rank=lambda: 0,
        get_data_parallel_size=lambda: W.world // (W.tp * W.pp), get_data_parallel_rank=lambda: 0,
        get_expert_model_parallel_size=lambda: W.ep, get_expert_model_parallel_rank=lambda: 0,
        get_tensor_model_parallel_group=group, get_data_parallel_group=group, get_pipeline_model_parallel_group=group,
        get_expert_model_parallel_group=group, get_expert_data_parallel_group=group,
        is_global_rank_zero=lambda: True, rmsg=lambda m: m, is_tcp_store_available=lambda: True)
    module("neuronx_distributed.parallel_layers.parallel_state", **ps)

    layers_file = os.path.join(nxd_src, "parallel_layers/layers.py")
    layer_lines = open(layers_file).read().splitlines()

    def site(text):
        n = next((i + 1 for i, l in enumerate(layer_lines) if text in l), 0)
        return "neuronx_distributed/parallel_layers/layers.py:%d" % n

    def divided(a, b, where):
        try:
            return divide(a, b)
        except AssertionError as e:
            raise AssertionError("%s [%s]" % (e, where)) from None

    Module = torch.nn.Module

    def shaped_weight(layer, dtype, device):
        """NxD's initialize_weight_and_bias (layers.py: set_weight_and_bias_config, then the weight) for a
        subclass that defines the shape itself (NxD's expert layers): the weight on the meta device, no memory."""
        shape_of = getattr(type(layer), "set_weight_and_bias_config", None)
        if shape_of is None:
            return
        layer.dtype, layer.device = dtype, device
        shape_of(layer)
        layer.weight = torch.nn.Parameter(torch.empty(*layer.weight_shape, device="meta"))

    class ColumnParallelLinear(Module):
        def __init__(self, input_size, output_size, bias=True, gather_output=True, dtype=None, device=None, stride=1,
                     init_method=None, sequence_parallel_enabled=False, keep_master_weight=False, skip_bias_add=False,
                     pad=False):
            Module.__init__(self)
            self.input_size, self.output_size = input_size, output_size
            self.output_size_per_partition = divided(output_size, W.tp, site("self.output_size_per_partition = divide("))
            if (not sequence_parallel_enabled and W.tp > 1) and sequence_parallel_enabled:
                raise RuntimeError("async allreduce and sequence parallel")
            self.sequence_parallel_enabled = sequence_parallel_enabled
            shaped_weight(self, dtype, device)

    class RowParallelLinear(Module):
        def __init__(self, input_size, output_size, bias=True, input_is_parallel=False, dtype=None, device=None,
                     stride=1, init_method=None, sequence_parallel_enabled=False, keep_master_weight=False,
                     skip_bias_add=False, pad=False):
            Module.__init__(self)
            self.input_size, self.output_size = input_size, output_size
            self.input_size_per_partition = divided(input_size, W.tp, site("self.input_size_per_partition = divide("))
            if sequence_parallel_enabled and not input_is_parallel:
                raise RuntimeError("To enable `sequence_parallel_enabled`, `input_is_parallel` must be `True` [%s]"
                                   % site("To enable `sequence_parallel_enabled`, `input_is_parallel`"))
            self.sequence_parallel_enabled = sequence_parallel_enabled
            shaped_weight(self, dtype, device)

    class ParallelEmbedding(Module):
        def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                     scale_grad_by_freq=False, sparse=False, init_method=None, device=None, dtype=None,
                     shard_across_embedding=False, pad=False):
            Module.__init__(self)
            if shard_across_embedding:
                self.per_partition = divided(embedding_dim, W.tp, site("self.embedding_dim_per_partition = divide("))
            else:  # EmbeddingUtility.range_from_global_vocab_size: divide(global_vocab_size, world_size)
                self.per_partition = divided(num_embeddings, W.tp, "neuronx_distributed/parallel_layers/utils.py "
                                             "EmbeddingUtility.range_from_global_vocab_size")
            self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
            # NxD's layer owns its weight; the megatron model ties the output layer to it
            # (models/megatron/module.py:44 reads embedding.weight for tied embeddings).
            self.weight = torch.nn.Parameter(torch.empty(0))

    class LayerNorm(Module):
        def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, sequence_parallel_enabled=False, **kw):
            Module.__init__(self)
            self.normalized_shape = normalized_shape

    module("neuronx_distributed.parallel_layers.layers", ColumnParallelLinear=ColumnParallelLinear,
           RowParallelLinear=RowParallelLinear, ParallelEmbedding=ParallelEmbedding,
           BaseParallelLinear=type("BaseParallelLinear", (Module,), {}))
    module("neuronx_distributed.parallel_layers.layer_norm", LayerNorm=LayerNorm)
    module("neuronx_distributed.parallel_layers", parallel_state=sys.modules["neuronx_distributed.parallel_layers.parallel_state"],
           layers=sys.modules["neuronx_distributed.parallel_layers.layers"])

    # NxD's MoE (modules/moe: router, ExpertMLPs, the expert-parallel layers, MoE) as NxD ships it, over the
    # parallel layers above; NxD's tensor_utils (cumsum) with it. Needs torch: else left stubbed (reported).
    if real_torch:
        load_file("neuronx_distributed.utils.tensor_utils", os.path.join(nxd_src, "utils/tensor_utils.py"))
        for name in MOE_FILES:
            load_file("neuronx_distributed.modules.moe." + name, os.path.join(nxd_src, "modules/moe/%s.py" % name))

    # the HF model path: transformers' stand-ins and NxD's own GQAQKVColumnParallelLinear (tools/check_nxd_hf.py)
    HF.__dict__.update(module=module, load_file=load_file, Anything=Anything, W=W, nxd_src=nxd_src, torch=torch,
                       real_torch=real_torch)
    is_hf_pretrained_model = check_nxd_hf.install(HF)

    # NxD pipeline: NxDPPModel's auto-partition and its schedules, from NxD's own functions
    part = functions_from(os.path.join(nxd_src, "pipeline/partition.py"), ["create_partitions"], {})
    sched = {}
    exec(compile(open(os.path.join(nxd_src, "pipeline/scheduler.py")).read(),
                 os.path.join(nxd_src, "pipeline/scheduler.py"), "exec"), sched)

    class NxDPPModel(Module):
        def __init__(self, module, transformer_layer_cls=None, num_microbatches=1, virtual_pipeline_size=1,
                     auto_partition=False, **kw):
            Module.__init__(self)
            if transformer_layer_cls is None:
                raise ValueError("NxDPPModel requires transformer_layer_cls as input")
            self.original_torch_module, self.transformer_layer_cls = module, transformer_layer_cls
            names = [n for n, m in module.named_modules() if isinstance(m, transformer_layer_cls)]
            if auto_partition and W.pp > 1:
                if not names:
                    raise ValueError("No modules of type %s found in the model." % transformer_layer_cls)
                cuts = part["create_partitions"](W.pp * virtual_pipeline_size, names)
                sizes, last = [], -1
                for c in cuts + [names[-1]]:
                    i = names.index(c)
                    sizes.append(i - last)
                    last = i
                W.record["nxd.pipeline stages (layers)"] = sizes
            for rank in range(W.pp):  # every rank's schedule, as create_schedule builds it
                if virtual_pipeline_size == 1:
                    s = sched["Train1F1BSchedule"](num_microbatches, W.pp, rank)
                else:
                    s = sched["TrainInterleavedSchedule"](num_microbatches, virtual_pipeline_size, W.pp, rank,
                                                          use_odd_even_scheduler=num_microbatches == W.pp)
                list(s.steps())
            W.record["nxd.schedule"] = "1F1B" if virtual_pipeline_size == 1 else "interleaved x%d" % virtual_pipeline_size

        def named_modules(self, *a, **k):
            return self.original_torch_module.named_modules(*a, **k)

        def modules(self):
            return self.original_torch_module.modules()

    module("neuronx_distributed.pipeline", NxDPPModel=NxDPPModel)

    class NxDModel(Module):
        def __init__(self, model, nxd_config):
            Module.__init__(self)
            self.module = model

    def apply_activation_checkpointing(model, check_fn=None, **kw):
        matched = {}
        for m in model.module.modules():
            if check_fn(m):
                matched[type(m).__name__] = matched.get(type(m).__name__, 0) + 1
        W.record["nxd.activation checkpointing"] = matched or "nothing matched"

    def is_nxdt_pretrained_model(model):
        return isinstance(model, sys.modules["neuronx_distributed_training.models.megatron.module"].MegatronModule)

    module("neuronx_distributed.trainer.model", NxDModel=NxDModel)
    module("neuronx_distributed.utils.activation_checkpoint", apply_activation_checkpointing=apply_activation_checkpointing)
    module("neuronx_distributed.utils.model_utils", get_model_sequential=lambda model, *a, **k: model,
           init_on_device=lambda *a, **k: contextlib.nullcontext(), is_hf_pretrained_model=is_hf_pretrained_model,
           is_nxdt_pretrained_model=is_nxdt_pretrained_model, check_delay_tracing=lambda c: False,
           get_delay_tracing=lambda c: False)
    import logging as _logging
    module("neuronx_distributed.utils.logger", get_logger=lambda *a, **k: _logging.getLogger("nxd"))

    class NeuronZero1Optimizer:
        def __init__(self, params, optimizer_class, **kw):
            W.record["nxd.optimizer"] = "%s(%s, %s)" % (type(self).__name__,
                getattr(optimizer_class, "__name__", optimizer_class),
                ", ".join("%s=%s" % (k, v) for k, v in sorted(kw.items()) if k not in ("sharding_groups", "grad_norm_groups")))

    class NeuronEPZero1Optimizer(NeuronZero1Optimizer):  # trainer.py picks it under EP (expert params sharded over expert DP)
        pass

    module("neuronx_distributed.optimizer", NeuronZero1Optimizer=NeuronZero1Optimizer, NeuronEPZero1Optimizer=NeuronEPZero1Optimizer)
    trainer = load_file("neuronx_distributed.trainer.trainer", os.path.join(nxd_src, "trainer/trainer.py"))

    def initialize_optimizer_from_class(nxd_config, optimizer_class, parameters, model=None, **defaults):
        if not nxd_config["optimizer_config"]["zero_one_enabled"]:
            W.record["nxd.optimizer"] = "%s (no ZeRO-1)" % getattr(optimizer_class, "__name__", optimizer_class)
        return trainer_initialize_optimizer_from_class(nxd_config, optimizer_class, parameters, model=model, **defaults)

    trainer_initialize_optimizer_from_class = trainer.initialize_optimizer_from_class
    module("neuronx_distributed", neuronx_distributed_config=trainer.neuronx_distributed_config,
           initialize_parallel_model=trainer.initialize_parallel_model,
           initialize_parallel_optimizer=trainer.initialize_parallel_optimizer,
           parallel_layers=sys.modules["neuronx_distributed.parallel_layers"])

    # apex
    import enum

    class AttnMaskType(enum.Enum):
        padding, causal = 1, 2

    class AttnType(enum.Enum):
        self_attn, cross_attn = 1, 2

    class ModelType(enum.Enum):
        encoder_or_decoder, encoder_and_decoder = 1, 2

    class FusedScaleMaskSoftmax(Module):
        def __init__(self, *a, **k):
            Module.__init__(self)

    class ApexRMSNorm(Module):
        def reset_parameters(self):
            pass

    module("apex.transformer.enums", AttnMaskType=AttnMaskType, AttnType=AttnType, ModelType=ModelType)
    module("apex.transformer.functional.fused_softmax", FusedScaleMaskSoftmax=FusedScaleMaskSoftmax)
    module("apex.normalization", MixedFusedRMSNorm=ApexRMSNorm)

    # NeMo: module bases, AppState, the tokenizer, the optimizer and scheduler registries (v1.14's names)
    class MegatronModule(Module):
        def __init__(self, share_token_embeddings=True, **kw):
            Module.__init__(self)
            self.share_token_embeddings = share_token_embeddings

    class AdapterModuleMixin:
        def set_accepted_adapter_types(self, types_):
            pass

        def get_from_adapter_layer(self, name):
            return None

        def is_adapter_available(self):
            return False

    optimizers = registry_names(os.path.join(nemo, "nemo/core/optim/optimizers.py"), "AVAILABLE_OPTIMIZERS")
    schedulers = registry_names(os.path.join(nemo, "nemo/core/optim/lr_scheduler.py"), "AVAILABLE_SCHEDULERS")
    opt_file = os.path.join(nemo, "nemo/core/optim/optimizers.py")
    opt_line = next(i + 1 for i, l in enumerate(open(opt_file)) if "if name not in AVAILABLE_OPTIMIZERS" in l)

    def get_optimizer(name, **kw):
        if name not in optimizers:
            raise ValueError("Cannot resolve optimizer '%s'. Available optimizers are : %s [nemo/core/optim/optimizers.py:%d]"
                             % (name, sorted(optimizers), opt_line))
        return {"adamw": getattr(torch.optim, "AdamW", None), "adam": getattr(torch.optim, "Adam", None),
                "sgd": getattr(torch.optim, "SGD", None)}.get(name) or type(name, (), {})

    def prepare_lr_scheduler(optimizer, scheduler_config, train_dataloader=None):
        name = scheduler_config.get("name")
        if name not in schedulers:
            raise ValueError("Scheduler Name %s not in AVAILABLE_SCHEDULERS %s (nemo/core/optim/lr_scheduler.py)"
                             % (name, sorted(schedulers)))
        W.record["nemo.scheduler"] = "%s max_steps=%s warmup_steps=%s" % (
            name, scheduler_config.get("max_steps"), scheduler_config.get("warmup_steps"))
        return Anything()

    module("nemo.core.optim", get_optimizer=get_optimizer, prepare_lr_scheduler=prepare_lr_scheduler,
           register_optimizer=lambda name, *a: optimizers.add(name))
    module("nemo.core.optim.lr_scheduler", register_scheduler=lambda name, *a: schedulers.add(name))
    module("nemo.collections.nlp.modules.common.megatron.module", MegatronModule=MegatronModule)
    module("nemo.core.adapter_mixins", AdapterModuleMixin=AdapterModuleMixin)
    module("nemo.core", adapter_mixins=sys.modules["nemo.core.adapter_mixins"])
    module("nemo.collections.nlp.modules.common.tokenizer_utils",
           get_nmt_tokenizer=lambda **kw: types.SimpleNamespace(vocab_size=W.vocab, kwargs=kw))
    class NemoLogging(Anything):
        _decorates = False
        info = warning = error = debug = staticmethod(lambda *a, **k: None)
    module("nemo.utils", AppState=type("AppState", (), {}), logging=NemoLogging())

    class LightningDataModule:
        def __init__(self, *a, **k):
            pass

        def setup(self, stage=None):
            pass

    module("pytorch_lightning.core.datamodule", LightningDataModule=LightningDataModule)

    class NLPModel(Module):
        """NeMo's NLPModel/ModelPT/LightningModule, reduced to what NxDT's model calls on it."""
        def __init__(self, cfg, trainer=None, no_lm_init=True):
            Module.__init__(self)
            self._cfg, self._trainer, self._optimizer, self._scheduler, self._train_dl = cfg, trainer, None, None, None

        @property
        def trainer(self):
            return self._trainer

        def setup(self, stage=None):
            pass

        def register_artifact(self, name, path, verify_src_exists=True):
            return path

        def setup_optimization(self, optim_config=None, optim_kwargs=None):
            # ModelPT.setup_optimization: the optimizer from cfg.optim (name, then its arguments)
            optim = dict(self._cfg.optim)
            name = optim.pop("name")
            optim.pop("sched", None)
            cls = get_optimizer(name)
            self.setup_optimizer_param_groups()
            if real_torch and isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer):
                self._optimizer = cls([torch.nn.Parameter(torch.zeros(1))], **optim)  # the arguments are its own
            else:
                self._optimizer = types.SimpleNamespace(defaults=optim)
            W.record["nemo.optimizer"] = "%s(%s)" % (name, ", ".join("%s=%s" % kv for kv in sorted(optim.items())))

    module("nemo.collections.nlp.models.nlp_model", NLPModel=NLPModel)
    # NeMo's resolvers (`multiply` in the example's model_parallel_size), registered when NxDT's
    # optim/__init__.py imports nemo.core.config, whose __init__ imports hydra_runner
    runner = os.path.join(nemo, "nemo/core/config/hydra_runner.py")
    from omegaconf import OmegaConf
    for node in ast.parse(open(runner).read(), runner).body:
        if isinstance(node, ast.Expr) and "register_new_resolver" in ast.dump(node):
            exec(compile(ast.Module(body=[node], type_ignores=[]), runner, "exec"), {"OmegaConf": OmegaConf})
    nemo_em = module("nemo.utils.exp_manager", NotFoundError=type("NotFoundError", (Exception,), {}),
                     CheckpointMisconfigurationError=type("CheckpointMisconfigurationError", (Exception,), {}))
    functions_from(os.path.join(nemo, "nemo/utils/exp_manager.py"),
                   ["CallbackParams", "MLFlowParams", "StepTimingParams", "EMAParams", "ExpManagerConfig"],
                   _dataclass_namespace(nemo_em.__dict__))
    return real_torch


def torch_stub():
    """Enough of torch for the model constructors when no torch is installed."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    torch = sys.modules["torch"] = lenient(types.ModuleType("torch"))
    torch.__path__ = []
    torch.__version__ = "2.1.2"

    class Module:
        def __init__(self, *a, **k):
            object.__setattr__(self, "_children", {})

        def __setattr__(self, name, value):
            if isinstance(value, Module):
                self.__dict__.setdefault("_children", {})[name] = value
            object.__setattr__(self, name, value)

        def register_buffer(self, name, value, persistent=True):
            object.__setattr__(self, name, value)

        def register_parameter(self, name, value):
            object.__setattr__(self, name, value)

        def named_modules(self, memo=None, prefix=""):
            yield prefix, self
            for name, child in self.__dict__.get("_children", {}).items():
                yield from child.named_modules(prefix=prefix + ("." if prefix else "") + name)

        def modules(self):
            for _, m in self.named_modules():
                yield m

        def children(self):  # transformers' get_module_class_from_name walks them (HF path, full recompute)
            return iter(self.__dict__.get("_children", {}).values())

        def named_parameters(self, *a, **k):  # the stub allocates none (HF path's param groups)
            return iter(())

        def parameters(self, *a, **k):
            return iter(())

    class ModuleList(Module, list):
        def __init__(self, items=()):
            Module.__init__(self)
            list.__init__(self, items)
            for i, m in enumerate(self):
                self._children[str(i)] = m

    class Dropout(Module):
        pass

    nn = module("torch.nn", Module=Module, ModuleList=ModuleList, Dropout=Dropout, Identity=Dropout,
                Parameter=lambda *a, **k: Anything(), Embedding=type("Embedding", (Module,), {}),
                LayerNorm=type("LayerNorm", (Module,), {}), Linear=type("Linear", (Module,), {}))
    module("torch.nn.parameter", Parameter=nn.Parameter)
    module("torch.distributed")
    module("torch.optim", Optimizer=type("Optimizer", (), {}))
    torch.nn = nn
    torch.Size = tuple
    torch.device = lambda *a, **k: "cpu"


# ----------------------------------------------------------------------------- one job

def client_site(tb, roots):
    """The innermost traceback frames inside the client trees: 'path:line: source'."""
    sites = []
    for frame in traceback.extract_tb(tb):
        for label, root in roots:
            if label != "harness" and frame.filename.startswith(root + os.sep):
                sites.append("%s %s:%d `%s`" % (label, os.path.relpath(frame.filename, root), frame.lineno,
                                                 (frame.line or "").strip()[:120]))
    return sites


def read_sites(nxdt, key):
    """Client lines that read the last component of a dotted key (src/ and examples/*.py)."""
    leaf = key.split(".")[-1]
    pattern = re.compile(r"""(["'])%s\1|\.%s\b""" % (re.escape(leaf), re.escape(leaf)))
    files = [os.path.join(nxdt, "examples", f) for f in os.listdir(os.path.join(nxdt, "examples")) if f.endswith(".py")]
    for base, _, names in os.walk(os.path.join(nxdt, "src")):
        files += [os.path.join(base, n) for n in names if n.endswith(".py")]
    hits = []
    for path in sorted(files):
        for i, line in enumerate(open(path, errors="replace")):
            if pattern.search(line) and not line.lstrip().startswith("#"):
                hits.append("%s:%d" % (os.path.relpath(path, nxdt), i + 1))
    return hits


def leaves(node, prefix=""):
    from omegaconf import DictConfig
    out = []
    for k in node.keys():
        v = node._get_node(k)
        path = prefix + str(k)
        if isinstance(v, DictConfig) and len(v):
            out += leaves(v, path + ".")
        else:
            out.append(path)
    return out


READS = []  # the Reads of the job being checked


@contextlib.contextmanager
def harness_reads():
    """Config reads the harness makes itself: not recorded as the client's."""
    busy = [r.busy for r in READS]
    for r in READS:
        r.busy = True
    try:
        yield
    finally:
        for r, b in zip(READS, busy):
            r.busy = b


class Reads:
    """Config keys the client reads while it runs, with the first client line that read each."""
    def __init__(self, roots):
        READS.append(self)
        from omegaconf import DictConfig
        self.roots, self.sites, self.on, self.busy = roots, {}, False, False
        real = DictConfig._get_node
        reads = self

        def _get_node(node, key, *a, **k):
            if reads.on and not reads.busy:
                reads.busy = True
                try:
                    full = node._get_full_key(key)
                    if full:
                        where = reads.site()
                        if where and where not in reads.sites.setdefault(full, []):
                            reads.sites[full].append(where)
                except Exception:
                    pass
                finally:
                    reads.busy = False
            return real(node, key, *a, **k)
        DictConfig._get_node = _get_node

    def site(self):
        """The innermost client frame; else the harness stand-in (PTL, NeMo) that read the key."""
        fallback = "?"
        stack = traceback.extract_stack()[:-2]
        if any(f.name == "to_yaml" for f in stack):
            return None  # training.py:41 logs the whole config; that is not a read
        for frame in reversed(stack):
            for label, root in self.roots:
                if frame.filename.startswith(root + os.sep):
                    where = "%s %s:%d" % (label, os.path.relpath(frame.filename, root), frame.lineno)
                    if label != "harness":
                        return where
                    if fallback == "?":
                        fallback = "%s (%s)" % (where, frame.name)
        return fallback


def run_main(cfg, env0):
    """The client's Hydra main body on cfg: process_config, then train() through configure_optimizers."""
    import training
    from training_orchestrator import process_config
    os.environ.clear()
    os.environ.update(env0)
    W.initialized, W.tp, W.pp, W.ep, W.record = False, 1, 1, 1, {}
    trainer_cfg = cfg.trainer if "trainer" in cfg else None
    W.world = int(trainer_cfg.get("devices", 1)) * int(trainer_cfg.get("num_nodes", 1)) if trainer_cfg is not None else 1
    process_config(cfg)
    W.record["env"] = " ".join("%s=%s" % (k, os.environ.get(k)) for k in (
        "XLA_USE_BF16", "XLA_DOWNCAST_BF16", "NEURON_RT_STOCHASTIC_ROUNDING_EN", "NEURON_FUSE_SOFTMAX"))
    W.record["env NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS")
    training.train(cfg)


def make_trainer_class(record_kwargs):
    class Trainer:
        """PTL 1.8.6 Trainer's attributes NxDT reads, with PTL's defaults for keys the file omits."""
        def __init__(self, plugins=None, strategy=None, resume_from_checkpoint=None, **kw):
            record_kwargs.update(kw)
            self.devices, self.num_nodes = kw.get("devices", "auto"), kw.get("num_nodes", 1)
            self.num_devices = self.devices if isinstance(self.devices, int) else 1
            self.max_steps, self.max_epochs = kw.get("max_steps", -1), kw.get("max_epochs")
            self.gradient_clip_val = kw.get("gradient_clip_val")
            self.precision = kw.get("precision", 32)
            self.limit_val_batches = kw.get("limit_val_batches", 1.0)
            self.limit_test_batches = kw.get("limit_test_batches", 1.0)
            self.val_check_interval = kw.get("val_check_interval", 1.0)
            self.log_every_n_steps = kw.get("log_every_n_steps", 50)
            self.world_size, self.global_rank, self.local_rank, self.node_rank = W.world, 0, 0, 0
            self.callbacks, self.fast_dev_run, self.global_step = [], False, 0
            self._checkpoint_connector = types.SimpleNamespace(resume_from_checkpoint_fit_path=None)

        def is_resuming_from_checkpoint(self):
            return False

        def fit(self, model, datamodule=None):
            # Trainer.fit: strategy set-up (NxD's parallel state), datamodule.setup, model.setup,
            # configure_optimizers; the training loop is not run.
            self.model, self.datamodule = model, datamodule
            datamodule.setup("fit")
            W.record["padded vocab"] = getattr(datamodule, "padded_vocab_size", None)
            model.setup("fit")
            model.configure_optimizers()
            nxd = model.nxd_config
            W.record["nxdt.nxd_config"] = "TP %s PP %s VP %s SP %s zero1 %s master_weights %s fp32_grad_acc %s " \
                "grad_clipping %s max_grad_norm %s micro-batches %s activation_checkpoint %s" % (
                    nxd["tensor_parallel_size"], nxd["pipeline_parallel_size"], nxd["pipeline_config"]["virtual_pipeline_size"],
                    nxd["sequence_parallel"], nxd["optimizer_config"]["zero_one_enabled"],
                    nxd["mixed_precision_config"]["use_master_weights"], nxd["mixed_precision_config"]["use_fp32_grad_acc"],
                    nxd["optimizer_config"]["grad_clipping"], nxd["optimizer_config"].get("max_grad_norm"),
                    model.num_microbatches, getattr(nxd["activation_checkpoint_config"], "__name__",
                                                   nxd["activation_checkpoint_config"]))
            attn = next((m for _, m in model.model.module.named_modules() if type(m).__name__ == "ParallelAttention"), None)
            if attn is not None:
                W.record["attention per TP rank"] = "%s query heads, %s KV heads%s" % (
                    attn.num_attention_heads_per_partition, attn.num_kv_attention_heads_per_partition,
                    " (GQA)" if attn.use_gqa else "")
            else:
                check_nxd_hf.record_attention(model.model.module, W)
            record_moe(model)
    return Trainer


def record_moe(model):
    """What NxD's MoE resolved in the megatron model's NeuronSwitchMLP layers (transformer.py), and one micro-batch
    of the client's training forward through ExpertMLPs (expert_mlps.py forward: full capacity or capacity factor,
    the token permutation, NxD's cumsum) with the expert GEMMs alone stood in for, as no weights are allocated:
    the path the client takes and the expert capacity it computes, or what it raises (EP without a capacity factor)."""
    layers = [m for _, m in model.model.module.named_modules() if type(m).__name__ == "ParallelTransformerLayer"]
    switch = [m for _, m in model.model.module.named_modules() if type(m).__name__ == "NeuronSwitchMLP"]
    if not switch:
        return
    moe = switch[0].moe
    if isinstance(moe, Anything) or isinstance(moe, type):
        W.record["nxd.moe"] = "%d NeuronSwitchMLP layers; NxD's MoE modules stubbed (no torch installed)" % len(switch)
        return
    import torch
    router, em = moe.router, moe.expert_mlps
    gate_up = getattr(em.mlp_op, "gate_up_proj", None) or em.mlp_op.up_proj
    down = em.mlp_op.down_proj
    W.record["nxd.moe"] = "%d of %d layers NeuronSwitchMLP: %s top_k %d of %d experts (%s affinities), normalize_top_k_affinities " \
        "%s; ExpertMLPs capacity_factor %s, %s MLP (%s), SP %s" % (
            len(switch), len(layers), type(router).__name__, router.top_k, router.num_experts, router.act_fn,
            em.normalize_top_k_affinities, em.capacity_factor if em.capacity_factor is not None else "None (full capacity)",
            "gated" if em.glu_mlp else "plain", getattr(em.act_fn, "__name__", em.act_fn), moe.sequence_parallel_enabled)
    W.record["nxd.moe experts per EP rank"] = "%d of %d (EP %d, expert DP %d): gate_up_proj %s, down_proj %s per rank" % (
        gate_up._n_local_experts, em.num_experts, W.ep, W.world // (W.tp * W.pp * W.ep), tuple(gate_up.weight.shape),
        tuple(down.weight.shape))
    with harness_reads():  # the harness's own look at the config is no client read
        seq = int(model.config.model.encoder_seq_length)
        tokens = int(model.config.data.micro_batch_size) * seq  # MoE.forward gathers the SP shards: T = S x B

    class ExpertGemms(torch.nn.Module):
        """Stands in for Experts (the gate/up and down GEMMs): (E or 1, C, H) in, (E, C, H) out, shapes recorded."""
        def __init__(self):
            torch.nn.Module.__init__(self)
            self.shapes = []

        def forward(self, hidden_states, expert_indices=None):
            self.shapes.append(tuple(hidden_states.shape))
            e = em.num_experts if hidden_states.shape[0] == 1 else hidden_states.shape[0]
            return torch.zeros(e, hidden_states.shape[1], hidden_states.shape[2])

    real, gemms = em.mlp_op, ExpertGemms()
    em.mlp_op = gemms
    try:
        g = torch.Generator().manual_seed(0)
        logits = torch.randn(tokens, em.num_experts, generator=g)
        em.train()
        em.forward(torch.zeros(tokens, 8), torch.softmax(logits, dim=1), torch.topk(logits, em.top_k).indices, seq)
    finally:
        em.mlp_op = real
    shape = gemms.shapes[0]
    if shape[0] == 1:
        W.record["nxd.moe training forward"] = "full capacity (forward_all_experts): each of the %d experts computes all %d " \
            "tokens of a micro-batch (%.4g x the top-%d routed work)" % (em.num_experts, tokens, em.num_experts / em.top_k, em.top_k)
    else:
        W.record["nxd.moe training forward"] = "capacity factor (forward_capacity_factor): %d slots per expert for the %d " \
            "tokens of a micro-batch (%.4g x the top-%d routed work)" % (
                shape[1], tokens, shape[0] * shape[1] / float(tokens * em.top_k), em.top_k)


def check_one(trees, job_path, base_name):
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError
    nxdt = trees["nxdt"]
    source = check_nxd_hf.source_of(job_path)
    base_name = base_name or BASES["megatron moe" if source == "megatron" and moe_experts(job_path) > 1 else source] \
        if source in BASES else base_name or BASES["megatron"]
    user_key_names = USER_KEYS.get(source, USER_KEYS["megatron"])
    HF.job_dir = os.path.dirname(os.path.abspath(job_path))
    real_torch = install_stubs(trees)
    header = open(job_path).read()
    vocab = re.search(r"trainplan assumed (\d+)", header)
    W.vocab = int(vocab.group(1)) if vocab else 32000
    sys.path[:0] = [os.path.join(nxdt, "src"), os.path.join(nxdt, "examples")]
    import training  # noqa: F401 (the client's imports, through the stubs)
    import training_orchestrator  # noqa: F401
    from neuronx_distributed_training.lightning_modules.data.megatron import data_module
    data_module.build_train_valid_test_datasets = lambda **kw: (None, None, None)
    ptl_kwargs = {}
    training.NLPTrainer = make_trainer_class(ptl_kwargs)
    training.NLPDDPStrategy = lambda **kw: Anything()
    training.NLPCheckpointIO = lambda *a, **k: Anything()
    # exp_manager runs as written (utils/exp_manager.py: the ExpManagerConfig merge at :164-165, check_resume,
    # configure_checkpointing); NeMo's directory and logger helpers are stubbed to a scratch folder
    from neuronx_distributed_training.utils import exp_manager as nxdt_exp_manager
    scratch = tempfile.mkdtemp(prefix="nxdt_exp.")
    W.scratch.append(scratch)
    nemo_em = sys.modules["nemo.utils.exp_manager"]

    def get_log_dir(trainer, exp_dir=None, name=None, version=None, explicit_log_dir=None, **kw):
        from pathlib import Path
        log_dir = Path(explicit_log_dir) if explicit_log_dir else Path(scratch) / (name or "default")
        return log_dir, str(exp_dir or scratch), name, version
    nemo_em.get_log_dir = get_log_dir
    nemo_em.error_checks = lambda trainer, cfg: None
    real_exp_manager = nxdt_exp_manager.exp_manager

    def exp_manager(trainer, cfg):
        real_exp_manager(trainer, cfg)
        merged = OmegaConf.merge(OmegaConf.structured(nxdt_exp_manager.ExpManagerConfig),
                                 OmegaConf.create(OmegaConf.to_container(cfg, resolve=True)))
        W.record["exp_manager"] = "ok: resume_if_exists %s, checkpoint every %s steps, model_parallel_size %s" % (
            merged.resume_if_exists, merged.checkpoint_callback_params.every_n_train_steps,
            merged.checkpoint_callback_params.get("model_parallel_size"))
    training.exp_manager = exp_manager

    example = OmegaConf.load(os.path.join(nxdt, "examples/conf/%s.yaml" % base_name))
    job = OmegaConf.load(job_path)
    own_keys = leaves(OmegaConf.masked_copy(job, [k for k in job.keys() if k != "defaults"]))
    if "defaults" in job:  # a Hydra defaults list: compose it as Hydra 1.2 does (_self_ last unless placed)
        entries = list(job.defaults)
        if "_self_" not in entries:
            entries.append("_self_")
        own = OmegaConf.masked_copy(job, [k for k in job.keys() if k != "defaults"])
        composed = OmegaConf.create()
        for entry in entries:
            if entry == "_self_":
                composed.merge_with(own)
            elif isinstance(entry, str):
                composed.merge_with(OmegaConf.load(os.path.join(nxdt, "examples/conf/%s.yaml" % entry)))
            else:
                raise ValueError("defaults entry %r: only config names from examples/conf are composed here" % (entry,))
        job = composed
    env0 = dict(os.environ)
    for k in ("XLA_USE_BF16", "XLA_DOWNCAST_BF16", "NEURON_RT_STOCHASTIC_ROUNDING_EN", "NEURON_FUSE_SOFTMAX",
              "NEURON_CC_FLAGS", "COMPILE", "TRAIN_ITERS"):
        env0.pop(k, None)
    roots = [("NxDT", nxdt), ("NxD", os.path.join(trees["nxd"], "src")), ("NeMo", trees["nemo"]),
             ("harness", os.path.dirname(os.path.abspath(__file__)))]
    reads = Reads(roots)
    result = {"file": job_path, "torch": "real" if real_torch else "stub", "model_source": source, "base": base_name}

    # keys the file writes that the example lacks (Hydra's struct mode would refuse them as overrides)
    written = own_keys
    result["not in example"] = [k for k in written if OmegaConf.select(example, k, default="<absent>") == "<absent>"]

    def user_keys(cfg):
        with open_dict(cfg):
            for k in user_key_names:
                if OmegaConf.select(cfg, k, default=None) is None:
                    OmegaConf.update(cfg, k, copy.deepcopy(OmegaConf.select(example, k)), force_add=True)

    modes = {}

    def fill_loop(cfg, env, label):
        """Run the main body on cfg; each key it lacks is recorded and filled from the example, then rerun."""
        missing, failure = [], None
        for _ in range(60):
            ptl_kwargs.clear()
            try:
                run_main(cfg, env)
                return missing, None
            except (ConfigAttributeError, ConfigKeyError) as e:
                key = e.full_key
                site = client_site(sys.exc_info()[2], roots)
                value = OmegaConf.select(example, key, default="<absent>")
                missing.append({"key": key, "read at": site[-1] if site else "?", "when": label, "example value":
                                OmegaConf.to_container(value) if OmegaConf.is_config(value) else value})
                if value == "<absent>":
                    return missing, {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0]), "at": site}
                with open_dict(cfg):
                    OmegaConf.update(cfg, key, copy.deepcopy(value), force_add=True)
            except Exception as e:
                return missing, {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else repr(e)),
                                 "at": client_site(sys.exc_info()[2], roots)}
        return missing, {"error": "gave up after 60 missing keys", "at": []}

    # as written: the file alone in struct mode, as `train.sh --config-name=JOB` gives it to main(); then
    # once more with COMPILE=1, as `neuron_parallel_compile` (train.sh) runs it (process_config sets
    # trainer.max_steps and two exp_manager keys, which struct mode refuses where the file lacks them)
    cfg = copy.deepcopy(job)
    user_keys(cfg)
    OmegaConf.set_struct(cfg, True)
    missing, failure = fill_loop(cfg, env0, "training")
    written_record, written_ptl = dict(W.record), dict(ptl_kwargs)
    if failure is None:
        compile_cfg = copy.deepcopy(cfg)
        more, failure = fill_loop(compile_cfg, dict(env0, COMPILE="1"), "COMPILE=1")
        missing += more
    modes["as written"] = dict(failure or {}, status="FAILED" if failure or missing else "ok",
                               **{"missing keys": missing, "resolved": written_record})

    # composed: example, then the file over it (Hydra defaults list), then struct mode
    cfg = OmegaConf.merge(example, job)
    user_keys(cfg)
    OmegaConf.set_struct(cfg, True)
    ptl_kwargs.clear()
    reads.on = True
    try:
        run_main(cfg, env0)
        modes["composed"] = {"status": "ok", "resolved": dict(W.record)}
    except Exception as e:
        modes["composed"] = {"status": "FAILED", "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else repr(e)),
                             "at": client_site(sys.exc_info()[2], roots), "resolved": dict(W.record)}
    reads.on = False
    site_of = lambda k: reads.sites.get(k) or None
    result["written keys read at"] = {k: site_of(k) for k in written}
    result["not read"] = {k: read_sites(nxdt, k)[:4] for k in written if site_of(k) is None}
    # what filling the missing keys from the example does not cover: keys read with a default (.get)
    # that the example sets otherwise (the file alone runs with the client's default)
    diffs = []
    for k, v in sorted(dict(W.record).items()):
        w = written_record.get(k)
        if w is not None and w != v:
            diffs.append("%s: alone %s | composed %s" % (k, w, v))
    for k in sorted(set(ptl_kwargs) - set(written_ptl)):
        diffs.append("trainer.%s: alone PTL default | composed %s" % (k, ptl_kwargs[k]))
    result["alone vs composed"] = diffs
    result["modes"] = modes
    result["stubbed imports"] = sorted(MissingFinder.stubbed)
    if source == "hf":
        result["stand-ins"] = check_nxd_hf.STUBBED
    return result


def moe_experts(path):
    """model.moe.num_experts of a job file (1 where absent or unreadable): the megatron model builds
    NeuronSwitchMLP where it is above 1 (transformer.py); such a file composes over the Mixtral example."""
    try:
        import yaml
        with open(path) as f:
            data = yaml.safe_load(f)
        return int(((data.get("model") or {}).get("moe") or {}).get("num_experts", 1))
    except Exception:
        return 1


def _dataclass_namespace(ns):
    import dataclasses
    import typing
    ns.update({"dataclass": dataclasses.dataclass, "field": dataclasses.field, "timedelta": __import__("datetime").timedelta})
    ns.update({n: getattr(typing, n) for n in ("Any", "Dict", "List", "Optional", "Tuple", "Union")})
    return ns


def report(result):
    lines = []
    m = result["modes"]
    lines.append("%s: composed %s; as written %s (model_source %s, composed over %s)" % (
        result["file"], m["composed"]["status"], m["as written"]["status"], result.get("model_source"), result.get("base")))
    for mode in ("composed", "as written"):
        r = m[mode]
        if "error" in r:
            lines.append("  %s: %s" % (mode, r["error"]))
            for s in reversed(r.get("at", [])[-3:]):  # innermost first
                lines.append("    at %s" % s)
    missing = m["as written"].get("missing keys", [])
    if missing:
        lines.append("  as written: %d keys the client reads by attribute are missing (each filled from the example, then rerun):"
                     % len(missing))
        for miss in missing:
            lines.append("    %s (example %s) read at %s" % (miss["key"], json.dumps(miss["example value"])[:60],
                                                          miss["read at"].split("`")[0].strip()))
    res = m["composed"].get("resolved", {})
    for k in sorted(res):
        lines.append("  composed %s: %s" % (k, res[k]))
    diffs = result.get("alone vs composed", [])
    ptl = [d.split(":")[0] for d in diffs if d.startswith("trainer.")]
    for d in diffs:
        if not d.startswith("trainer."):
            lines.append("  as written runs otherwise: %s" % d)
    if ptl:
        lines.append("  as written takes PTL 1.8.6 defaults for %s (the example sets them)" % ", ".join(ptl))
    if result["not in example"]:
        lines.append("  keys the example lacks: %s" % ", ".join(result["not in example"]))
    for k, sites in result["not read"].items():
        lines.append("  not read on this start-up path: %s (the name appears at: %s)" % (k, ", ".join(sites) or "nowhere"))
    if result.get("stubbed imports"):
        lines.append("  (imports not installed here, stubbed: %s)" % ", ".join(result["stubbed imports"]))
    if result.get("stand-ins"):
        lines.append("  (stubbed whether installed or not: %s)" % result["stand-ins"])
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for kind in ("nxdt", "nxd", "nemo"):
        parser.add_argument("--" + kind, help="%s git directory or checkout (default: the mirror under %s)" % (kind, MIRRORS))
        parser.add_argument("--%s-commit" % kind, help="commit to extract (default %s)" % PINS[kind][1])
    parser.add_argument("--base", help="examples/conf config the composed run starts from (default: %s for "
                        "model_source megatron, %s for a megatron MoE file, %s for hf)" % (BASES["megatron"], BASES["megatron moe"], BASES["hf"]))
    parser.add_argument("--strict", action="store_true", help="also fail on the as-written run")
    parser.add_argument("--json", action="store_true", help="one JSON object per file")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("jobs", nargs="+")
    o = parser.parse_args()
    if o.one:  # one job per process: the client's globals do not carry over
        trees = json.loads(o.one)
        try:
            print("RESULT " + json.dumps(check_one(trees, o.jobs[0], o.base), default=str))
        finally:
            for folder in W.scratch:
                shutil.rmtree(folder, ignore_errors=True)
        return 0
    try:
        import omegaconf  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as e:
        print("SKIPPED: %s (needs omegaconf and PyYAML; Debian: python3-omegaconf)" % e)
        return 0
    scratch = tempfile.mkdtemp(prefix="check_nxd_config.")
    try:
        return run_all(o, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_all(o, scratch):
    trees, names = {}, []
    for kind in ("nxdt", "nxd", "nemo"):
        path, what = extract(kind, getattr(o, kind), getattr(o, kind + "_commit"), scratch)
        if path is None:
            print("SKIPPED: %s" % what)
            return 0
        trees[kind] = path
        names.append(what)
    print("clients: " + ", ".join(names))
    failed = 0
    for job in o.jobs:
        run = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", json.dumps(trees)]
                             + (["--base", o.base] if o.base else []) + [job], capture_output=True, text=True)
        line = next((l for l in run.stdout.splitlines() if l.startswith("RESULT ")), None)
        if run.returncode != 0 or line is None:
            failed += 1
            tail = (run.stderr or run.stdout).strip().splitlines()
            print("%s: HARNESS ERROR: %s" % (job, tail[-1] if tail else "(no output)"))
            continue
        result = json.loads(line[len("RESULT "):])
        bad = result["modes"]["composed"]["status"] != "ok" or (o.strict and result["modes"]["as written"]["status"] != "ok")
        failed += bad
        print(json.dumps(result) if o.json else report(result))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
