#!/usr/bin/env python3
"""Check the ds_config and Megatron-DeepSpeed script `trainplan export --to deepspeed` wrote, as the clients would.

Usage: python3 tools/check_deepspeed_config.py --deepspeed GITDIR [--bigscience GITDIR] [--microsoft GITDIR]
                                               [--mode auto|real|ast] SCRIPT [SCRIPT ...]

SCRIPT is the launch script; its ds_config is the file its --deepspeed_config
names, beside it. The fork, and with it the DeepSpeed release, comes from the
script's trainplan header (stack=megatron-deepspeed-ms) or its options:
microsoft/Megatron-DeepSpeed@f4157bea with DeepSpeed 0.16.2 (b344c04d), else
bigscience-workshop/Megatron-DeepSpeed@8387ae17 with DeepSpeed 0.6.5 (8164ea9e).

--deepspeed, --bigscience and --microsoft name git directories (a bare mirror
will do) holding those commits; the Python sources are taken out of git at run
time into a temporary folder and removed afterwards: nothing of the clients is
copied into trainplan. A folder holding the package (deepspeed/ or megatron/)
is taken as it is (reported as unpinned); GITDIR@REV reads another commit
(also reported as unpinned).

What runs, per script, in a fresh process:
  * DeepSpeedConfig(ds_config, mpu=<DP = world / (TP x PP)>) of the pinned
    release, as deepspeed.initialize builds it ("real"; DeepSpeed 0.16.2's
    pydantic models need pydantic 2). torch is a stub: the config code only
    names dtypes. Without pydantic 2 (or with --mode ast) the models are read
    with `ast` instead: field names, aliases, types, Field bounds, deprecated
    fields, extra="forbid", and the batch and precision assertions of
    runtime/config.py are reproduced. In auto mode both run where both can, and
    a disagreement is reported.
  * Every key written is looked up where the client reads it (the constant
    that names it, or the model field): a key nothing reads is reported.
  * The engine rules that turn on the ds_config (pipe/engine.py, engine.py):
    ZeRO stage with the pipeline engine, the pipeline batch identity, BF16 with
    ZeRO in each release, overlap_comm where it is not read, BF16 support of
    the device.
  * The fork's own megatron/arguments.py parse_args (and validate_args where
    it has one) on the script's pretrain_gpt.py options, with WORLD_SIZE from
    --nnodes x --nproc_per_node, and DeepSpeed's add_config_arguments from the
    pinned release; options it does not define are named. Then the fork's
    checks that tie script and ds_config (training.py precision asserts, the
    per-iteration set_train_batch_size, --zero-stage, vocabulary padding).
Each finding names the file:line at the pinned commit that decides it (found
in the extracted source, so the line is that commit's). A check whose source
is missing (no --microsoft checkout, no pydantic 2 for real mode) is reported
as skipped, and does not fail the run.

Prints, per script: PASS or FAIL, then one line per finding (FAIL, WARN for a
key the client ignores or reads otherwise, SKIP, NOTE). Exits 1 if any script
fails, 0 otherwise (also when every check had to be skipped). Needs only the
Python standard library and git; pydantic 2 is used when present.
"""
import argparse
import ast
import contextlib
import copy
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
import types
import unittest.mock

PINS = {
    "microsoft": {
        "deepspeed": ("0.16.2", "b344c04df0fdf058617004924a7aaa15055dccce"),
        "fork": ("microsoft/Megatron-DeepSpeed", "f4157bea69f3df8c6cb66f2ebcda66ba03d1288e"),
    },
    "bigscience": {
        "deepspeed": ("0.6.5", "8164ea9e6d35dfbbe62b0f15448daf05268b9e81"),
        "fork": ("bigscience-workshop/Megatron-DeepSpeed", "8387ae17c4704f6579f88a84500b535d19d7fbbf"),
    },
}
# Options only microsoft's fork defines (its megatron/arguments.py); used when the header names no stack.
MICROSOFT_ONLY = ("--vocab-size", "--normalization", "--swiglu", "--num-key-value-heads",
                  "--use-rotary-position-embeddings", "--no-position-embedding", "--untie-embeddings-and-output-weights",
                  "--disable-bias-linear", "--sequence-parallel", "--recompute-granularity", "--recompute-activations",
                  "--no-pipeline-parallel")
DS_TREES = ["deepspeed", "accelerator", "op_builder"]
FORK_TREES = ["megatron", "pretrain_gpt.py", "tools"]
NO_BF16_DEVICES = re.compile(r"v100|p100|t4\b|k80|p3\.|p3dn|g4dn", re.I)


# ----------------------------------------------------------------------------------------------------------------
# Sources: a pinned commit out of a git directory, or a folder as it is.

class Source:
    """The Python files of one client at one commit, in a folder; `status` says why not, when not."""

    def __init__(self, name, location, commit, trees, package, workdir):
        self.name, self.commit, self.root, self.status, self.pinned = name, commit, None, None, True
        self.location = location
        if not location:
            self.status = "no %s given" % name
            return
        rev = commit
        if "@" in location and not os.path.isdir(location):
            location, rev = location.rsplit("@", 1)
            self.pinned = rev.lower() == commit[:len(rev)].lower()
            self.location = location
        if not os.path.isdir(location):
            self.status = "%s not found: %s" % (name, location)
            return
        if os.path.isdir(os.path.join(location, package)):  # a checkout, read as it is
            self.root, self.pinned, self.commit = location, False, "checkout " + location
            return
        if shutil.which("git") is None:
            self.status = "git is not installed"
            return
        full = subprocess.run(["git", "-C", location, "rev-parse", "--verify", "-q", rev + "^{commit}"],
                              capture_output=True, text=True)
        if full.returncode != 0:
            self.status = "%s has no commit %s" % (location, rev)
            return
        self.commit = full.stdout.strip()
        self.root = os.path.join(workdir, "%s-%s" % (name, self.commit[:12]))
        if not os.path.isdir(self.root):
            error = extract(location, self.commit, trees, self.root)
            if error:
                self.status, self.root = error, None

    def label(self):
        if self.commit.startswith("checkout"):
            return "%s (%s, unpinned)" % (self.name, self.commit)
        return "%s@%s%s" % (self.name, self.commit[:8], "" if self.pinned else " (unpinned: %s)" % self.location)

    def text(self, rel):
        try:
            with open(os.path.join(self.root, rel), encoding="utf-8") as f:
                return f.read()
        except OSError:
            return ""

    def line(self, rel, marker, after=None):
        """'rel:N' for the first line holding marker (a string or compiled regex), after the line holding `after`."""
        lines = self.text(rel).splitlines()
        start = 0
        if after is not None:
            start = next((i for i, l in enumerate(lines) if after in l), len(lines))
        for i in range(start, len(lines)):
            hit = marker.search(lines[i]) if hasattr(marker, "search") else marker in lines[i]
            if hit:
                return "%s:%d" % (rel, i + 1)
        return "%s:? (marker %r not found)" % (rel, getattr(marker, "pattern", marker))


