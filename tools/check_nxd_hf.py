"""NxD Training's HF model path (model_source: hf) for tools/check_nxd_config.py.

NxDT@ff83d7bd builds it in lightning_modules/model/hf_models/llama_model.py: LlamaConfig.from_pretrained
(model.model_config), then its own models/hf_models/modeling_llama.py, whose classes subclass
transformers 4.31.0's Llama classes (NxDT's requirements.txt pins transformers==4.31.0). transformers is
not run here (it is rarely installed beside NxDT's pins, and a later release lacks names 4.31 has): the
minimum is stubbed and the report says so. The stand-ins, written from 4.31's LlamaConfig signature and
class layout (none of its code is copied):

  LlamaConfig       from_pretrained reads the JSON file (a relative path that does not exist from the
                    working directory is opened from the job file's folder, and the report says so);
                    4.31's keyword defaults for keys the file omits; num_key_value_heads defaults to the
                    heads; rope_scaling must be null or {type: linear|dynamic, factor > 1} as 4.31's
                    _rope_scaling_validation requires; every other key becomes an attribute (as
                    PretrainedConfig keeps unknown keys), so a key the client reads that the file lacks
                    raises AttributeError as it would.
  model classes     torch modules: LlamaPreTrainedModel (a PreTrainedModel: NxD's is_hf_pretrained_model
                    is true of it; _no_split_modules ['LlamaDecoderLayer']), LlamaRMSNorm (its weight),
                    LlamaAttention._init_rope (4.31's choice of rotary class by rope_scaling), rotary
                    classes without their cos/sin caches, ACT2FN (a KeyError for an unknown activation),
                    get_module_class_from_name (trainer_pt_utils), docstring decorators as no-ops.

NxD's GQAQKVColumnParallelLinear is the client's own class (neuronx_distributed/modules/qkv_linear.py,
loaded from the pinned commit): its constructor runs with its checks (TP divisible by kv_size_multiplier,
KV width x multiplier divisible by TP, _initialize_kv_group, the per-rank divide()); only its weight
allocation and initialisation are skipped, as the other parallel layers allocate none here.
"""
import json
import logging
import os
import sys
import types

STUBBED = ("transformers (stand-ins for 4.31.0's LlamaConfig and Llama module bases, tools/check_nxd_hf.py; "
           "not the library)")


