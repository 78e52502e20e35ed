#include "export/nxd_sections.h"

#include <regex>

#include "export/optimizer_states_check.h"
#include "export/refusal.h"
#include "export/yaml_fields.h"

namespace trainplan::exporting {

void refuse_what_no_nxd_path_runs(const LaunchJob& job) {
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
  if (p.edge_layer_slots) refuse_nxd("distributed_strategy.pipeline_model_parallel_size", "edge layer slots are not exported yet");
  // NxD Training at ff83d7bd reads no context_parallel_size (src has none); its CP example,
  // examples/conf/hf_llama3_70B_CP_config.yaml, arrives with 9a145a8 (Neuron SDK 2.23).
  if (p.cp > 1)
    refuse_nxd("distributed_strategy.context_parallel_size",
               "context parallel 1: NxD Training of Neuron SDK 2.20 (ff83d7bd), the release written, has no context "
               "parallelism (it arrives with SDK 2.23, hf_llama3_70B_CP_config.yaml)");
  // ParallelAttention (transformer.py@ff83d7bd:759) and the HF path's LlamaAttention (modeling_llama.py:241)
  // project whole queries, keys and values: no model NxD Training@ff83d7bd builds has latent attention.
  // MoE goes through the megatron path (nxd_moe.h); the HF path refuses it.
  if (m.mla())
    refuse_nxd("model", "standard attention; " + m.name + "'s latent attention (MLA) is not built by NxD Training@ff83d7bd (Neuron SDK 2.20)");
  if (m.explicit_head_dim > 0)
    refuse_nxd("model.num_attention_heads", "heads of hidden / heads dims; " + m.name + "'s head_dim is not exported to NxD yet");
  if (job.workload.precision == spec::Precision::mixed_bf16 && p.zero != 1)
    refuse_nxd("precision.type", "mixed_precision needs zero1 (NxD keeps FP32 master weights in the ZeRO-1 optimizer)");
}

YAML::Node nxd_job_root(const LaunchJob& job, const std::string& name, const std::string& model_source) {
  const spec::Plan& p = job.plan;
  YAML::Node root;
  root["name"] = name;
  root["model_source"] = model_source;
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
  return root;
}

void write_nxd_precision(YAML::Node root, const LaunchJob& job) {
  root["precision"]["type"] = job.workload.precision == spec::Precision::mixed_bf16 ? "mixed_precision"
                              : job.workload.precision == spec::Precision::bf16_sr   ? "bf16SR"
                                                                                     : "fp32";
  // NxD Training's mixed_precision keeps FP32 master weights and accumulates gradients in FP32
  // (lightning_modules/model/base.py@ff83d7bd:118-119); a stack priced without either (NxD 2.18's
  // BF16 weights and gradients beside an FP32 optimizer) is written as its 'manual' type with
  // mixed_precision's environment (training_orchestrator.py:41-45, :56-59).
  check_optimizer_states(job, refuse_nxd, "precision.master_weights", "NeuronX Distributed Training (Neuron SDK 2.20)",
                         {spec::kFp32Optimizer, spec::kNoMastersFp32Moments});
  const bool no_master_weights = job.optimizer.master_bytes == 0;
  if (job.workload.precision == spec::Precision::mixed_bf16 && (no_master_weights || job.bf16_grad_reduce)) {
    YAML::Node precision = root["precision"];
    precision["type"] = "manual";
    precision["master_weights"] = !no_master_weights;
    precision["fp32_grad_acc"] = !job.bf16_grad_reduce;
    precision["xla_use_bf16"] = "0";
    precision["xla_downcast_bf16"] = "1";
    precision["neuron_rt_stochastic_rounding_en"] = "0";
  }
}

// The sections NxD Training's code reads that no plan decides: experiment
// manager, optimizer, data and runtime settings, with megatron_llama_7B_config.yaml@ff83d7bd's
// values (the header asks the user to set their own learning rate and checkpoint cadence).
// Hydra hands the file alone to the code in struct mode, so each key read
// without a default must be present: training_orchestrator.py:17-23 (the
// runtime keys, 'aync' as the client spells it), training.py:52
// (exp_manager.resume_from_checkpoint), data_module.py:113-117 (data.data_impl,
// splits_string, seq_length, seed); trainer.gradient_clip_val absent would
// turn clipping off (base.py:133) and max_steps absent give the scheduler -1 (base.py:290).
void write_nxd_example_sections(YAML::Node& root, const std::string& name, bool megatron_data) {
  root["seed"] = 1234;
  root["trainer"]["max_steps"] = 20000;
  root["trainer"]["gradient_clip_val"] = 1.0;
  if (megatron_data) {
    root["data"]["data_impl"] = "mmap";
    root["data"]["splits_string"] = "980,10,10";
  }
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
  e["name"] = name;
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

std::string nxd_yaml_text(const std::string& header, const YAML::Node& root) {
  // The manual precision's three settings go to os.environ (training_orchestrator.py@ff83d7bd:4-11,
  // :56-59), which takes strings: quoted, as hf_llama3_8B_config.yaml writes them ('0').
  static const std::regex environment_value(
      R"((\n\s+(?:xla_use_bf16|xla_downcast_bf16|neuron_rt_stochastic_rounding_en): )([01])(?=\n))");
  return std::regex_replace(yaml_text(header, root), environment_value, "$1'$2'");
}

}  // namespace trainplan::exporting