def extract(gitdir, commit, trees, dest):
    """The .py files (and symlinks) under `trees` at `commit` into dest; an error text or None."""
    listing = subprocess.run(["git", "-C", gitdir, "ls-tree", "-r", "-z", commit, "--"] + trees, capture_output=True)
    if listing.returncode != 0:
        return "git ls-tree failed in %s: %s" % (gitdir, listing.stderr.decode(errors="replace").strip())
    wanted, links = [], []
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        path = path.decode()
        if mode == b"120000":
            links.append((sha.decode(), path))
        elif kind == b"blob" and path.endswith(".py"):
            wanted.append((sha.decode(), path))
    if not wanted:
        return "%s holds no Python files under %s at %s" % (gitdir, " ".join(trees), commit[:8])
    blobs = dict(wanted + links)
    batch = subprocess.run(["git", "-C", gitdir, "cat-file", "--batch"], capture_output=True,
                           input=b"".join(s.encode() + b"\n" for s in blobs))
    data, pos, contents = batch.stdout, 0, {}
    for sha in blobs:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        contents[sha] = data[pos:pos + size]
        pos += size + 1
    for sha, path in wanted:
        if sha in contents:
            target = os.path.join(dest, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(contents[sha])
    for sha, path in links:
        if sha in contents:
            target = os.path.join(dest, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(contents[sha].decode().rstrip("/"), target)
    return None


# ----------------------------------------------------------------------------------------------------------------
# The script.

def read_script(path):
    """What the launch script states: header, torchrun counts, pretrain_gpt.py options, ds_config path."""
    text = open(path, encoding="utf-8").read()
    header = dict(re.findall(r"(\w+)=(\S+)", (re.search(r"^# trainplan: (.*)$", text, re.M) or [None, ""])[1]))
    env = dict(re.findall(r"^export (\w+)=(\S+)", text, re.M))
    joined = text.replace("\\\n", " ")
    line = next(l for l in joined.splitlines() if "pretrain_gpt.py" in l and not l.lstrip().startswith("#"))
    words = shlex.split(line)
    counts = {"--nnodes": 1, "--nproc_per_node": 1, "--nproc-per-node": 1, "--num_nodes": 1, "--num_gpus": 1}
    for i, word in enumerate(words):
        name = word.split("=")[0]
        if name in counts:
            counts[name] = int(word.split("=")[1]) if "=" in word else int(words[i + 1])
    start = next(i for i, w in enumerate(words) if w.endswith("pretrain_gpt.py")) + 1
    argv = [w for w in words[start:] if w not in ("$@", '"$@"')]
    world = max(counts["--nnodes"], counts["--num_nodes"]) * max(counts["--nproc_per_node"],
                                                                 counts["--nproc-per-node"], counts["--num_gpus"])
    options = {}
    i = 0
    while i < len(argv):
        if argv[i].startswith("--"):
            name, _, value = argv[i].partition("=")
            if not value and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                value = argv[i + 1]
                i += 1
            options[name] = value if value else True
        i += 1
    if header.get("stack") == "megatron-deepspeed-ms" or any(o in options for o in MICROSOFT_ONLY):
        fork = "microsoft"
    else:
        fork = "bigscience"
    config = options.get("--deepspeed_config") or options.get("--deepscale_config")
    config_path = os.path.join(os.path.dirname(os.path.abspath(path)), config) if isinstance(config, str) else None
    return {"script": path, "header": header, "env": env, "argv": argv, "options": options, "world": world,
            "fork": fork, "config": config_path}


# ----------------------------------------------------------------------------------------------------------------
# The child: one script, with the client modules loaded under stubs.

def lenient(module, submodule=lambda name: False):
    """Attributes a stub module lacks read as mocks, or as its submodule where `submodule(name)` says one exists
    (as the package's own __init__ would have imported it)."""
    def fallback(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if submodule(name):
            return importlib.import_module(module.__name__ + "." + name)
        return unittest.mock.MagicMock(name=module.__name__ + "." + name)
    module.__getattr__ = fallback


def make_torch(module):
    """The few torch names the config code evaluates: dtypes as real objects, a real dtype class."""
    class dtype:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return "torch." + self.name
    module.dtype = dtype
    for name in ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
                 "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"):
        setattr(module, name, dtype(name))
    module.half, module.float, module.double = module.float16, module.float32, module.float64
    module.Tensor = type("Tensor", (), {})
    module.Size = tuple
    module.__version__ = "2.5.0"
    module.cuda = unittest.mock.MagicMock(name="torch.cuda")
    module.cuda.is_available = lambda: False


def make_packaging(module):
    """packaging.version.parse for the version comparisons DeepSpeed makes at import."""
    import functools

    @functools.total_ordering
    class Version:
        def __init__(self, text):
            self.text = str(text)
            numbers = [int(x) for x in re.findall(r"\d+", self.text)[:3]]
            self.release = tuple(numbers + [0] * (3 - len(numbers)))
            self.major, self.minor, self.micro = self.release

        def __eq__(self, other):
            return self.release == other.release

        def __lt__(self, other):
            return self.release < other.release
    module.parse = module.Version = Version
    module.version = module


class Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """torch and the other third-party modules the client imports, as lenient stubs."""
    names = ("torch", "hjson", "numpy", "packaging", "psutil", "tqdm", "cpuinfo", "ninja", "msgpack", "einops",
             "apex", "transformer_engine", "triton", "safetensors", "pynvml", "nvtx", "py_cpuinfo", "amp_C",
             "fused_layer_norm_cuda", "scaled_masked_softmax_cuda", "flash_attn", "deepspeed_aio", "transformers",
             "sentencepiece", "tiktoken", "tokenizers", "datasets", "wandb", "tensorboard", "mpi4py", "scipy", "nltk",
             "habana_frameworks", "intel_extension_for_pytorch", "mup")
    submodules = ("nn", "functional", "jit", "distributed", "optim", "utils", "autograd", "cuda_", "fx", "onnx",
                  "multiprocessing", "testing", "backends", "amp", "version")

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        lenient(module, lambda name: name in self.submodules)
        if spec.name == "torch":
            make_torch(module)
        if spec.name == "torch.nn":
            module.Module = type("Module", (), {"__init__": lambda self, *a, **k: None})
        if spec.name == "torch.jit":
            module.script = lambda fn=None, *a, **k: fn if fn is not None else (lambda f: f)
        if spec.name in ("packaging", "packaging.version"):
            make_packaging(module)
        return module

    def exec_module(self, module):
        pass


class BarePackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The client's packages as folders without their __init__ (which import the whole runtime)."""

    def __init__(self, roots, run_init=()):
        self.roots, self.run_init = roots, set(run_init)

    def find_spec(self, name, path, target=None):
        parts = name.split(".")
        root = self.roots.get(parts[0])
        if root is None or name in self.run_init:
            return None
        folder = os.path.join(root, *parts)
        if not os.path.isdir(folder):
            return None
        spec = importlib.machinery.ModuleSpec(name, self, is_package=True)
        spec.submodule_search_locations = [folder]
        return spec

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        folder = spec.submodule_search_locations[0]
        module.__path__ = spec.submodule_search_locations
        lenient(module, lambda name: os.path.isfile(os.path.join(folder, name + ".py"))
                or os.path.isdir(os.path.join(folder, name)))
        return module

    def exec_module(self, module):
        pass


def pydantic_version():
    try:
        import pydantic
        return int(str(pydantic.VERSION).split(".")[0])
    except Exception:  # not installed, or broken
        return 0


class Findings:
    def __init__(self):
        self.items = []

    def add(self, level, check, where, what, fix=None):
        self.items.append({"level": level, "check": check, "where": where, "what": what, "fix": fix})


# ---- the pydantic models, read with ast ------------------------------------------------------------------------

class ModelInfo:
    def __init__(self, name, rel, line):
        self.name, self.rel, self.line = name, rel, line
        self.bases, self.fields, self.validators, self.extra = [], {}, [], None


def const_value(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "pp_int" and node.args:
            try:
                return int(ast.literal_eval(node.args[0]))
            except Exception:
                return None
        return None


def read_models(source, rels):
    """Every class in `rels` (pydantic models and enums), with fields, aliases, bounds, validators and extra."""
    models, enums = {}, {}
    for rel in rels:
        tree = ast.parse(source.text(rel) or "\n")
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b) for b in node.bases]
            if "Enum" in bases:
                enums[node.name] = {t.id: const_value(s.value) for s in node.body if isinstance(s, ast.Assign)
                                    for t in s.targets if isinstance(t, ast.Name)}
                continue
            info = ModelInfo(node.name, rel, node.lineno)
            info.bases = bases
            for s in node.body:
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                    field = {"annotation": ast.unparse(s.annotation), "line": s.lineno, "alias": None,
                             "deprecated": False, "new_param": None, "bounds": {}, "default": None}
                    value = s.value
                    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Field":
                        if value.args:
                            field["default"] = const_value(value.args[0])
                        for kw in value.keywords:
                            if kw.arg == "alias":
                                field["alias"] = const_value(kw.value)
                            elif kw.arg in ("ge", "gt", "le", "lt"):
                                field["bounds"][kw.arg] = const_value(kw.value)
                            elif kw.arg == "default":
                                field["default"] = const_value(kw.value)
                            elif kw.arg == "json_schema_extra":
                                extra = const_value(kw.value) if not isinstance(kw.value, ast.Dict) else {
                                    const_value(k): const_value(v) for k, v in zip(kw.value.keys, kw.value.values)}
                                extra = extra or {}
                                field["deprecated"] = bool(extra.get("deprecated"))
                                field["new_param"] = extra.get("new_param")
                    elif value is not None:
                        field["default"] = const_value(value)
                    info.fields[s.target.id] = field
                elif isinstance(s, ast.Assign) and any(getattr(t, "id", None) == "model_config" for t in s.targets):
                    for kw in getattr(s.value, "keywords", []):
                        if kw.arg == "extra":
                            info.extra = (const_value(kw.value), "%s:%d" % (rel, kw.value.lineno))
                elif isinstance(s, ast.FunctionDef):
                    for d in s.decorator_list:
                        name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
                        if "validator" in name:
                            info.validators.append((s.name, "%s:%d" % (rel, s.lineno), ast.unparse(s)))
            models[node.name] = info
    return models, enums


def model_extra(models, info):
    seen = info
    while seen is not None:
        if seen.extra:
            return seen.extra
        seen = next((models[b] for b in seen.bases if b in models), None)
    return ("ignore", None)  # pydantic's own default


def all_fields(models, info):
    fields, seen, chain = {}, info, []
    while seen is not None:
        chain.append(seen)
        seen = next((models[b] for b in seen.bases if b in models), None)
    for model in reversed(chain):
        for name, field in model.fields.items():
            fields[name] = dict(field, rel=model.rel)
    return fields


def lax_check(annotation, value, models, enums):
    """(ok, coerced, inner model name or None) for a value against an annotation, as pydantic 2's lax mode."""
    ann = annotation.replace("typing.", "").strip()
    m = re.fullmatch(r"Optional\[(.*)\]", ann)
    if m:
        return (True, False, None) if value is None else lax_check(m.group(1), value, models, enums)
    m = re.fullmatch(r"Union\[(.*)\]", ann)
    if m:
        for part in [p.strip() for p in m.group(1).split(",")]:
            result = lax_check(part, value, models, enums)
            if result[0]:
                return result
        return False, False, None
    if ann in ("bool",):
        if isinstance(value, bool):
            return True, False, None
        if isinstance(value, int) and value in (0, 1):
            return True, True, None
        if isinstance(value, str) and value.lower() in ("0", "1", "true", "false", "t", "f", "yes", "no", "y", "n",
                                                        "on", "off"):
            return True, True, None
        return False, False, None
    if ann in ("int", "pp_int"):
        if isinstance(value, bool):
            return True, True, None
        if isinstance(value, int):
            return True, False, None
        if isinstance(value, float) and value.is_integer():
            return True, True, None
        if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
            return True, True, None
        return False, False, None
    if ann == "float":
        if isinstance(value, bool):
            return True, True, None
        return (isinstance(value, (int, float)), False, None)
    if ann in ("str", "Path"):
        return isinstance(value, str), False, None
    if ann in enums:
        values = list(enums[ann].values())
        ok = (value in values and not isinstance(value, bool)) or (isinstance(value, bool) and int(value) in values)
        if not ok and isinstance(value, str):
            ok = value in [str(v) for v in values]
            return ok, ok, None
        return ok, isinstance(value, bool), None
    if ann.startswith(("Dict", "dict")):
        return isinstance(value, dict), False, None
    if ann.startswith(("List", "list")):
        return isinstance(value, list), False, None
    if ann == "Any":
        return True, False, None
    if ann in models:
        return isinstance(value, dict), False, ann
    return True, False, None  # an annotation this reader does not know: not judged


def ast_validate(models, enums, model_name, data, path, findings, source, check="ds-config(ast)"):
    """DeepSpeedConfigModel(**data) as pydantic 2 would judge it, from the parsed models."""
    info = models[model_name]
    fields = all_fields(models, info)
    by_alias = {f["alias"]: n for n, f in fields.items() if f["alias"]}
    extra, extra_where = model_extra(models, info)
    failed = False
    for key, value in data.items():
        where_class = "%s:%d" % (info.rel, info.line)
        if value == "auto":
            findings.add("WARN", check, "deepspeed/runtime/config_utils.py",
                         "%s.%s = \"auto\" is dropped by DeepSpeedConfigModel.__init__ (non-strict)" % (path, key))
            continue
        name = key if key in fields else by_alias.get(key)
        if name is None:
            if extra == "forbid":
                failed = True
                findings.add("FAIL", check, "%s (class %s); extra=\"forbid\" at %s" % (where_class, model_name,
                                                                                      extra_where),
                             "%s.%s: extra inputs are not permitted (%s has no field or alias %r)" % (
                                 path, key, model_name, key), "drop %s.%s" % (path, key))
            else:
                findings.add("WARN", check, where_class, "%s.%s: not a field of %s; ignored" % (path, key, model_name))
            continue
        field = fields[name]
        where = "%s:%d" % (field["rel"], field["line"])
        ok, coerced, inner = lax_check(field["annotation"], value, models, enums)
        if not ok:
            failed = True
            findings.add("FAIL", check, where, "%s.%s = %s: not a valid %s" % (path, key, json.dumps(value),
                                                                                field["annotation"]))
            continue
        if coerced:
            findings.add("WARN", check, where, "%s.%s = %s is coerced to %s" % (path, key, json.dumps(value),
                                                                                 field["annotation"]))
        bounds = field["bounds"]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for op, limit in bounds.items():
                if limit is None:
                    continue
                bad = {"ge": value < limit, "gt": value <= limit, "le": value > limit, "lt": value >= limit}[op]
                if bad:
                    failed = True
                    findings.add("FAIL", check, where, "%s.%s = %s: must be %s %s" % (path, key, value, op, limit))
        if field["deprecated"]:
            findings.add("WARN", check, where, "%s.%s is deprecated%s" % (
                path, key, " (use %s)" % field["new_param"] if field["new_param"] else ""))
        if inner and isinstance(value, dict):
            failed |= ast_validate(models, enums, inner, value, path + "." + key, findings, source, check)
    for vname, vwhere, body in info.validators:
        touched = [k for k in data if re.search(r"\b%s\b" % re.escape(fields.get(k, {}).get("alias") or k), body)]
        if touched:
            findings.add("NOTE", check, vwhere, "validator %s reads %s (not run by the ast reader)" % (
                vname, ", ".join("%s.%s" % (path, k) for k in touched)))
    return failed


# ---- constants: which keys the plain readers look up -----------------------------------------------------------

def read_constants(source, rels):
    """NAME -> (value, 'rel:line') for the module-level constants of `rels`."""
    constants = {}
    for rel in rels:
        tree = ast.parse(source.text(rel) or "\n")
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = const_value(node.value)
                if isinstance(node.value, ast.Name) and node.value.id in constants:
                    value = constants[node.value.id][0]
                constants[node.targets[0].id] = (value, "%s:%d" % (rel, node.lineno))
    return constants


def key_constant(constants, key, prefixes):
    """(constant name, where) of a key named by a constant with one of `prefixes`; None if no reader names it."""
    for name, (value, where) in constants.items():
        if value == key and not name.endswith("_DEFAULT") and any(name.startswith(p) for p in prefixes):
            return name, where
    return None


def plain_key_check(source, version, cfg, findings):
    """The keys DeepSpeedConfig reads with get_scalar_param (no validation): named by a constant, right type."""
    rels = ["deepspeed/runtime/constants.py", "deepspeed/runtime/zero/constants.py",
            "deepspeed/runtime/zero/config.py", "deepspeed/runtime/activation_checkpointing/config.py",
            "deepspeed/elasticity/constants.py", "deepspeed/monitor/config.py", "deepspeed/comm/constants.py"]
    constants = read_constants(source, [r for r in rels if source.text(r)])
    sections = {"bf16": ("BFLOAT16_",), "bfloat16": ("BFLOAT16_",), "fp16": ("FP16_",), "amp": ("AMP_",)}
    if version == "0.6.5":
        sections["zero_optimization"] = ("ZERO_OPTIMIZATION_", "ZERO3_", "OFFLOAD_")
    for key, value in cfg.items():
        hit = key_constant(constants, key, ("",))
        if hit is None:
            findings.add("WARN", "ds-keys", "deepspeed/runtime/config.py",
                         "top-level key %r: no constant of runtime/constants.py names it; DeepSpeedConfig never reads "
                         "it (top-level keys are not validated)" % key, "drop %r" % key)
            continue
        if key in sections and isinstance(value, dict):
            for sub, subvalue in value.items():
                sub_hit = key_constant(constants, sub, sections[key])
                if sub_hit is None:
                    findings.add("WARN", "ds-keys", hit[1], "%s.%s: no %s* constant names it; ignored" % (
                        key, sub, sections[key][0]), "drop %s.%s" % (key, sub))
                    continue
                default = constants.get(sub_hit[0] + "_DEFAULT", (None, None))[0]
                if default is not None and type(default) is not type(subvalue) and not (
                        isinstance(default, (int, float)) and not isinstance(default, bool)
                        and isinstance(subvalue, (int, float)) and not isinstance(subvalue, bool)):
                    findings.add("FAIL", "ds-keys", sub_hit[1], "%s.%s = %s: the client's default is %r (%s); it "
                                 "reads the value unvalidated" % (key, sub, json.dumps(subvalue), default,
                                                                  type(default).__name__))
        elif key in sections:
            findings.add("FAIL", "ds-keys", hit[1], "%s: an object is read (param_dict[%r][...]), found %s" % (
                key, key, json.dumps(value)))


# ---- DeepSpeedConfig, real ------------------------------------------------------------------------------------

class Mpu:
    """What DeepSpeedConfig asks of the model-parallel unit: the DP world."""

    def __init__(self, dp):
        self.dp = dp

    def get_data_parallel_world_size(self):
        return self.dp

    def get_data_parallel_rank(self):
        return 0

    def get_model_parallel_world_size(self):
        return 1

    def get_model_parallel_rank(self):
        return 0


def innermost(root, tb, with_text=False):
    """'rel:line' of the innermost traceback frame inside root (and that line's text)."""
    where, text = None, ""
    for frame in traceback.extract_tb(tb):
        path = os.path.realpath(frame.filename)
        if path.startswith(os.path.realpath(root) + os.sep):
            where = "%s:%d" % (os.path.relpath(path, os.path.realpath(root)), frame.lineno)
            text = (frame.line or "").strip()
    return (where or "?", text) if with_text else (where or "?")


def describe(root, error):
    """(where, what) of an exception the client raised: its message, or the failing line where it has none."""
    where, text = innermost(root, error.__traceback__, with_text=True)
    message = str(error).splitlines()[0] if str(error) else ""
    return where, "%s: %s" % (type(error).__name__, message or "`%s`" % text)


def real_deepspeed_config(source, version, cfg, dp, findings, models):
    """DeepSpeedConfig(cfg, mpu) of the release; (ok, resolved dict) or None when it cannot be loaded."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module = importlib.import_module("deepspeed.runtime.config")
    except Exception as error:  # the module graph needs something missing here
        findings.add("SKIP", "ds-config(real)", innermost(source.root, error.__traceback__),
                     "DeepSpeedConfig could not be loaded: %s: %s" % (type(error).__name__, error))
        return None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            config = module.DeepSpeedConfig(copy.deepcopy(cfg), mpu=Mpu(dp))
    except Exception as error:
        errors = getattr(error, "errors", None)
        if callable(errors):  # pydantic.ValidationError
            for e in errors():
                loc = ".".join(str(x) for x in e.get("loc", ()))
                title = getattr(error, "title", "?")
                info = models.get(title)
                where = "%s:%d (class %s)" % (info.rel, info.line, title) if info else title
                if info and e.get("type") == "extra_forbidden":
                    where += "; extra=\"forbid\" at %s" % model_extra(models, info)[1]
                elif info and loc in all_fields(models, info):
                    field = all_fields(models, info)[loc]
                    where = "%s:%d" % (field["rel"], field["line"])
                findings.add("FAIL", "ds-config(real)", where, "%s: %s [%s]" % (loc, e.get("msg"), e.get("type")))
        else:
            findings.add("FAIL", "ds-config(real)", *describe(source.root, error))
        return False, {}
    zero = config.zero_config
    resolved = {"train_batch_size": config.train_batch_size,
                "train_micro_batch_size_per_gpu": config.train_micro_batch_size_per_gpu,
                "gradient_accumulation_steps": config.gradient_accumulation_steps, "world_size(dp)": config.world_size,
                "zero_stage": int(config.zero_optimization_stage), "overlap_comm": getattr(zero, "overlap_comm", None),
                "bf16": config.bfloat16_enabled, "fp16": config.fp16_enabled}
    return True, resolved


# ---- DeepSpeedConfig, by reading -----------------------------------------------------------------------------------

def ast_deepspeed_config(source, version, cfg, dp, findings, models, enums):
    """DeepSpeedConfig._initialize_params / _configure_train_batch_size / _do_error_check, reproduced."""
    rel = "deepspeed/runtime/config.py"
    failed = False
    zero = cfg.get("zero_optimization", {})
    if version != "0.6.5" and "DeepSpeedZeroConfig" in models:
        if isinstance(zero, bool):
            findings.add("WARN", "ds-config(ast)", source.line("deepspeed/runtime/zero/config.py",
                                                               "def read_zero_config_deprecated"),
                         "zero_optimization = %s: the deprecated boolean form" % zero)
        elif isinstance(zero, dict):
            failed |= ast_validate(models, enums, "DeepSpeedZeroConfig", zero, "zero_optimization", findings, source)
        else:
            failed = True
            findings.add("FAIL", "ds-config(ast)", source.line("deepspeed/runtime/zero/config.py",
                                                               "DeepSpeedZeroConfig(**"),
                         "zero_optimization = %s: DeepSpeedZeroConfig(**...) needs an object" % json.dumps(zero))
    stage = zero.get("stage", 0) if isinstance(zero, dict) else int(bool(zero))
    if isinstance(stage, (int, float)) and not 0 <= stage <= 3:
        failed = True
        findings.add("FAIL", "ds-config(ast)", source.line(rel, re.compile(r"<=\s*(MAX_STAGE_ZERO_OPTIMIZATION|"
                                                                           r"ZeroStageEnum.max_stage)")),
                     "zero_optimization.stage = %s: the maximum stage is 3" % stage)

    def flag(section, old=None):
        for key in ([section, old] if old else [section]):
            if isinstance(cfg.get(key), dict):
                return bool(cfg[key].get("enabled", False))
        return False
    bf16, fp16 = flag("bf16", "bfloat16"), flag("fp16")
    if bf16 and fp16:
        failed = True
        findings.add("FAIL", "ds-config(ast)", source.line(rel, "cannot be simultaneously enabled"),
                     "bf16.enabled and fp16.enabled are both true", "one of them")
    train, micro, gas = (cfg.get("train_batch_size"), cfg.get("train_micro_batch_size_per_gpu"),
                         cfg.get("gradient_accumulation_steps"))
    if train is not None and micro is not None and gas is not None:
        pass
    elif train is not None and micro is not None:
        gas = train // micro // dp
    elif train is not None and gas is not None:
        micro = train // dp // gas
    elif micro is not None and gas is not None:
        train = micro * gas * dp
    elif train is not None:
        gas, micro = 1, train // dp
    elif micro is not None:
        train, gas = micro * dp, 1
    else:
        failed = True
        findings.add("FAIL", "ds-config(ast)", source.line(rel, "Either train_batch_size or"),
                     "neither train_batch_size nor train_micro_batch_size_per_gpu is given")
        return not failed, {}
    for name, value, marker in (("train_batch_size", train, "Train batch size: "),
                                ("train_micro_batch_size_per_gpu", micro, "Micro batch size per gpu: "),
                                ("gradient_accumulation_steps", gas, "Gradient accumulation steps: ")):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            failed = True
            findings.add("FAIL", "ds-config(ast)", source.line(rel, marker), "%s = %s: must be > 0" % (name, value))
    if not failed and train != micro * gas * dp:
        failed = True
        findings.add("FAIL", "ds-config(ast)",
                     source.line(rel, "train_batch == micro_batch * grad_acc * self.world_size"),
                     "train_batch_size %s != train_micro_batch_size_per_gpu %s x gradient_accumulation_steps %s x DP %s"
                     % (train, micro, gas, dp),
                     "gradient_accumulation_steps = train_batch_size / (micro x DP), with train_batch_size a multiple")
    overlap = zero.get("overlap_comm") if isinstance(zero, dict) else None
    if overlap is None and version != "0.6.5":
        overlap = stage == 3  # the overlap_comm_valid validator's default
    resolved = {"train_batch_size": train, "train_micro_batch_size_per_gpu": micro, "gradient_accumulation_steps": gas,
                "world_size(dp)": dp, "zero_stage": stage, "overlap_comm": overlap, "bf16": bf16, "fp16": fp16}
    return not failed, resolved


# ---- engine rules --------------------------------------------------------------------------------------------------

def engine_rules(source, version, facts, resolved, findings):
    """What deepspeed.initialize's engines do with the resolved config (pipeline or not)."""
    eng, pipe = "deepspeed/runtime/engine.py", "deepspeed/runtime/pipe/engine.py"
    stage, bf16, fp16 = resolved["zero_stage"], resolved["bf16"], resolved["fp16"]
    pipeline = facts["pipeline_engine"]
    if pipeline and stage >= 2:
        findings.add("FAIL", "ds-engine", source.line(pipe, "ZeRO-2 and ZeRO-3 are incompatible with pipeline"),
                     "PipelineEngine asserts ZeRO stage < 2; stage %d written (%s)" % (stage, facts["pipeline_why"]),
                     "stage 0 or 1 (or, microsoft fork, --no-pipeline-parallel with PP 1)")
    if pipeline:
        dp = facts["dp"]
        if resolved["train_batch_size"] != resolved["train_micro_batch_size_per_gpu"] * \
                resolved["gradient_accumulation_steps"] * dp:
            findings.add("FAIL", "ds-engine", source.line(pipe, "assert self.train_batch_size() =="),
                         "PipelineEngine: train_batch_size != micro x micro_batches x grid DP (%d)" % dp)
    if version == "0.6.5":
        if pipeline and bf16 and stage == 1:
            findings.add("FAIL", "ds-engine", "%s; %s" % (source.line(pipe, "only bf16 + z1 are supported"),
                                                          source.line(pipe, "raise NotImplementedError()",
                                                                      after="only bf16 + z1 are supported")),
                         "PipelineEngine._exec_reduce_grads with bf16 and ZeRO stage 1 raises NotImplementedError at "
                         "the first optimizer step (%s)" % facts["pipeline_why"],
                         "zero_optimization.stage 0 with bf16: the BF16_Optimizer, which shards the FP32 states "
                         "(ZeRO-1 memory), as BLOOM ran it")
        if stage == 1 and not bf16 and not fp16:
            z = "deepspeed/runtime/zero/stage_1_and_2.py"
            findings.add("WARN", "ds-reads", "%s; %s; %s; %s; %s" % (
                source.line(eng, "contiguous_gradients = False", after="Overlap and contiguous grads are meaningless"),
                source.line(z, "self.buffered_reduce_fallback(", after="def reduce_ipg_grads"),
                source.line(z, "allreduced = self.allreduce_bucket(small_bucket", after="def allreduce_and_copy"),
                source.line(z, "communication_data_type=torch.float16", after="def allreduce_bucket"),
                source.line(z, "tensor_to_allreduce = tensor.to(communication_data_type)",
                            after="def allreduce_bucket")),
                "FP32 model with ZeRO stage 1: stage 1 turns contiguous_gradients off, so gradients go through "
                "buffered_reduce_fallback -> allreduce_and_copy -> allreduce_bucket, whose communication_data_type "
                "defaults to torch.float16 and is not passed: FP32 gradients are all-reduced as FP16 (2 bytes per "
                "element, not 4; a ds_config communication_data_type does not reach this path)")
    else:
        grad_accum = (facts.get("cfg_data_types") or {}).get("grad_accum_dtype")
        if bf16 and 1 <= stage <= 3 and grad_accum is None:
            findings.add("WARN", "ds-engine", "%s; %s" % (
                source.line(eng, "if model_dtype == torch.bfloat16 and not self.zero_optimization():"),
                source.line(eng, "return ZERO_OPTIMIZATION", after="def _do_optimizer_sanity_check")),
                "bf16 with ZeRO stage %d: gradients accumulate in BF16 and DeepSpeed's ZeRO optimizer is built, "
                "not the BF16 optimizer with FP32 accumulation (data_types.grad_accum_dtype unset)" % stage)
    stack = facts["header"].get("stack", "")
    if "fp16" in stack and not fp16:
        findings.add("WARN", "ds-reads", "-", "the header's stack %s is priced as FP16 mixed precision, but the "
                     "ds_config runs %s (bf16.enabled %s, fp16.enabled %s)" % (stack, "BF16" if bf16 else "FP32",
                                                                               bf16, fp16),
                     "fp16.enabled true and --fp16 for an FP16 stack")
    if bf16 and facts.get("device_bf16") is False:
        if version == "0.6.5":
            findings.add("WARN", "ds-engine", "(no device check in 0.6.5)", "bf16 on %s, which has no BF16 units" %
                         facts["hardware"])
        else:
            findings.add("FAIL", "ds-engine", source.line(eng, "Type bf16 is not supported on your device."),
                         "bf16.enabled on %s: the accelerator reports no BF16 support" % facts["hardware"])
    overlap = facts["cfg_zero"].get("overlap_comm") if isinstance(facts["cfg_zero"], dict) else None
    if overlap:
        reasons = []
        if stage == 0:
            reasons.append("stage 0 builds no ZeRO optimizer; overlap_comm is read only by _configure_zero_optimizer "
                           "(%s)" % source.line(eng, re.compile(r"overlap_comm\s*=\s*self\.zero_overlap_comm\(\)")))
        elif version == "0.6.5" and stage == 1:
            reasons.append("stage 1 turns it off (%s)" % source.line(eng,
                                                                     "Overlap and contiguous grads are meaningless"))
        if pipeline and stage in (1, 2):
            reasons.append("a PipelineModule turns it off (%s)" % source.line(
                eng, "Pipeline parallelism does not support overlapped communication"))
        if pipeline:
            reasons.append("the pipeline engine reduces gradients once, after the last micro-batch (%s, %s)" % (
                source.line(pipe, "self.enable_backward_allreduce = False"),
                source.line(pipe, "def _exec_reduce_grads")))
        if reasons:
            field = re.compile(r"^\s*(overlap_comm\s*:|ZERO_OPTIMIZATION_OVERLAP_COMM\s*=)")
            findings.add("WARN", "ds-ignored", source.line("deepspeed/runtime/zero/config.py" if version != "0.6.5"
                                                           else "deepspeed/runtime/zero/constants.py", field),
                         "zero_optimization.overlap_comm = true is not applied: " + "; ".join(reasons),
                         "write overlap_comm false (or leave it out) for a plan priced without DP overlap")


# ---- the fork's arguments --------------------------------------------------------------------------------------

def argparse_options(source, rel):
    """option -> (kind, line) from the add_argument calls of a file: kind 'flag' or 'value'."""
    options = {}
    tree = ast.parse(source.text(rel) or "\n")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            names = [const_value(a) for a in node.args if isinstance(const_value(a), str)]
            action = next((const_value(k.value) for k in node.keywords if k.arg == "action"), None)
            nargs = next((const_value(k.value) for k in node.keywords if k.arg == "nargs"), None)
            kind = "flag" if action in ("store_true", "store_false", "store_const", "count") or nargs == 0 else "value"
            for name in names:
                if name.startswith("--"):
                    options[name] = (kind, "%s:%d" % (rel, node.lineno))
    return options


def deepspeed_config_arguments(ds_source):
    """add_config_arguments of the pinned DeepSpeed (deepspeed/__init__.py), run from its source."""
    tree = ast.parse(ds_source.text("deepspeed/__init__.py"))
    wanted = [n for n in tree.body if isinstance(n, ast.FunctionDef)
              and n.name in ("_add_core_arguments", "add_config_arguments")]
    namespace = {"argparse": argparse}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "deepspeed/__init__.py", "exec"), namespace)
    return namespace["add_config_arguments"]


