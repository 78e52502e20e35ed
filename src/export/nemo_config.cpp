#include "export/nemo_config.h"

#include <sstream>
#include <utility>
#include <vector>

#include "export/header.h"
#include "export/megatron_args.h"
#include "export/nemo_launcher_script.h"
#include "export/optimizer_states_check.h"
#include "export/yaml_fields.h"
#include "export/refusal.h"
#include "spec/error.h"
#include "spec/one_line.h"

namespace trainplan::exporting {
namespace {

// The optimizer a plan runs under: ZeRO 0 apex fused_adam; ZeRO 1 Megatron-Core's distributed
// optimizer (FP32 masters and moments, sharded), or Apex DistributedFusedAdam where the stack
// prices its states (16-bit master remainders, or a BF16 optimizer); ZeRO 3 FSDP (model.fsdp).
// DistributedFusedAdam is ZeRO 1 in memory under NeMo: NeMo requires its contiguous gradient
// buffer with O2 (megatron_base_model.py@e938df32:783-788), a persistent buffer of every bucket's
// gradients (NVIDIA/apex@6424da3b apex/contrib/optimizers/distributed_fused_adam.py:347-354,
// 1156-1190), so no NeMo 2.0.0 optimizer shards the gradients (ZeRO 2).
const char* optimizer_for(const LaunchJob& job) {
  switch (job.plan.zero) {
    case 0: return "fused_adam";
    case 1: return job.optimizer == spec::kFp32Optimizer ? "mcore_distributed_optim" : "distributed_fused_adam";
    default: return "fused_adam";  // ZeRO-3 is model.fsdp with fsdp_sharding_strategy full
  }
}

// Keys NeMo 2.0.0's megatron_gpt_model reads (cfg.get / cfg.optim.get) that
// megatron_gpt_config.yaml@e938df32 lacks: Hydra refuses them in the file's
// struct merge, so they go on the command line with `+`, listed in one header
// line that read_nemo takes back.
const char* kOverridesLine = "# Hydra overrides (keys the base config lacks; pass them on the command line):";

std::string overrides_text(const std::vector<std::pair<std::string, std::string>>& overrides) {
  if (overrides.empty()) return "";
  std::string line = kOverridesLine;
  for (const auto& [key, value] : overrides) line += " +" + key + "=" + value;
  return line + "\n";
}

// A NeMo-Framework-Launcher training file (its `run` section) is the launcher's `training`
// group: `main.py training=gpt3/175b training.trainer.num_nodes=16` overrides this file's
// trainer.num_nodes (NVIDIA/NeMo-Framework-Launcher@26e42fa9
// examples/training/gpt/a100/175b_16node.sh:10,16). Such an item is applied without its
// `training.`; any other as given.
std::string launcher_item(const std::string& item, const YamlFields& y) {
  const std::string inner = training_group_item(item);
  return inner.empty() || y.has("training") || !y.has("run") ? item : inner;
}

void read_overrides(const std::string& text, YamlFields& y) {
  const std::size_t at = text.find(kOverridesLine);
  if (at == std::string::npos) return;
  const std::size_t begin = at + std::string(kOverridesLine).size();
  std::istringstream words(text.substr(begin, text.find('\n', begin) - begin));
  std::string word;
  while (words >> word) {
    const std::size_t eq = word.find('=');
    if (word.size() < 3 || word[0] != '+' || eq == std::string::npos)
      throw spec::SpecError(y.file(), word, "a Hydra override +key.path=value");
    y.add(word.substr(1, eq - 1), word.substr(eq + 1));
  }
}

// NeMo switches gradient-accumulation fusion off without O2, under FSDP, and
// with DP > 1 and no pipeline unless the optimizer is distributed
// (megatron_base_model.py@e938df32:966-987).
bool accumulation_fusion_kept(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const bool o2 = job.workload.precision == spec::Precision::mixed_bf16 || job.workload.precision == spec::Precision::fp8;
  const long dp = long(job.instances) * job.devices_per_instance / (long(p.tp) * p.pp * p.cp);
  return o2 && p.zero != 3 && (p.pp > 1 || dp <= 1 || p.zero == 1 || p.zero == 2);
}

// Under fused_adam with O2, NeMo all-reduces gradients asynchronously in
// backward only with PP 1, no SP and no accumulation fusion
// (megatron_base_model.py@e938df32:834-843).
bool zero0_overlaps(const spec::Plan& p, bool accumulation_fusion) { return p.pp == 1 && !p.sp && !accumulation_fusion; }

// NeMo 2.0.0 runs on Megatron-Core 0.9 (NVIDIA/NeMo@e938df32 Dockerfile.ci: MCORE_TAG=core_r0.9.0),
// whose TransformerConfig (megatron/core/transformer/transformer_config.py@core_r0.9.0:88-292) has
// routed experts of the dense FFN's width in every layer, top-k routing, grouped GEMMs and the
// allgather / alltoall dispatchers: no moe_ffn_hidden_size, shared experts, moe_layer_freq, expert
// tensor parallelism or flex (DeepEP) dispatcher.
void refuse_unexpressible_moe(const LaunchJob& job) {
  const spec::ModelSpec& m = job.model;
  const spec::Plan& p = job.plan;
  const std::string mcore = " (NeMo 2.0.0's Megatron-Core 0.9 has none; use format megatron)";
  if (m.expert_ffn_hidden != m.ffn_hidden)
    refuse_nemo("model.ffn_hidden_size", "experts as wide as the dense FFN; " + m.name + "'s are " +
                                             std::to_string(m.expert_ffn_hidden) + " wide, a moe_ffn_hidden_size" + mcore);
  if (m.shared_expert_ffn_hidden > 0)
    refuse_nemo("model.num_moe_experts", "routed experts only; " + m.name + "'s shared experts need moe_shared_expert_intermediate_size" + mcore);
  if (m.first_dense_layers > 0)
    refuse_nemo("model.num_moe_experts", "MoE in every layer; " + m.name + "'s leading dense layers need moe_layer_freq" + mcore);
  if (p.etp > 0 && p.etp != p.tp)
    refuse_nemo("model.expert_model_parallel_size", "experts split over TP's degree; expert tensor parallelism" + mcore);
  // model_parallel_config.py@core_r0.9.0:330-334 raises.
  if (p.ep > 1 && p.tp > 1 && !p.sp)
    refuse_nemo("model.sequence_parallel", "true with expert and tensor parallelism (Megatron-Core 0.9 raises without it)");
  if (job.ep_a2a_overlap)
    refuse_nemo("model.overlap_moe_expert_parallel_comm", "no such option; stack " + job.stack_name +
                                                              " prices the EP all-to-all overlapped with another micro-batch's compute, which NeMo 2.0.0's "
                                                              "Megatron-Core 0.9 lacks: export with --stack nemo-alltoall");
  if (job.dispatch_once_per_instance)
    refuse_nemo("model.moe_token_dispatcher_type", "alltoall; stack " + job.stack_name +
                                                       " prices the flex (DeepEP) dispatcher, which NeMo 2.0.0's "
                                                       "Megatron-Core 0.9 lacks: export with --stack nemo-alltoall");
}

}  // namespace

std::string write_nemo(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  if (m.kind != spec::ModelKind::decoder) refuse_nemo("model", "a decoder model; " + m.name + " is an encoder");
  if (m.embedding_norm) refuse_nemo("model", m.name + " has a norm on the word embeddings, which only bigscience Megatron-DeepSpeed offers (--embed-layernorm)");
  if (m.parallel_residual)
    refuse_nemo("model.transformer_block_type", m.name + "'s parallel residual blocks are not exported");
  if (job.workload.precision == spec::Precision::bf16_sr)
    refuse_nemo("trainer.precision", "bf16 (O2) or 32; BF16 with stochastic rounding is not a NeMo precision");
  if (job.workload.precision == spec::Precision::fp32_bf16_matmul)
    refuse_nemo("trainer.precision", "bf16 (O2) or 32; matmuls auto-cast to BF16 are a Neuron compiler mode");
  if (p.uneven_stages) refuse_nemo("model.pipeline_model_parallel_size", "uneven pipeline stages are not exported yet");
  // NeMo 2.0.0 runs Megatron-Core core_r0.9.0, which has no
  // account_for_embedding/loss_in_pipeline_split (they arrive in Megatron-Core 0.11,
  // NVIDIA/Megatron-LM ef490839); Megatron-Bridge's recipes set them (format megatron writes them).
  if (spec::edge_slots_active(p))
    refuse_nemo("model.pipeline_model_parallel_size",
                "no edge layer slots: Megatron-Core 0.9 under NeMo 2.0.0 has no account_for_embedding_in_pipeline_split "
                "(use format megatron)");
  if (m.qk_norm) refuse_nemo("model.qk_layernorm", "no QK-norm: NeMo 2.0.0's megatron_gpt_model does not read it (use format megatron)");
  if (m.mla()) refuse_nemo("model.kv_lora_rank", "standard attention; " + m.name + "'s latent attention is not exported to NeMo yet (use format megatron)");
  if (m.moe()) refuse_unexpressible_moe(job);
  if (p.sp && p.tp == 1) refuse_nemo("model.sequence_parallel", "TP > 1 (NeMo switches it off at TP 1)");
  if (p.overlap_tp_comm && !p.sp) refuse_nemo("model.ub_tp_comm_overlap", "model.sequence_parallel as well");
  if (p.virtual_stages > 1 && p.pp < 2)
    refuse_nemo("model.virtual_pipeline_model_parallel_size", "pipeline_model_parallel_size > 1");
  // NVIDIA/NeMo@e938df32 megatron_base_model.py: FSDP with FP8 raises (:1019-1020), and FSDP
  // turns the TP communication overlap off (:1011-1016), which the plan was priced with.
  if (p.zero == 3 && job.workload.precision == spec::Precision::fp8)
    refuse_nemo("model.fsdp", "ZeRO 0-2 with FP8 (NeMo 2.0.0 raises 'Torch FSDP does not support FP8')");
  if (p.zero == 3 && p.overlap_tp_comm)
    refuse_nemo("model.ub_tp_comm_overlap", "ZeRO 0-2 with async TP (NeMo 2.0.0 turns it off under FSDP)");
  if (p.zero == 3 && p.pp > 1)
    refuse_nemo("model.fsdp", "pipeline_model_parallel_size 1 with FSDP (NeMo 2.0.0's NLPFSDPStrategy asserts 'FSDP does "
                              "not support pipeline parallelism', nlp_overrides.py:809)");
  // megatron_trainer_builder.py@e938df32:73-75 turns megatron_amp_O2 off under FSDP: FP32
  // parameter and gradient shards, where a stack priced O2's BF16 weights beside FP32 masters.
  if (p.zero == 3 && job.workload.precision == spec::Precision::mixed_bf16 && !job.fsdp_fp32_shards)
    refuse_nemo("model.fsdp", "a stack that prices NeMo 2.0.0's FSDP as it runs, with megatron_amp_O2 off (FP32 parameter "
                              "and gradient shards, an FP32 reduce-scatter): use --stack nemo-fsdp; stack " +
                                  job.stack_name + " prices O2 (BF16 weights beside FP32 main parameters)");
  // With transformer_engine, Transformer Engine picks its flash or cuDNN fused attention; NeMo 2.0.0's
  // GPT config has no key for its unfused kernel (use_flash_attention 'does nothing when
  // transformer_engine=True', megatron_gpt_config.yaml@e938df32:241): only the environment
  // (NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0, as megatron_retro_model.py@e938df32:435-436 sets it) does.
  if (!job.flash_attention)
    refuse_nemo("model.transformer_engine", "a stack that prices fused attention; stack " + job.stack_name +
                                                " prices unfused attention, which NeMo 2.0.0's config cannot select "
                                                "(use format megatron: --attention-backend unfused)");

  // Under fused_adam (ZeRO 0) NeMo decides the DP overlap itself: it all-reduces asynchronously in
  // backward only with PP 1, no SP and no accumulation fusion (megatron_base_model.py@e938df32:834-843),
  // and no key changes it. A plan priced otherwise would run otherwise, and would not read back
  // as exported: refused, naming the flag that prices it as NeMo runs it.
  if (p.zero == 0 && zero0_overlaps(p, job.fused_grad_accumulation && accumulation_fusion_kept(job)) != p.overlap_dp_comm)
    refuse_nemo("model.optim.name",
                std::string("a plan whose DP overlap is NeMo 2.0.0's own under fused_adam (ZeRO 0): it overlaps the gradient "
                            "all-reduce with backward only with PP 1, no SP and no accumulation fusion; this plan was "
                            "priced ") + (p.overlap_dp_comm ? "overlapped: price it with --no-overlap-dp" : "without overlap: "
                            "price it with DP overlap") + ", or use ZeRO 1 (mcore_distributed_optim)");

  if (p.zero == 2)
    refuse_nemo("model.optim.name",
                "ZeRO 0, 1 or 3: no NeMo 2.0.0 optimizer shards the gradients, since distributed_fused_adam keeps "
                "every bucket's gradients in its contiguous buffer, which NeMo requires under O2 "
                "(megatron_base_model.py@e938df32:783-788); price the plan with --zero 1 (distributed_fused_adam or "
                "mcore_distributed_optim)");
  // NeMo 2.0.0 keeps BF16 Adam moments and no master copy, or FP32 masters as 16-bit remainders,
  // only under distributed_fused_adam (optim.dtype bf16 or fp32): setup_optimization passes the
  // dtype to Apex and picks store_params / store_param_remainders from it (megatron_base_model.py@
  // e938df32:790-812); mcore_distributed_optim's OptimizerConfig takes no dtype (modelPT.py@e938df32:
  // 608-621), fused_adam (ZeRO 0) and FSDP (ZeRO 3) keep whole FP32 masters.
  if (p.zero == 1)
    check_optimizer_states(job, refuse_nemo, "model.optim.name", "NeMo 2.0.0's mcore_distributed_optim or distributed_fused_adam",
                           {spec::kFp32Optimizer, spec::kBf16Optimizer, spec::kMasterRemainders});
  else
    check_optimizer_states(job, refuse_nemo, "model.optim.name",
                           std::string("NeMo 2.0.0's ") + (p.zero == 3 ? "FSDP" : "fused_adam"), {spec::kFp32Optimizer},
                           job.optimizer == spec::kFp32Optimizer || job.optimizer == spec::kNoMastersFp32Moments
                               ? ""
                               : "distributed_fused_adam keeps them at ZeRO 1: price the plan with --zero 1");

  YAML::Node root;
  YAML::Node trainer = root["trainer"];
  trainer["num_nodes"] = job.instances;
  trainer["devices"] = job.devices_per_instance;
  const bool fp8 = job.workload.precision == spec::Precision::fp8;
  trainer["precision"] = job.mixed_fp16() ? "16" : job.workload.precision == spec::Precision::mixed_bf16 || fp8 ? "bf16" : "32";
  YAML::Node model = root["model"];
  model["micro_batch_size"] = p.micro_batch;
  model["global_batch_size"] = job.workload.global_batch_seqs;
  model["tensor_model_parallel_size"] = p.tp;
  model["pipeline_model_parallel_size"] = p.pp;
  if (p.virtual_stages > 1) model["virtual_pipeline_model_parallel_size"] = p.virtual_stages;
  else model["virtual_pipeline_model_parallel_size"] = YAML::Node(YAML::NodeType::Null);
  model["sequence_parallel"] = p.sp;
  model["encoder_seq_length"] = job.workload.seq_len;
  model["max_position_embeddings"] = std::max(m.max_positions, job.workload.seq_len);
  model["num_layers"] = m.layers;
  model["hidden_size"] = m.hidden;
  model["ffn_hidden_size"] = m.ffn_hidden;
  model["num_attention_heads"] = m.heads;
  if (m.kv_heads != m.heads) model["num_query_groups"] = m.kv_heads;
  else model["num_query_groups"] = YAML::Node(YAML::NodeType::Null);
  if (m.explicit_head_dim > 0) model["kv_channels"] = m.explicit_head_dim;
  model["normalization"] = m.norm == spec::NormKind::rmsnorm ? "rmsnorm" : "layernorm";
  // NVIDIA/NeMo@e938df32 nemo/collections/nlp/parts/utils_funcs.py:170-214 activation_to_func: 'squared-relu' too.
  model["activation"] = stated_mlp(m);
  model["position_embedding_type"] = m.position == spec::PositionKind::rotary ? "rope"
                                     : m.position == spec::PositionKind::alibi ? "alibi"
                                                                                 : "learned_absolute";
  if (m.position == spec::PositionKind::rotary) model["rotary_percentage"] = m.rotary_fraction > 0 ? m.rotary_fraction : 1.0;
  model["share_embeddings_and_output_weights"] = m.tied_embeddings;
  model["bias"] = m.bias;
  std::vector<std::pair<std::string, std::string>> overrides;
  if (m.qkv_bias && !m.bias) overrides.push_back({"model.qkv_bias", "true"});
  if (m.position == spec::PositionKind::rotary) overrides.push_back({"model.rotary_base", rope_base_text(m)});
  model["hidden_dropout"] = m.dropout ? 0.1 : 0.0;
  model["attention_dropout"] = m.dropout ? 0.1 : 0.0;
  model["make_vocab_size_divisible_by"] = m.vocab_pad_multiple;
  // Under FSDP NeMo sets it False whatever the file says (megatron_trainer_builder.py@e938df32:73-75):
  // written as it runs.
  model["megatron_amp_O2"] = (job.workload.precision == spec::Precision::mixed_bf16 || fp8) && p.zero != 3;
  model["fp8"] = fp8;  // Transformer Engine FP8 GEMMs in the transformer layers
  if (fp8) model["fp8_hybrid"] = true;
  // As NVIDIA's launcher examples pass it (NVIDIA/NeMo-Framework-Launcher@26e42fa9
  // examples/training/mixtral/h100/mixtral_8x7b_fp8.sh: +training.model.fp8_params=True).
  if (fp8 && job.fp8_param_gather) overrides.push_back({"model.fp8_params", "true"});
  // megatron_base_model.py@e938df32:198 reads it by cfg.get (the base config lacks it); each rank
  // takes two of 2 x CP sequence chunks (megatron_gpt_model.py:1190-1210), as trainplan prices
  // CP, over Megatron-Core 0.9's one ring exchange (no cp_comm_type before 0.10).
  if (p.cp > 1) overrides.push_back({"model.context_parallel_size", std::to_string(p.cp)});
  if (m.moe()) {
    // megatron_gpt_model.py@e938df32:2133-2142 reads these by cfg.get; base config has only the EP degree.
    model["expert_model_parallel_size"] = p.ep;
    overrides.push_back({"model.num_moe_experts", std::to_string(m.experts)});
    overrides.push_back({"model.moe_router_topk", std::to_string(m.top_k)});
    // Priced as an all-to-all exchange with the experts' GEMMs grouped; Megatron-Core 0.9's
    // default is the allgather dispatcher (transformer_config.py@core_r0.9.0:270), and NeMo's
    // build_transformer_config passes on any TransformerConfig field the model config holds
    // (megatron_base_model.py@e938df32:563-569).
    overrides.push_back({"model.moe_token_dispatcher_type", "alltoall"});
    if (job.workload.precision != spec::Precision::fp32)  // grouped GEMMs run in BF16 only
      overrides.push_back({"model.moe_grouped_gemm", "true"});
    if (m.capacity_factor > 0) {
      std::ostringstream factor;
      factor << m.capacity_factor;
      overrides.push_back({"model.moe_expert_capacity_factor", factor.str()});
    }
  }
  if (p.recompute == spec::Recompute::none) {
    model["activations_checkpoint_granularity"] = YAML::Node(YAML::NodeType::Null);
  } else if (p.recompute == spec::Recompute::selective) {
    model["activations_checkpoint_granularity"] = "selective";
  } else {
    // block: the first N layers of each model chunk, as Megatron-Core runs it
    // (megatron_gpt_config.yaml@e938df32:194-200: "when using 'block' this will checkpoint the first
    // activations_checkpoint_num_layers per pipeline stage")
    model["activations_checkpoint_granularity"] = "full";
    model["activations_checkpoint_method"] = p.recompute_layers > 0 ? "block" : "uniform";
    model["activations_checkpoint_num_layers"] = p.recompute_layers > 0 ? p.recompute_layers : 1;
  }
  // The nemo stack prices Transformer Engine layers (fused attention, TP-comm
  // overlap, FP8); the base's False builds the local spec, whose fused
  // LayerNorm rejects RMSNorm.
  model["transformer_engine"] = true;
  // A stack priced with a separate accumulation pass runs without the fusion (the base's False).
  model["gradient_accumulation_fusion"] = job.fused_grad_accumulation && accumulation_fusion_kept(job);
  model["ub_tp_comm_overlap"] = p.overlap_tp_comm;
  model["fsdp"] = p.zero == 3;
  if (p.zero == 3) {
    model["fsdp_sharding_strategy"] = "full";
    // The reduce-scatter dtype priced (the stack's FP32 gradient shards): the base's own 32, stated.
    model["fsdp_grad_reduce_dtype"] = 32;
  }
  YAML::Node optim = model["optim"];
  const std::string optimizer = optimizer_for(job);
  optim["name"] = optimizer;
  // Only the distributed optimizers take the overlap keys (apex fused_adam has no
  // overlap_grad_sync argument); under fused_adam NeMo overlaps by its own rule (zero0_overlaps).
  if (p.zero == 1) {
    const std::string on = p.overlap_dp_comm ? "true" : "false";
    overrides.push_back({"model.optim.overlap_grad_sync", on});  // Megatron-Core DDP's overlap_grad_reduce
    overrides.push_back({optimizer == "mcore_distributed_optim" ? "model.optim.overlap_param_gather"
                                                                : "model.optim.overlap_param_sync",
                         on});
  }
  if (job.optimizer == spec::kBf16Optimizer) overrides.push_back({"model.optim.dtype", "bf16"});
  std::string header = header_comment(job, info(LaunchFormat::nemo));
  header += overrides_text(overrides);
  if (job.fused_grad_accumulation && !accumulation_fusion_kept(job))
    header += "# NeMo runs this plan without gradient-accumulation fusion (no O2, FSDP, or DP without a distributed "
              "optimizer); trainplan priced the stack's fused accumulation.\n";
  header += "# Overrides of megatron_gpt_config.yaml; the vocabulary comes from your tokenizer (trainplan assumed " +
            std::to_string(m.vocab) + ").\n";
  return yaml_text(header, root);
}

LaunchJob read_nemo(const std::string& text, const std::string& file, const std::vector<std::string>& overrides,
                    const std::string& origin) {
  YamlFields y(text, file);
  read_overrides(text, y);
  for (const std::string& item : overrides) y.apply_override(launcher_item(item, y), item, origin);
  LaunchJob job;
  read_header(text, job);
  constexpr long kBig = 1L << 30;
  spec::Plan& p = job.plan;
  read_yaml_cluster(y, job);
  // NeMo's T5 and mT5 (megatron_t5: NeMo-Framework-Launcher@26e42fa9 launcher_scripts/conf/training/t5, mt5)
  // state their layers under model.encoder and model.decoder: an encoder-decoder, which trainplan does not model.
  for (const char* key : {"model.encoder", "model.decoder"})
    if (y.has(key))
      throw spec::SpecError(file, key,
                            "a decoder-only (GPT) or encoder (BERT) model; this file trains an encoder-decoder (T5), which "
                            "trainplan does not model");
  const std::string precision = y.text("trainer.precision", "bf16");
  const bool fsdp = y.flag("model.fsdp", false);
  // NeMo's half precisions (nemo/collections/nlp/parts/megatron_trainer_builder.py@8cfedd72:123-130):
  // 16, '16' and '16-mixed' are FP16 with a gradient scaler, 'bf16' and 'bf16-mixed' BF16.
  const bool fp16 = precision == "16" || precision == "16-mixed";
  if (precision == "bf16" || precision == "bf16-mixed" || fp16) {
    // Under FSDP NeMo turns O2 off whatever the file says (megatron_trainer_builder.py@e938df32:73-75),
    // as stacks/nemo-fsdp.json prices it; elsewhere trainplan models O2 only.
    const bool o2 = y.flag("model.megatron_amp_O2", true);
    if (fsdp && o2) job.notes.push_back("model.megatron_amp_O2 under model.fsdp read as False, as NeMo turns it off");
    if (!fsdp && !o2)
      throw spec::SpecError(file, "model.megatron_amp_O2",
                            "True with " + precision + ", found False: NeMo then keeps FP32 parameters under autocast (O1), which "
                            "trainplan does not model; price the O2 run with --set model.megatron_amp_O2=True (16-bit "
                            "weights, FP32 main params), or FP32 with --set trainer.precision=32");
    job.workload.precision = spec::Precision::mixed_bf16;
    job.fp16 = fp16;
    if (fp16) job.notes.push_back("trainer.precision " + precision + " priced as mixed BF16 (same GEMM rate; loss scaling not priced)");
  } else if (precision == "32" || precision == "32-true") {
    job.workload.precision = spec::Precision::fp32;
  } else {
    throw spec::SpecError(file, "trainer.precision",
                          "bf16, 16 or 32 (trainplan models mixed half precision and FP32 training), found '" + precision + "'");
  }
  if (y.flag("model.fp8", false)) {
    if (!job.mixed_bf16())
      throw spec::SpecError(file, "model.fp8", "trainer.precision bf16 as well (trainplan models FP8 over mixed BF16)");
    job.workload.precision = spec::Precision::fp8;
    // FP8 parameters only where the file says so (NVIDIA/NeMo@e938df32 nemo/collections/nlp/models/
    // language_modeling/megatron_gpt_model.py:362: cfg.get('fp8_params', False)); the app prices them as stated.
    job.fp8_param_gather = y.flag("model.fp8_params", false);
  }
  p.micro_batch = int(y.whole("model.micro_batch_size", 1, kBig, 4));
  job.workload.global_batch_seqs = y.whole("model.global_batch_size", 1, kBig, 8);
  p.tp = int(y.whole("model.tensor_model_parallel_size", 1, kBig, 1));
  p.pp = int(y.whole("model.pipeline_model_parallel_size", 1, kBig, 1));
  p.virtual_stages = int(y.whole("model.virtual_pipeline_model_parallel_size", 1, kBig, 1));
  p.cp = int(y.whole("model.context_parallel_size", 1, kBig, 1));
  // NeMo's _validate_and_override_config (nlp/models/language_modeling/megatron_base_model.py) sets
  // sequence_parallel False at TP 1 with an info line; the launcher's Mixtral 8x7B file states both.
  p.sp = y.flag("model.sequence_parallel", false) && p.tp > 1;
  if (y.flag("model.sequence_parallel", false) && p.tp == 1)
    job.notes.push_back("model.sequence_parallel at TP 1 read as off, as NeMo switches it off");
  p.ep = int(y.whole("model.expert_model_parallel_size", 1, kBig, 1));
  // The nemo stack prices the flex dispatcher (DeepEP); a file that asks for the plain all-to-all
  // (the NeMo launcher's Mixtral files) runs as stacks/nemo-alltoall.json prices it.
  if (job.stack_name.empty() && y.text("model.moe_token_dispatcher_type", "") == "alltoall") job.stack_name = "nemo-alltoall";
  job.workload.seq_len = int(y.whole("model.encoder_seq_length", 1, kBig, 512));
  const std::string granularity = y.text("model.activations_checkpoint_granularity", "");
  if (granularity.empty()) p.recompute = spec::Recompute::none;
  else if (granularity == "selective") p.recompute = spec::Recompute::selective;
  else if (granularity == "full") {
    p.recompute = spec::Recompute::full;
    const std::string method = y.text("model.activations_checkpoint_method", "uniform");
    const int layers = int(y.whole("model.activations_checkpoint_num_layers", 1, kBig, 1));
    if (method == "block") p.recompute_layers = layers;  // the first N of each chunk
    else if (method != "uniform" || layers != 1)
      throw spec::SpecError(file, "model.activations_checkpoint_method",
                            "uniform with activations_checkpoint_num_layers 1 (every layer its own checkpoint) or block (the "
                            "first N layers of each chunk); uniform groups of N > 1 layers are not modelled");
  } else {
    throw spec::SpecError(file, "model.activations_checkpoint_granularity", "null, selective or full, found '" + granularity + "'");
  }
  p.overlap_tp_comm = y.flag("model.ub_tp_comm_overlap", false);
  const std::string optimizer = y.text("model.optim.name", "fused_adam");
  if (fsdp) {
    // nlp_overrides.py@e938df32:750-757: full is FULL_SHARD; grad (SHARD_GRAD_OP) keeps every layer gathered
    // from forward to backward and gathers again each micro-batch, which trainplan's ZeRO 2 does not price.
    const std::string strategy = y.text("model.fsdp_sharding_strategy", "full");
    if (strategy != "full")
      throw spec::SpecError(file, "model.fsdp_sharding_strategy",
                            "full (FULL_SHARD, priced as ZeRO 3 by stack nemo-fsdp); '" + strategy +
                                "' is not priced (grad re-gathers every micro-batch, hybrid is refused by NeMo 2.0.0)");
    p.zero = 3;
    if (p.pp > 1)
      throw spec::SpecError(file, "model.pipeline_model_parallel_size",
                            "1 with model.fsdp (NeMo 2.0.0 asserts 'FSDP does not support pipeline parallelism', "
                            "nlp_overrides.py:809)");
    job.fsdp_fp32_shards = true;
    if (job.stack_name.empty()) job.stack_name = "nemo-fsdp";  // NeMo's FSDP as it runs, where no header names a stack
    // NeMo 2.0.0 reduce-scatters in model.fsdp_grad_reduce_dtype (megatron_trainer_builder.py:80, default 32)
    // and keeps FP32 shards either way; nemo-fsdp prices the FP32 reduce-scatter.
    const std::string reduce = y.text("model.fsdp_grad_reduce_dtype", "32");
    // The value is echoed as the file writes it, made one line ("b\nf16" in quotes is a newline).
    if (reduce != "32" && reduce != "32-true" && reduce != "fp32")
      job.notes.push_back("model.fsdp_grad_reduce_dtype " + spec::one_line(reduce, 200) + ": NeMo reduce-scatters in it; trainplan prices FP32 "
                          "(the gradient shards are FP32 either way)");
    // megatron_base_model.py@e938df32:1019-1020 and :1011-1016, as written above.
    if (job.workload.precision == spec::Precision::fp8)
      throw spec::SpecError(file, "model.fsdp", "false with model.fp8 (NeMo 2.0.0 raises 'Torch FSDP does not support FP8')");
    if (p.overlap_tp_comm) {
      p.overlap_tp_comm = false;
      job.notes.push_back("model.ub_tp_comm_overlap under model.fsdp read as off, as NeMo turns it off");
    }
  } else if (optimizer == "fused_adam") {
    p.zero = 0;
  } else if (optimizer == "mcore_distributed_optim") {
    p.zero = 1;
  } else if (optimizer == "distributed_fused_adam") {
    p.zero = 1;  // its contiguous gradient buffer holds every gradient (optimizer_for)
    if (!y.flag("model.optim.contiguous_grad_buffer", true) && job.workload.precision != spec::Precision::fp32)
      throw spec::SpecError(file, "model.optim.contiguous_grad_buffer",
                            "True under megatron_amp_O2 (NeMo 2.0.0 raises 'Distributed Adam optimizer requires "
                            "contiguous param buffer for O2', megatron_base_model.py@e938df32:784-788)");
  } else {
    throw spec::SpecError(file, "model.optim.name",
                          "fused_adam, mcore_distributed_optim or distributed_fused_adam, found '" + optimizer + "'");
  }
  // megatron_base_model.py@e938df32:790-812: distributed_fused_adam's state dtype; equal to the
  // O2 model's BF16, no master copy is kept (mcore_distributed_optim and fused_adam read no dtype).
  const bool apex_adam = optimizer == "distributed_fused_adam" && !fsdp;
  if (apex_adam) {
    const std::string dtype = y.text("model.optim.dtype", "fp32");
    const bool bf16 = dtype == "bf16" || dtype == "bfloat16" || dtype == "torch.bfloat16";
    if (!bf16 && dtype != "fp32" && dtype != "float32" && dtype != "torch.float32" && dtype != "32")
      throw spec::SpecError(file, "model.optim.dtype", "fp32 or bf16 (the optimizer state's dtype), found '" +
                                                           spec::one_line(dtype, 80) + "'");
    // Under O2 (BF16 weights) an FP32 state keeps its masters as remainders, a BF16 one none.
    const bool o2 = job.workload.precision != spec::Precision::fp32;
    if (o2) job.optimizer = bf16 ? spec::kBf16Optimizer : spec::kMasterRemainders;
  }
  // The distributed optimizers read the key (Apex's default on, Megatron-Core's off).
  if (p.zero == 0) p.overlap_dp_comm = zero0_overlaps(p, y.flag("model.gradient_accumulation_fusion", false));
  else if (p.zero == 3) p.overlap_dp_comm = true;  // torch FSDP reduce-scatters from backward hooks
  else p.overlap_dp_comm = y.flag("model.optim.overlap_grad_sync", apex_adam);
  // As the file runs: Transformer Engine's fused attention or the local spec's unfused one
  // (the base's transformer_engine False; use_flash_attention is off there too), and
  // accumulation fusion as NeMo keeps it (accumulation_fusion_kept). The app notes where the
  // stack prices otherwise.
  job.flash_attention = y.flag("model.transformer_engine", false) || y.flag("model.use_flash_attention", false);
  job.fused_grad_accumulation = y.flag("model.gradient_accumulation_fusion", false) && accumulation_fusion_kept(job);
  read_yaml_layer_shape(y, job);
  read_yaml_stated_layer(y, {"model.num_query_groups", "model.normalization", "model.activation", "model.position_embedding_type",
                             "model.rotary_base", "model.bias", "model.qkv_bias", "model.moe_router_topk"},
                         job);
  // The data, tokenizer and optimizer sections are the user's; the rest of trainer and model is said.
  if (const std::string note = unread_options_note(y.unconsulted({"trainer", "model"}, {"model.data", "model.tokenizer", "model.optim"}));
      !note.empty())
    job.notes.push_back(note + " (model.data, model.tokenizer and model.optim aside)");
  return job;
}

}  // namespace trainplan::exporting
