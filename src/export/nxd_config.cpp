#include "export/nxd_config.h"

#include <regex>

#include "export/header.h"
#include "export/yaml_fields.h"
#include "export/refusal.h"
#include "spec/error.h"

namespace trainplan::exporting {
namespace {

// The sections NxD Training's code reads that no plan decides: experiment
// manager, optimizer, data and runtime settings, with megatron_llama_7B_config.yaml@ff83d7bd's
// values (the header asks the user to set their own learning rate and checkpoint cadence).
// Hydra hands the file alone to the code in struct mode, so each key read
// without a default must be present: training_orchestrator.py:17-23 (the
// runtime keys, 'aync' as the client spells it), training.py:52
// (exp_manager.resume_from_checkpoint), data_module.py:113-117 (data.data_impl,
// splits_string, seq_length, seed); trainer.gradient_clip_val absent would
// turn clipping off (base.py:133) and max_steps absent give the scheduler -1 (base.py:290).
void write_example_sections(YAML::Node& root) {
  root["seed"] = 1234;
  root["trainer"]["max_steps"] = 20000;
  root["trainer"]["gradient_clip_val"] = 1.0;
  root["data"]["data_impl"] = "mmap";
  root["data"]["splits_string"] = "980,10,10";
  root["compiler_flags"] = "--model-type transformer --distribution-strategy=llm-training";
  root["compiler_cache_url"] = "/home/ubuntu/neuron_cache";
  root["aync_exec_max_inflight_requests"] = 5;
  root["bucket_size_collectives"] = 1024;
  root["neuron_rt_exec_timeout"] = 100;
  root["neuron_experimental_compress_rg"] = false;
  YAML::Node e = root["exp_manager"];
  e["resume_from_checkpoint"] = YAML::Node(YAML::NodeType::Null);
  e["log_local_rank_0_only"] = true;
  e["create_tensorboard_logger"] = true;
  e["explicit_log_dir"] = YAML::Node(YAML::NodeType::Null);
  e["exp_dir"] = YAML::Node(YAML::NodeType::Null);
  e["name"] = "megatron_llama";
  e["resume_if_exists"] = true;
  e["resume_ignore_no_checkpoint"] = true;
  e["create_checkpoint_callback"] = true;
  YAML::Node c = e["checkpoint_callback_params"];
  c["monitor"] = "step";
  c["save_top_k"] = 1;
  c["mode"] = "max";
  c["save_last"] = false;
  c["every_n_train_steps"] = 200;
  e["log_parameter_norm"] = true;
  e["log_gradient_norm"] = true;
  e["save_xser"] = true;
  e["load_xser"] = true;
  YAML::Node o = root["model"]["optim"];
  o["name"] = "adamw";
  o["lr"] = 3e-4;
  o["weight_decay"] = 0.1;
  o["capturable"] = true;
  o["betas"].push_back(0.9);
  o["betas"].push_back(0.95);
  o["sched"]["name"] = "CosineAnnealing";
  o["sched"]["warmup_steps"] = 2000;
  o["sched"]["constant_steps"] = 0;
  o["sched"]["min_lr"] = 3.0e-5;
}

}  // namespace

std::string write_nxd(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  if (m.kind != spec::ModelKind::decoder) refuse_nxd("model", "a decoder model; " + m.name + " is an encoder");
  if (m.embedding_norm) refuse_nxd("model", m.name + " has a norm on the word embeddings, which only bigscience Megatron-DeepSpeed offers (--embed-layernorm)");
  if (m.parallel_residual) refuse_nxd("model.transformer_block_type", m.name + "'s parallel residual blocks are not exported");
  if (m.position == spec::PositionKind::alibi)
    refuse_nxd("model.position_embedding_type", "learned_absolute or rope; ALiBi is not offered");
  // NxD Training@ff83d7bd (Neuron SDK 2.20) has no trn2 configuration; its first
  // (239caa9, SDK 2.21.1, hf_llama3_70B_trn2_config.yaml:6-7) runs 64 logical devices at lnc 2.
  if (job.hardware_family == "trainium2")
    refuse_nxd("trainer.devices", "a trn1 or trn1n instance: the NxD Training release written (Neuron SDK 2.20) does not run trn2");
  if (job.workload.precision == spec::Precision::fp8)
    refuse_nxd("precision.type", "mixed_precision, bf16SR or fp32; FP8 training is not offered");
  if (job.workload.precision == spec::Precision::fp32_bf16_matmul)
    refuse_nxd("precision.type", "mixed_precision, bf16SR or fp32; an auto-cast FP32 model is not exported yet");
  if (p.zero > 1) refuse_nxd("distributed_strategy.zero1", "ZeRO 0 or 1; NxD offers no ZeRO-" + std::to_string(p.zero));
  if (p.overlap_tp_comm) refuse_nxd("distributed_strategy", "no async TP; NxD offers no TP communication overlap");
  if (p.uneven_stages) refuse_nxd("distributed_strategy.pipeline_model_parallel_size", "uneven pipeline stages are not exported yet");
  if (p.edge_layer_slots) refuse_nxd("distributed_strategy.pipeline_model_parallel_size", "edge layer slots are not exported yet");
  if (p.cp > 1) refuse_nxd("distributed_strategy.context_parallel_size", "context parallel 1; CP is not exported to NxD yet");
  if (m.moe() || m.mla()) refuse_nxd("model", "a dense model with standard attention; " + m.name + " is not exported to NxD yet");
  if (m.explicit_head_dim > 0)
    refuse_nxd("model.num_attention_heads", "heads of hidden / heads dims; " + m.name + "'s head_dim is not exported to NxD yet");
  if (job.workload.precision == spec::Precision::mixed_bf16 && p.zero != 1)
    refuse_nxd("precision.type", "mixed_precision needs zero1 (NxD keeps FP32 master weights in the ZeRO-1 optimizer)");
  // megatron_base_model.py@ff83d7bd:79-80 raises without zero1 ("accuracy issues").
  if (p.zero != 1)
    refuse_nxd("distributed_strategy.zero1", "ZeRO 1: NxD Training's megatron model raises without zero1");
  // transformer.py@ff83d7bd:846-847 divides the KV heads over TP (safe_divide); NxD
  // replicates them only on its HF model path (kv_replicator), not written here.
  if (m.kv_heads % p.tp != 0)
    refuse_nxd("distributed_strategy.tensor_model_parallel_size",
                          "a divisor of the " + std::to_string(m.kv_heads) + " KV heads of " + m.name +
                              " (the megatron model divides them over TP), found " + std::to_string(p.tp));

  YAML::Node root;
  root["name"] = "megatron_llama";
  root["model_source"] = "megatron";
  root["trainer"]["devices"] = job.devices_per_instance;
  root["trainer"]["num_nodes"] = job.instances;
  YAML::Node d = root["distributed_strategy"];
  d["tensor_model_parallel_size"] = p.tp;
  d["pipeline_model_parallel_size"] = p.pp;
  d["virtual_pipeline_model_parallel_size"] = p.virtual_stages;
  d["zero1"] = p.zero == 1;
  d["sequence_parallel"] = p.sp;
  root["data"]["micro_batch_size"] = p.micro_batch;
  root["data"]["global_batch_size"] = job.workload.global_batch_seqs;
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
  if (p.recompute == spec::Recompute::none) model["activations_checkpoint_granularity"] = YAML::Node(YAML::NodeType::Null);
  else model["activations_checkpoint_granularity"] = p.recompute == spec::Recompute::selective ? "selective" : "full";
  root["precision"]["type"] = job.workload.precision == spec::Precision::mixed_bf16 ? "mixed_precision"
                              : job.workload.precision == spec::Precision::bf16_sr   ? "bf16SR"
                                                                                     : "fp32";
  // NxD Training's mixed_precision keeps FP32 master weights and accumulates gradients in FP32
  // (lightning_modules/model/base.py@ff83d7bd:118-119); a stack priced without either (NxD 2.18's
  // BF16 weights and gradients beside an FP32 optimizer) is written as its 'manual' type with
  // mixed_precision's environment (training_orchestrator.py:41-45, :56-59).
  if (job.workload.precision == spec::Precision::mixed_bf16 && (job.no_master_weights || job.bf16_grad_reduce)) {
    YAML::Node precision = root["precision"];
    precision["type"] = "manual";
    precision["master_weights"] = !job.no_master_weights;
    precision["fp32_grad_acc"] = !job.bf16_grad_reduce;
    precision["xla_use_bf16"] = "0";
    precision["xla_downcast_bf16"] = "1";
    precision["neuron_rt_stochastic_rounding_en"] = "0";
  }
  // megatron_llama_7B_config.yaml@ff83d7bd:126 'flash_attention: False': the megatron model has no flash path
  // (models/megatron has none); the HF path has (hf_llama3_8B_config.yaml:78).
  root["model"]["fusions"]["flash_attention"] = false;
  root["model"]["fusions"]["softmax"] = true;
  write_example_sections(root);
  std::string header = header_comment(job, info(LaunchFormat::nxd));
  if (job.flash_attention)
    header += "# model_source megatron has no flash-attention path; trainplan priced stack " + job.stack_name +
              "'s NKI flash attention.\n# To run as priced, use the HF model path (model_source: hf, model.model_config, "
              "model.fusions.flash_attention: True);\n# to price this file as written, use --stack neuronx-distributed "
              "(unfused attention).\n";
  header += "# The vocabulary comes from data.tokenizer (trainplan assumed " + std::to_string(m.vocab) + ").\n";
  header += "# exp_manager and model.optim hold megatron_llama_7B_config.yaml's example values: set your own learning "
            "rate, schedule and checkpoint cadence.\n";
  // The manual precision's three settings go to os.environ (training_orchestrator.py@ff83d7bd:4-11,
  // :56-59), which takes strings: quoted, as hf_llama3_8B_config.yaml writes them ('0').
  static const std::regex environment_value(
      R"((\n\s+(?:xla_use_bf16|xla_downcast_bf16|neuron_rt_stochastic_rounding_en): )([01])(?=\n))");
  return std::regex_replace(yaml_text(header, root), environment_value, "$1'$2'");
}

namespace {

// NxD Training's 'manual' precision, as trainplan writes it: mixed BF16 (weights held in BF16 on
// the device, XLA_DOWNCAST_BF16) with or without FP32 master weights and FP32 gradient accumulation.
void read_manual_precision(const YamlFields& y, LaunchJob& job) {
  if (y.text("precision.xla_downcast_bf16", "0") != "1" || y.text("precision.xla_use_bf16", "0") != "0")
    throw spec::SpecError(y.file(), "precision.xla_downcast_bf16",
                          "'1' with xla_use_bf16 '0' (trainplan reads manual precision as mixed BF16)");
  job.workload.precision = spec::Precision::mixed_bf16;
  job.no_master_weights = !y.flag("precision.master_weights", false);
  job.bf16_grad_reduce = !y.flag("precision.fp32_grad_acc", false);
}

}  // namespace

LaunchJob read_nxd(const std::string& text, const std::string& file) {
  const YamlFields y(text, file);
  LaunchJob job;
  read_header(text, job);
  constexpr long kBig = 1L << 30;
  spec::Plan& p = job.plan;
  read_yaml_cluster(y, job);
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
  if (p.zero != 1)
    throw spec::SpecError(file, "distributed_strategy.zero1",
                          "true (NxD Training's megatron model raises without zero1: megatron_base_model.py@ff83d7bd:79)");
  if (y.text("model_source", "megatron") == "hf")
    job.notes.push_back("the architecture is in model.model_config (" + spec::one_line(y.text("model.model_config", "unnamed"), 200) +
                        "), which trainplan does not read: --model names it");
  read_yaml_layer_shape(y, job);
  if (y.has("model.moe.num_experts")) job.model.experts = int(y.whole("model.moe.num_experts", 1, kBig, 0));
  return job;
}

}  // namespace trainplan::exporting