def fork_arguments(fork_source, ds_source, facts, findings):
    """The fork's parse_args (and validate_args) on the script's options; the parsed args or None."""
    rel = "megatron/arguments.py"
    known = argparse_options(fork_source, rel)
    known.update(argparse_options(ds_source, "deepspeed/__init__.py"))
    for option, value in facts["options"].items():
        if option not in known:
            findings.add("FAIL", "fork-args", "%s (no add_argument for it)" % rel,
                         "%s is not an option of %s" % (option, fork_source.label()), "drop %s" % option)
        elif known[option][0] == "flag" and value is not True:
            findings.add("FAIL", "fork-args", known[option][1], "%s is a flag; a value %r follows it" % (option, value))
        elif known[option][0] == "value" and value is True:
            findings.add("FAIL", "fork-args", known[option][1], "%s takes a value; none given" % option)
    os.environ.update(facts["env"])
    os.environ.update({"WORLD_SIZE": str(facts["world"]), "RANK": "0", "LOCAL_RANK": "0"})
    sys.argv = ["pretrain_gpt.py"] + facts["argv"]
    try:
        with contextlib.redirect_stdout(sys.stderr):
            importlib.import_module("deepspeed").add_config_arguments = deepspeed_config_arguments(ds_source)
            module = importlib.import_module("megatron.arguments")
    except Exception as error:
        findings.add("SKIP", "fork-args", innermost(fork_source.root, error.__traceback__),
                     "megatron/arguments.py could not be loaded: %s: %s" % (type(error).__name__, error))
        return None
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stdout(sys.stderr), contextlib.redirect_stderr(stderr):
            defaults = {"tokenizer_type": "GPT2BPETokenizer"}  # pretrain_gpt.py's args_defaults
            args = module.parse_args(defaults=defaults) if "defaults" in module.parse_args.__code__.co_varnames \
                else module.parse_args()
            if hasattr(module, "validate_args"):
                args = module.validate_args(args, defaults) or args
    except SystemExit:
        message = stderr.getvalue().strip().splitlines()
        findings.add("FAIL", "fork-args", fork_source.line(rel, "args = parser.parse_args()"),
                     "argparse: %s" % (message[-1] if message else "exit"))
        return None
    except Exception as error:
        findings.add("FAIL", "fork-args", *describe(fork_source.root, error))
        return None
    return args