def install(h):
    """Register the transformers stand-ins and NxD's qkv_linear. `h` holds the harness's helpers:
    module, load_file, Anything, W, nxd_src, torch, real_torch. Returns is_hf_pretrained_model."""
    torch, Module = h.torch, h.torch.nn.Module
    W = h.W

    class PretrainedConfig:
        pass

    class LlamaConfig(PretrainedConfig):
        model_type = "llama"
        DEFAULTS = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                        num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                        max_position_embeddings=2048, initializer_range=0.02, rms_norm_eps=1e-6, use_cache=True,
                        pad_token_id=None, bos_token_id=1, eos_token_id=2, pretraining_tp=1,
                        tie_word_embeddings=False, rope_scaling=None)

        def __init__(self, **kw):
            for key, value in dict(self.DEFAULTS, **kw).items():
                setattr(self, key, value)
            if self.num_key_value_heads is None:
                self.num_key_value_heads = self.num_attention_heads
            self.output_attentions = kw.get("output_attentions", False)
            self.output_hidden_states = kw.get("output_hidden_states", False)
            self.use_return_dict = kw.get("return_dict", True)
            self._rope_scaling_validation()

        def _rope_scaling_validation(self):
            s = self.rope_scaling
            if s is None:
                return
            if not isinstance(s, dict) or len(s) != 2:
                raise ValueError("`rope_scaling` must be a dictionary with with two fields, `name` and `factor`, got %s "
                                 "[transformers 4.31 LlamaConfig._rope_scaling_validation, as stubbed]" % (s,))
            if s.get("type") not in ("linear", "dynamic"):
                raise ValueError("`rope_scaling`'s name field must be one of ['linear', 'dynamic'], got %s" % s.get("type"))
            if not isinstance(s.get("factor"), float) or s["factor"] <= 1.0:
                raise ValueError("`rope_scaling`'s factor field must be an float > 1, got %s" % s.get("factor"))

        @classmethod
        def from_pretrained(cls, path, **kw):
            path = str(path)
            where = path
            if not os.path.isabs(path) and not os.path.exists(path) and h.job_dir:
                beside = os.path.join(h.job_dir, path)
                if os.path.exists(beside):
                    where = beside
                    W.record["hf config.json"] = "%s (opened from the job file's folder; NxD Training opens it from " \
                                                 "its working directory)" % beside
            if where == path:
                W.record["hf config.json"] = path
            if os.path.isdir(where):
                where = os.path.join(where, "config.json")
            if not os.path.isfile(where):
                raise OSError("Can't load the configuration of '%s': no such file (transformers would then try the "
                              "Hugging Face Hub) [llama_model.py model.model_config]" % path)
            with open(where) as f:
                return cls(**json.load(f))

    class PreTrainedModel(Module):
        config_class = LlamaConfig

        def __init__(self, config, *a, **k):
            Module.__init__(self)
            self.config = config

        def post_init(self):
            pass

    class LlamaPreTrainedModel(PreTrainedModel):
        _no_split_modules = ["LlamaDecoderLayer"]

    class LlamaRMSNorm(Module):
        def __init__(self, hidden_size, eps=1e-6):
            Module.__init__(self)
            self.weight = torch.nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

    class LlamaRotaryEmbedding(Module):
        def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None, scaling_factor=1.0):
            Module.__init__(self)
            self.dim, self.max_position_embeddings, self.base = dim, max_position_embeddings, base

    class LlamaLinearScalingRotaryEmbedding(LlamaRotaryEmbedding):
        pass

    class LlamaDynamicNTKScalingRotaryEmbedding(LlamaRotaryEmbedding):
        pass

    class LlamaAttention(Module):
        def _init_rope(self):
            s = self.config.rope_scaling
            if s is None:
                self.rotary_emb = LlamaRotaryEmbedding(self.head_dim, max_position_embeddings=self.max_position_embeddings)
            elif s["type"] == "linear":
                self.rotary_emb = LlamaLinearScalingRotaryEmbedding(self.head_dim, self.max_position_embeddings,
                                                                    scaling_factor=s["factor"])
            elif s["type"] == "dynamic":
                self.rotary_emb = LlamaDynamicNTKScalingRotaryEmbedding(self.head_dim, self.max_position_embeddings,
                                                                        scaling_factor=s["factor"])
            else:
                raise ValueError("Unknown RoPE scaling type %s" % s["type"])

    class LlamaMLP(Module):
        pass

    class LlamaDecoderLayer(Module):
        pass

    class LlamaModel(LlamaPreTrainedModel):
        pass

    class LlamaForCausalLM(LlamaPreTrainedModel):
        pass

    class LlamaForSequenceClassification(LlamaPreTrainedModel):
        pass

    class Activations(dict):
        def __getitem__(self, key):
            return dict.__getitem__(self, key)()  # KeyError for a name transformers lacks

    act = Activations(silu=lambda: getattr(torch.nn, "SiLU", h.Anything)(), relu=lambda: getattr(torch.nn, "ReLU", h.Anything)(),
                      gelu=lambda: getattr(torch.nn, "GELU", h.Anything)())
    act["swish"] = act.get("silu")

    def get_module_class_from_name(module, name):
        if module.__class__.__name__ == name:
            return module.__class__
        for child in getattr(module, "children", lambda: [])():
            found = get_module_class_from_name(child, name)
            if found is not None:
                return found
        return None

    def decorator_factory(*a, **k):
        return lambda fn: fn

    h.module("transformers", LlamaConfig=LlamaConfig, PretrainedConfig=PretrainedConfig, PreTrainedModel=PreTrainedModel,
             default_data_collator=lambda features: features)
    h.module("transformers.models.llama.configuration_llama", LlamaConfig=LlamaConfig)
    h.module("transformers.models.llama.modeling_llama", LLAMA_INPUTS_DOCSTRING="", LLAMA_START_DOCSTRING="",
             LlamaAttention=LlamaAttention, LlamaDecoderLayer=LlamaDecoderLayer, LlamaForCausalLM=LlamaForCausalLM,
             LlamaForSequenceClassification=LlamaForSequenceClassification,
             LlamaLinearScalingRotaryEmbedding=LlamaLinearScalingRotaryEmbedding, LlamaMLP=LlamaMLP, LlamaModel=LlamaModel,
             LlamaPreTrainedModel=LlamaPreTrainedModel, LlamaRMSNorm=LlamaRMSNorm, LlamaRotaryEmbedding=LlamaRotaryEmbedding,
             apply_rotary_pos_emb=lambda *a, **k: None, repeat_kv=lambda x, n: x, rotate_half=lambda x: x)
    h.module("transformers.activations", ACT2FN=act)
    h.module("transformers.modeling_outputs", BaseModelOutputWithPast=dict, CausalLMOutputWithPast=dict)
    h.module("transformers.utils", add_start_docstrings=decorator_factory,
             add_start_docstrings_to_model_forward=decorator_factory, replace_return_docstrings=decorator_factory,
             logging=types.SimpleNamespace(get_logger=lambda name=None: logging.getLogger(name or "transformers")))
    h.module("transformers.trainer_pt_utils", get_module_class_from_name=get_module_class_from_name)

    # NxD's GQA layer: the client's constructor and checks, no weights
    torch.distributed.new_group = lambda *a, **k: h.Anything()
    qkv = h.load_file("neuronx_distributed.modules.qkv_linear", os.path.join(h.nxd_src, "modules/qkv_linear.py"))

    class GQAQKVColumnParallelLinear(qkv.GQAQKVColumnParallelLinear):
        def _create_weights_biases(self):
            pass

        def initialize_weight_biases(self):
            pass

    GQAQKVColumnParallelLinear.__name__ = "GQAQKVColumnParallelLinear"
    qkv.GQAQKVColumnParallelLinear = GQAQKVColumnParallelLinear
    return lambda model: isinstance(model, PreTrainedModel)


