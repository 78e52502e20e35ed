#include "export/nxd_config.h"

#include "export/header.h"
#include "export/nxd_hf_config.h"
#include "export/nxd_moe.h"
#include "export/nxd_sections.h"
#include "export/refusal.h"
#include "export/yaml_fields.h"
#include "spec/error.h"

namespace trainplan::exporting {

std::string write_nxd(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  refuse_what_no_nxd_path_runs(job);
  // The HF path partitions uneven layers itself (nxd_hf_config.cpp); the megatron model is not read for it.
  if (p.uneven_stages)
    refuse_nxd("distributed_strategy.pipeline_model_parallel_size",
               "uneven pipeline stages on the megatron model path are not exported yet (the HF path, for Llama, partitions them)");
  // megatron_base_model.py@ff83d7bd:79-80 raises without zero1 ("accuracy issues").
  if (p.zero != 1)
    refuse_nxd("distributed_strategy.zero1", "ZeRO 1: NxD Training's megatron model raises without zero1");
  // transformer.py@ff83d7bd:846-847 divides the KV heads over TP (safe_divide); NxD
  // replicates them only on its HF model path (kv_replicator): launch_files sends such
  // plans there (nxd_hf_config.h).
  if (m.kv_heads % p.tp != 0)
    refuse_nxd("distributed_strategy.tensor_model_parallel_size",
                          "a divisor of the " + std::to_string(m.kv_heads) + " KV heads of " + m.name +
                              " (the megatron model divides them over TP), found " + std::to_string(p.tp));
  // transformer.py@ff83d7bd builds every linear layer with bias=has_bias (megatron_gpt_model.py:123
  // reads the one key) and its attention has no norm on Q and K: Q/K/V-only biases and QK-norm
  // would be dropped.
  if (m.qkv_bias && !m.bias)
    refuse_nxd("model.has_bias", "all linear biases or none (NxD Training's megatron model has one switch); " + m.name +
                                     " has Q, K and V biases alone");
  if (m.qk_norm) refuse_nxd("model.normalization", "no QK-norm: NxD Training@ff83d7bd's models have none; " + m.name + " has it");
  if (m.squared_relu) refuse_nxd("model.activation", "swiglu or gelu: NxD Training@ff83d7bd's models offer no squared ReLU; " + m.name + " has it");
  // The megatron model has no flash-attention path (see nxd_hf_config.cpp: a dense Llama priced
  // with flash attention goes to the HF path). A dense model of another shape cannot run it.
  if (job.flash_attention && m.moe())
    refuse_nxd("model.fusions.flash_attention",
               "unfused attention for a MoE model: NxD Training@ff83d7bd builds MoE on its megatron model alone, which "
               "has no flash-attention path (megatron_mixtral_8x7b_config.yaml; modeling_llama.py:411-413 is the HF "
               "Llama's); stack " + job.stack_name + " prices NKI flash attention: export with --stack "
               "neuronx-distributed-training-unfused-attn (unfused attention, expert parallelism offered)");
  if (job.flash_attention && !m.moe())
    refuse_nxd("model.fusions.flash_attention",
               "a Llama model for NKI flash attention, which NxD Training@ff83d7bd runs on its HF Llama model alone "
               "(modeling_llama.py:411-413; models/megatron has no flash path); stack " + job.stack_name + " prices it and " +
                   m.name + " has " + unlike_hf_llama(m) + ": export with --stack neuronx-distributed-2.20-unfused-attn "
                   "(unfused attention, as the megatron model runs it)");
  if (const auto rule = nxd_moe_model_rule(m)) refuse_nxd(rule->option, rule->why);
  if (const auto rule = nxd_moe_plan_rule(p, m)) refuse_nxd(rule->option, rule->why);
  if (const auto rule = nxd_moe_written_release_rule(p, m)) refuse_nxd(rule->option, rule->why);
  // NxD's blockwise dropless kernel (stacks/neuronx-distributed-training-dropless.json) arrives after the
  // release written, whose dropless runs every expert over every token (expert_mlps.py@083d3ea:139-167).
  if (m.moe() && !job.experts_compute_capacity)
    refuse_nxd("model.moe.capacity_factor",
               "a stack that prices NxD's capacity path (neuronx-distributed-training-unfused-attn): stack " + job.stack_name +
                   " prices each expert over its routed tokens (the blockwise kernel of Neuron SDK 2.26), which NxD Training@ff83d7bd "
                   "(Neuron SDK 2.20), the release written, does not run");
  // A MoE model as megatron_mixtral_8x7b_config.yaml@ff83d7bd names and writes it.
  const std::string name = m.moe() ? "megatron_mixtral" : "megatron_llama";

  YAML::Node root = nxd_job_root(job, name, "megatron");
  root["data"]["seq_length"] = job.workload.seq_len;
  YAML::Node model = root["model"];
  model["encoder_seq_length"] = job.workload.seq_len;
  model["max_position_embeddings"] = std::max(m.max_positions, job.workload.seq_len);
  model["num_layers"] = m.layers;
  model["hidden_size"] = m.hidden;
  model["ffn_hidden_size"] = m.ffn_hidden;
  model["num_attention_heads"] = m.heads;
  model["num_kv_heads"] = m.kv_heads;
  model["hidden_dropout"] = m.dropout ? 0.1 : 0.0;
  model["attention_dropout"] = m.dropout ? 0.1 : 0.0;
  model["normalization"] = m.norm == spec::NormKind::rmsnorm ? "rmsnorm" : "layernorm";
  model["make_vocab_size_divisible_by"] = m.vocab_pad_multiple;
  model["share_embeddings_and_output_weights"] = m.tied_embeddings;
  model["position_embedding_type"] = m.position == spec::PositionKind::rotary ? "rope" : "learned_absolute";
  if (m.position == spec::PositionKind::rotary) {
    model["rotary_percentage"] = m.rotary_fraction > 0 ? m.rotary_fraction : 1.0;
    // megatron_gpt_model.py@ff83d7bd:129 reads position_freq_base, default 10000.
    model["position_freq_base"] = m.rope_theta > 0 ? m.rope_theta : 10000.0;
  }
  model["activation"] = m.mlp == spec::MlpKind::swiglu ? "swiglu" : "gelu";
  model["has_bias"] = m.bias;
  if (m.moe()) write_nxd_moe(root, job);
  if (p.recompute == spec::Recompute::none) model["activations_checkpoint_granularity"] = YAML::Node(YAML::NodeType::Null);
  else model["activations_checkpoint_granularity"] = p.recompute == spec::Recompute::selective ? "selective" : "full";
  write_nxd_precision(root, job);
  // megatron_llama_7B_config.yaml@ff83d7bd:126 'flash_attention: False': the megatron model has no flash path
  // (models/megatron has none); the HF path has (hf_llama3_8B_config.yaml:78).
  root["model"]["fusions"]["flash_attention"] = false;
  root["model"]["fusions"]["softmax"] = true;
  write_nxd_example_sections(root, name, true);
  FormatInfo format = info(LaunchFormat::nxd);
  if (m.moe())
    format.source = "aws-neuron/neuronx-distributed-training@ff83d7bdb1b21fcc4c282c4775ae25a6ffdfbf36 "
                    "examples/conf/megatron_mixtral_8x7b_config.yaml, docs/general/config_overview.rst";
  std::string header = header_comment(job, format);
  if (m.moe()) header += nxd_moe_header(job);
  header += "# The vocabulary comes from data.tokenizer (trainplan assumed " + std::to_string(m.vocab) + ").\n";
  header += "# exp_manager and model.optim hold megatron_llama_7B_config.yaml's example values: set your own learning "
            "rate, schedule and checkpoint cadence.\n";
  return nxd_yaml_text(header, root);
}

namespace {

// NxD Training's 'manual' precision, as trainplan writes it: mixed BF16 (weights held in BF16 on
// the device, XLA_DOWNCAST_BF16) with or without FP32 master weights and FP32 gradient accumulation.
void read_manual_precision(const YamlFields& y, LaunchJob& job) {
  if (y.text("precision.xla_downcast_bf16", "0") != "1" || y.text("precision.xla_use_bf16", "0") != "0")
    throw spec::SpecError(y.file(), "precision.xla_downcast_bf16",
                          "'1' with xla_use_bf16 '0' (trainplan reads manual precision as mixed BF16)");
  job.workload.precision = spec::Precision::mixed_bf16;
  job.optimizer = y.flag("precision.master_weights", false) ? spec::kFp32Optimizer : spec::kNoMastersFp32Moments;
  job.bf16_grad_reduce = !y.flag("precision.fp32_grad_acc", false);
}

}  // namespace

LaunchJob read_nxd(const std::string& text, const std::string& file, const std::vector<std::string>& overrides) {
  YamlFields y(text, file);
  for (const std::string& item : overrides) y.apply_override(item);
  LaunchJob job;
  read_header(text, job);
  constexpr long kBig = 1L << 30;
  spec::Plan& p = job.plan;
  read_yaml_cluster(y, job);
  job.logical_core_size = int(y.whole("trainer.lnc", 1, 2, 0));
  for (const char* key : {"distributed_strategy.tensor_model_parallel_size", "distributed_strategy.pipeline_model_parallel_size",
                          "distributed_strategy.zero1", "distributed_strategy.sequence_parallel", "data.micro_batch_size",
                          "data.global_batch_size", "model.encoder_seq_length"})
    if (!y.has(key)) throw spec::SpecError(file, key, "the key (NeuronX Distributed Training requires it)");
  p.tp = int(y.whole("distributed_strategy.tensor_model_parallel_size", 1, kBig, 1));
  p.pp = int(y.whole("distributed_strategy.pipeline_model_parallel_size", 1, kBig, 1));
  p.virtual_stages = int(y.whole("distributed_strategy.virtual_pipeline_model_parallel_size", 1, kBig, 1));
  p.zero = y.flag("distributed_strategy.zero1", false) ? 1 : 0;
  p.sp = y.flag("distributed_strategy.sequence_parallel", false);
  // Read so that a job's CP or EP is priced or refused, never dropped (examples/conf/hf_llama3_70B_CP_config.yaml
  // sets context_parallel_size 2; the Mixtral configs expert_model_parallel_size).
  p.cp = int(y.whole("distributed_strategy.context_parallel_size", 1, kBig, 1));
  p.ep = int(y.whole("distributed_strategy.expert_model_parallel_size", 1, kBig, 1));
  p.micro_batch = int(y.whole("data.micro_batch_size", 1, kBig, 1));
  job.workload.global_batch_seqs = y.whole("data.global_batch_size", 1, kBig, 1);
  job.workload.seq_len = int(y.whole("model.encoder_seq_length", 1, kBig, 1));
  const std::string granularity = y.text("model.activations_checkpoint_granularity", "");
  if (granularity.empty()) p.recompute = spec::Recompute::none;
  else if (granularity == "selective") p.recompute = spec::Recompute::selective;
  else if (granularity == "full") p.recompute = spec::Recompute::full;
  else throw spec::SpecError(file, "model.activations_checkpoint_granularity", "null, selective or full, found '" + granularity + "'");
  p.overlap_dp_comm = true;  // asked for; NxD reduces after the accumulation loop, which its stack descriptor states
  p.overlap_tp_comm = false;
  const std::string precision = y.text("precision.type", "mixed_precision");
  if (precision == "mixed_precision") job.workload.precision = spec::Precision::mixed_bf16;
  else if (precision == "manual") read_manual_precision(y, job);
  else if (precision == "bf16SR") job.workload.precision = spec::Precision::bf16_sr;
  else if (precision == "fp32") job.workload.precision = spec::Precision::fp32;
  else throw spec::SpecError(file, "precision.type", "mixed_precision, manual, bf16SR or fp32 (trainplan's precisions), found '" + precision + "'");
  const bool hf = y.text("model_source", "megatron") == "hf";
  if (p.zero != 1)
    throw spec::SpecError(file, "distributed_strategy.zero1",
                          hf ? "true (trainplan reads NxD Training's HF path with zero1 only)"
                             : "true (NxD Training's megatron model raises without zero1: megatron_base_model.py@ff83d7bd:79)");
  read_yaml_layer_shape(y, job);
  if (!hf)  // the HF path's layer is in its config.json (read_nxd_hf); model.moe.top_k is check_nxd_moe's
    read_yaml_stated_layer(y, {"model.num_kv_heads", "model.normalization", "model.activation", "model.position_embedding_type",
                               "model.position_freq_base", "model.has_bias", "", ""},
                           job);
  // From SDK 2.21 a file named with "mixtral" on the HF path builds HFMixtralModule (examples/training.py@9169aa03:82-89),
  // whose experts and routing sit in the config.json; trainplan reads MoE on the megatron model alone.
  if (hf && y.whole("model.moe.num_experts", 1, kBig, 1) > 1)
    throw spec::SpecError(file, "model_source",
                          "megatron for a MoE model: trainplan reads MoE on NxD Training's megatron model "
                          "(megatron_mixtral_8x7b_config.yaml); the HF Mixtral model (HFMixtralModule, SDK 2.21 on) is not read");
  if (hf) read_nxd_hf(y, job);
  else read_nxd_moe(y, job);
  // The HF path partitions the layers itself where the file names no model.pipeline_cuts (base.py@ff83d7bd:140
  // auto_partition; @9169aa03:146-156): NxD's create_partitions gives the remainder of layers / PP to the last
  // stages (pipeline/partition.py@083d3ea:280-296), so PP need not divide the layers. Priced as trainplan's
  // uneven stages, the busiest holding ceil(layers / PP).
  if (hf && p.pp > 1 && p.virtual_stages == 1 && !y.has("model.pipeline_cuts") && job.model.layers > 0 &&
      job.model.layers % p.pp != 0)
    p.uneven_stages = true;
  // The HF path runs NKI flash attention under model.fusions.flash_attention
  // (modeling_llama.py@ff83d7bd:411-413; hf_llama3_8B_config.yaml:78 sets it). A file without
  // trainplan's header that asks for it is priced as the release written (SDK 2.20) prices
  // flash attention, not under the format's own unfused neuronx-distributed stack.
  job.flash_attention = hf && y.flag("model.fusions.flash_attention", false);
  // Context parallelism arrives with SDK 2.23 (hf_llama3_70B_CP_config.yaml, 9a145a8): such a file is priced
  // under the stack of the later releases, which offers it.
  if (job.stack_name.empty() && p.cp > 1) job.stack_name = "neuronx-distributed-training";
  if (job.stack_name.empty() && job.flash_attention) job.stack_name = "neuronx-distributed-2.20";
  if (const std::string note = unread_options_note(
          y.unconsulted({"trainer", "distributed_strategy", "data", "model", "precision"}, {"data.tokenizer", "model.optim"}));
      !note.empty())
    job.notes.push_back(note + " (data.tokenizer and model.optim aside)");
  return job;
}

// NxD Training takes the Logical NeuronCore size from trainer.lnc on Trn2, 2 where unset, and
// runs 1 on any other platform whatever the file says (neuronx-distributed-training@9169aa0
// src/neuronx_distributed_training/utils/utils.py:32-39 get_lnc_size).
void check_nxd_logical_cores(LaunchJob& job, const std::string& family, const std::string& hardware, const std::string& file) {
  const int lnc = job.logical_core_size;
  if (family == "trainium2") {
    if (lnc == 1)
      throw spec::SpecError(file, "trainer.lnc",
                            "2, or no trainer.lnc: trainplan describes " + hardware +
                                " at LNC=2, the default (64 logical NeuronCores, each two NeuronCore-v3 on one 24 GB HBM "
                                "bank); LNC=1, two cores to a bank, is not described");
  } else if (lnc > 1) {
    job.notes.push_back("trainer.lnc " + std::to_string(lnc) + ": NxD Training runs one NeuronCore per worker on " + hardware +
                        " whatever the file says (Logical NeuronCores are Trn2's), as priced");
  }
}

}  // namespace trainplan::exporting