def fork_rules(fork_source, facts, cfg, resolved, args, findings):
    """The fork's checks that tie the script to its ds_config, and its model-building divisibility rules."""
    training, options = "megatron/training.py", facts["options"]
    bf16_flag, fp16_flag = "--bf16" in options, "--fp16" in options
    if resolved:
        if resolved["bf16"] != bf16_flag:
            findings.add("FAIL", "fork-ds", fork_source.line(training, "megatron bf16 config does not match deepspeed"),
                         "bf16.enabled %s but --bf16 %s" % (resolved["bf16"], "given" if bf16_flag else "absent"))
        if resolved["fp16"] != fp16_flag:
            findings.add("FAIL", "fork-ds", fork_source.line(training, "megatron fp16 config does not match deepspeed"),
                         "fp16.enabled %s but --fp16 %s" % (resolved["fp16"], "given" if fp16_flag else "absent"))
        micro = int(options.get("--micro-batch-size", 0) or 0)
        if micro and resolved["train_micro_batch_size_per_gpu"] != micro:
            findings.add("FAIL", "fork-ds", fork_source.line(training, "set_train_batch_size"),
                         "train_micro_batch_size_per_gpu %s != --micro-batch-size %s: the pipeline engine cuts "
                         "micro-batches of the ds_config size from batches the data loader makes of the script's" % (
                             resolved["train_micro_batch_size_per_gpu"], micro))
        glob = int(options.get("--global-batch-size", 0) or 0)
        if glob and resolved["train_batch_size"] != glob:
            findings.add("WARN", "fork-ds", fork_source.line(training, "set_train_batch_size"),
                         "train_batch_size %s != --global-batch-size %s: Megatron resets DeepSpeed's batch to its own "
                         "every iteration" % (resolved["train_batch_size"], glob))
        dp = facts["dp"]
        if glob and micro and glob % (micro * dp):
            findings.add("FAIL", "fork-ds", fork_source.line("megatron/microbatches.py",
                                                             "global_batch_size % micro_batch_times_data_parallel == 0"),
                         "--global-batch-size %d is not a multiple of micro %d x DP %d" % (glob, micro, dp))
        zero_stage = options.get("--zero-stage")
        if zero_stage is not None and int(float(zero_stage)) != resolved["zero_stage"]:
            findings.add("WARN", "fork-ds", fork_source.line("pretrain_gpt.py", "args.zero_stage == 3"),
                         "--zero-stage %s but ds_config stage %s (the fork reads --zero-stage for zero.Init)" % (
                             zero_stage, resolved["zero_stage"]))
    if args is None:
        return
    tp = getattr(args, "tensor_model_parallel_size", 1)
    pad_to = getattr(args, "pad_vocab_size_to", None)
    if pad_to is not None:
        tok = "megatron/tokenizer/tokenizer.py"
        divisible = getattr(args, "make_vocab_size_divisible_by", None)
        if divisible and pad_to % divisible:
            findings.add("FAIL", "fork-model",
                         fork_source.line(tok, "pad_vocab_size_to % args.make_vocab_size_divisible_by"),
                         "--pad-vocab-size-to %d is not a multiple of --make-vocab-size-divisible-by %d (default)" % (
                             pad_to, divisible), "--make-vocab-size-divisible-by 1, or a padded size that divides")
        if pad_to % tp:
            findings.add("FAIL", "fork-model", fork_source.line("megatron/mpu/utils.py", "is not divisible by"),
                         "--pad-vocab-size-to %d is not divisible by TP %d (VocabParallelEmbedding)" % (pad_to, tp))
    for name in ("num_attention_heads", "ffn_hidden_size"):
        value = getattr(args, name, None)
        if isinstance(value, int) and value % tp:
            findings.add("FAIL", "fork-model", fork_source.line("megatron/mpu/utils.py", "is not divisible by"),
                         "%s %d is not divisible by TP %d" % (name, value, tp))