def record_attention(model, W):
    """What the HF Llama attention resolved per TP rank (modeling_llama.py:328-332), if the model has one."""
    attn = next((m for _, m in model.named_modules() if type(m).__name__ == "LlamaAttention"
                 and type(m).__module__.startswith("neuronx_distributed_training")), None)
    if attn is None:
        return
    proj = getattr(attn, "qkv_proj", None)
    kind = type(proj).__name__ if proj is not None else "q_proj/k_proj/v_proj"
    W.record["attention per TP rank"] = "%s query heads, %s KV heads (kv_replicator %s, %s%s)" % (
        attn.num_heads, attn.num_key_value_heads, attn.config.kv_shared_group_size, kind,
        ", KV width per rank %s" % proj.kv_output_size_per_partition if hasattr(proj, "kv_output_size_per_partition") else "")
    c = attn.config
    W.record["hf LlamaConfig"] = ("layers %s hidden %s heads %s kv_heads %s intermediate %s vocab %s rope_theta %s "
                                  "max_positions %s flash_attention %s sequence_parallel %s qkv_linear %s" % (
                                      c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
                                      c.intermediate_size, c.vocab_size, c.rope_theta, c.max_position_embeddings,
                                      c.use_flash_attention, c.sequence_parallel_enabled, c.qkv_linear))
    layers = sum(1 for _, m in model.named_modules() if type(m).__name__ == "LlamaDecoderLayer")
    W.record["hf decoder layers built"] = layers


def source_of(path):
    """model_source of a job file (megatron where absent or unreadable)."""
    try:
        import yaml
        with open(path) as f:
            data = yaml.safe_load(f)
        return str(data.get("model_source", "megatron")) if isinstance(data, dict) else "megatron"
    except Exception:
        return "megatron"