def run_child(spec):
    findings = Findings()
    facts = spec["facts"]
    version = spec["version"]
    ds = Source.__new__(Source)
    ds.__dict__.update(spec["ds"])
    fork = Source.__new__(Source)
    fork.__dict__.update(spec["fork"])
    sys.meta_path.insert(0, Stubs())
    roots = {"deepspeed": ds.root}
    if fork.root:
        roots["megatron"] = roots["tools"] = fork.root
        sys.path.insert(0, fork.root)
    sys.meta_path.insert(0, BarePackages(roots, run_init=("deepspeed.elasticity",)))
    sys.path.insert(0, ds.root)
    logging.disable(logging.CRITICAL)
    utils = types.ModuleType("deepspeed.utils")
    utils.__path__ = [os.path.join(ds.root, "deepspeed", "utils")]
    utils.logger = logging.getLogger("deepspeed")
    utils.log_dist = lambda *a, **k: None
    lenient(utils)
    sys.modules["deepspeed.utils"] = utils
    git_info = types.ModuleType("deepspeed.git_version_info")
    git_info.version, git_info.git_hash, git_info.git_branch = version, None, None
    git_info.installed_ops, git_info.compatible_ops, git_info.torch_info = {}, {}, {}
    sys.modules["deepspeed.git_version_info"] = git_info

    def pairs(items):
        keys = [k for k, _ in items]
        duplicate = sorted({k for k in keys if keys.count(k) > 1})
        if duplicate:
            findings.add("FAIL", "ds-config", "%s; %s" % (
                ds.line("deepspeed/runtime/config.py", "object_pairs_hook=dict_raise_error_on_duplicate_keys"),
                ds.line("deepspeed/runtime/config_utils.py", "Duplicate keys")),
                "duplicate keys %s: DeepSpeed refuses them when it opens the file itself; a json.load of the "
                "file (bigscience training.py) keeps the last silently" % duplicate)
        return dict(items)
    with open(facts["config"], encoding="utf-8") as f:
        cfg = json.load(f, object_pairs_hook=pairs)
    facts["cfg_zero"] = cfg.get("zero_optimization", {})
    facts["cfg_data_types"] = cfg.get("data_types") if isinstance(cfg.get("data_types"), dict) else None

    models, enums = ({}, {})
    if version != "0.6.5":
        models, enums = read_models(ds, ["deepspeed/runtime/config_utils.py", "deepspeed/runtime/zero/config.py",
                                         "deepspeed/runtime/zero/offload_config.py"])
    mode = spec["mode"]
    real = None
    if mode in ("auto", "real"):
        if version != "0.6.5" and pydantic_version() < 2:
            findings.add("SKIP", "ds-config(real)", "deepspeed/runtime/config_utils.py",
                         "pydantic 2 is not importable here (found %s); DeepSpeed %s's models read with ast instead" % (
                             pydantic_version() or "none", version))
        else:
            real = real_deepspeed_config(ds, version, cfg, facts["dp"], findings, models)
    ast_result = None
    if True:  # also under --mode real: its resolution drives the engine rules where DeepSpeedConfig raised
        scratch = Findings() if real else findings
        ast_result = ast_deepspeed_config(ds, version, cfg, facts["dp"], scratch, models, enums)
        if real and ast_result and real[0] != ast_result[0]:
            findings.add("WARN", "ds-config", "-", "the ast reader %s where DeepSpeedConfig %s: %s" % (
                "passes" if ast_result[0] else "fails", "passes" if real[0] else "fails",
                "; ".join(i["what"] for i in scratch.items if i["level"] == "FAIL") or "-"))
        if real and mode != "real":  # what only the reader says (deprecations, "auto" values, validators)
            findings.items += [i for i in scratch.items if i["level"] in ("WARN", "NOTE")
                               and i["what"] not in [j["what"] for j in findings.items]]
    resolved = (real[1] if real and real[1] else None) or (ast_result[1] if ast_result and ast_result[1] else None)
    plain_key_check(ds, version, cfg, findings)
    if resolved:
        engine_rules(ds, version, facts, resolved, findings)
    args = None
    if fork.root:
        args = fork_arguments(fork, ds, facts, findings)
        fork_rules(fork, facts, cfg, resolved, args, findings)
    else:
        findings.add("SKIP", "fork-args", "-", "%s: %s" % (spec["fork_name"], fork.status))
    summary = {"mode": "real" if real else "ast", "resolved": resolved or {}}
    if args is not None:
        summary["args"] = {k: str(getattr(args, k, None)) for k in (
            "tensor_model_parallel_size", "pipeline_model_parallel_size", "data_parallel_size", "micro_batch_size",
            "global_batch_size", "bf16", "fp16", "zero_stage", "checkpoint_activations", "recompute_granularity",
            "sequence_parallel", "position_embedding_type", "no_pipeline_parallel")
            if hasattr(args, k)}
    return {"findings": findings.items, "summary": summary}


# ----------------------------------------------------------------------------------------------------------------

def pipeline_facts(facts, fork_source):
    """Whether deepspeed.initialize gets a PipelineModule, and the fork's line that decides it."""
    options = facts["options"]
    if facts["fork"] == "bigscience":
        where = fork_source.line("pretrain_gpt.py", "model = GPTModelPipe(") if fork_source.root else \
            "bigscience pretrain_gpt.py (checkout missing)"
        return True, "bigscience builds GPTModelPipe whenever --deepspeed is given: %s" % where
    if "--no-pipeline-parallel" in options:
        return False, "--no-pipeline-parallel"
    where = fork_source.line("pretrain_gpt.py", "no_pipeline_parallel") if fork_source.root else \
        "microsoft pretrain_gpt.py (checkout missing; assumed: GPTModelPipe unless --no-pipeline-parallel)"
    return True, "GPTModelPipe without --no-pipeline-parallel: %s" % where


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deepspeed", help="git directory of DeepSpeed (holding v0.16.2 b344c04d and v0.6.5 8164ea9e)")
    parser.add_argument("--bigscience", help="git directory of bigscience-workshop/Megatron-DeepSpeed (8387ae17)")
    parser.add_argument("--microsoft", help="git directory of microsoft/Megatron-DeepSpeed (f4157bea)")
    parser.add_argument("--mode", choices=("auto", "real", "ast"), default="auto",
                        help="DeepSpeedConfig itself (real), the models read with ast, or both where both run (auto)")
    parser.add_argument("--verbose", "-v", action="store_true", help="also print NOTE findings and resolved values")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("scripts", nargs="*")
    o = parser.parse_args()
    if o.child:
        with open(o.child, encoding="utf-8") as f:
            spec = json.load(f)
        result = run_child(spec)
        sys.stdout.write(json.dumps(result) + "\n")
        return 0
    if not o.scripts:
        parser.error("name at least one script")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="check_deepspeed_config.") as workdir:
        sources = {}

        def source(kind, fork):
            key = (kind, fork)
            if key not in sources:
                pin = PINS[fork][kind]
                if kind == "deepspeed":
                    sources[key] = Source("DeepSpeed-v" + pin[0], o.deepspeed, pin[1], DS_TREES, "deepspeed", workdir)
                else:
                    sources[key] = Source(pin[0].split("/")[0] + "-Megatron-DeepSpeed", getattr(o, fork), pin[1],
                                          FORK_TREES, "megatron", workdir)
            return sources[key]
        for script in o.scripts:
            try:
                facts = read_script(script)
            except (OSError, StopIteration, ValueError) as error:
                failed += 1
                print("%s: FAIL: not a Megatron-DeepSpeed launch script (%s)" % (script, error))
                continue
            fork = facts["fork"]
            ds, fsrc = source("deepspeed", fork), source("fork", fork)
            if ds.status:
                print("%s: SKIPPED: %s (DeepSpeed %s)" % (script, ds.status, PINS[fork]["deepspeed"][0]))
                continue
            if not facts["config"] or not os.path.isfile(facts["config"]):
                failed += 1
                print("%s: FAIL: --deepspeed_config names no file beside it (%s)" % (script, facts["config"]))
                continue
            o_tp = int(facts["options"].get("--tensor-model-parallel-size", 1))
            o_pp = int(facts["options"].get("--pipeline-model-parallel-size", 1))
            tp = min(o_tp, facts["world"])
            pp = min(o_pp, max(1, facts["world"] // tp))
            facts["dp"] = max(1, facts["world"] // (tp * pp))
            facts["pipeline_engine"], facts["pipeline_why"] = pipeline_facts(facts, fsrc)
            hardware = facts["header"].get("hardware", "")
            facts["hardware"] = hardware
            facts["device_bf16"] = None if not hardware else not NO_BF16_DEVICES.search(hardware)
            spec = {"facts": facts, "version": PINS[fork]["deepspeed"][0], "mode": o.mode,
                    "ds": dict(ds.__dict__), "fork": dict(fsrc.__dict__), "fork_name": PINS[fork]["fork"][0]}
            spec_path = os.path.join(workdir, "spec.json")
            with open(spec_path, "w", encoding="utf-8") as f:
                json.dump(spec, f)
            run = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec_path],
                                 capture_output=True, text=True)
            try:
                result = json.loads(run.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                failed += 1
                tail = run.stderr.strip().splitlines()
                print("%s: FAIL: the checker itself failed: %s" % (script, tail[-1] if tail else "(no output)"))
                continue
            items = result["findings"]
            bad = any(i["level"] == "FAIL" for i in items)
            failed += bad
            labels = "%s [%s], %s" % (ds.label(), result["summary"]["mode"],
                                                   fsrc.label() if fsrc.root else PINS[fork]["fork"][0] + " (missing)")
            print("%s: %s (%s; world %d, TP %d, PP %d, DP %d%s)" % (
                script, "FAIL" if bad else "PASS", labels, facts["world"], tp, pp, facts["dp"],
                ", pipeline engine" if facts["pipeline_engine"] else ""))
            for i in items:
                if i["level"] == "NOTE" and not o.verbose:
                    continue
                print("  %s %s %s: %s%s" % (i["level"], i["check"], i["where"], i["what"],
                                            " -> " + i["fix"] if i.get("fix") and i["level"] == "FAIL" else ""))
            if o.verbose:
                print("  resolved: %s" % json.dumps(result["summary"].get("resolved")))
                if "args" in result["summary"]:
                    print("  args: %s" % json.dumps(result["summary"]["args"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
