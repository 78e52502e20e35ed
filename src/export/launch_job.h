// A training job as a launcher config states it: cluster, plan, workload and
// architecture. export writes one into a stack's own format (launch_writer.h)
// and reads one back (launch_reader.h); a round trip keeps every field the
// cost model reads. Names of the stack versions whose option names are used
// are in launch_format.h.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "spec/model_spec.h"
#include "spec/optimizer_states.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace trainplan::exporting {

// One property of a layer that a file without a vocabulary states (or leaves at its client's
// default), held against the model named for it: the file's option, its value in trainplan's
// words, and the same words for a model (check_stated_architecture compares them).
struct StatedProperty {
  std::string option, value;
  std::string (*of_model)(const spec::ModelSpec&);
};
// The words StatedProperty compares: "rmsnorm"/"layernorm", "swiglu"/"gelu",
// "rope"/"learned_absolute"/"alibi", the RoPE base as an integer, "true"/"false", counts.
std::string stated_kv_heads(const spec::ModelSpec& m);
std::string stated_norm(const spec::ModelSpec& m);
std::string stated_mlp(const spec::ModelSpec& m);
std::string stated_position(const spec::ModelSpec& m);
std::string stated_rope_base(const spec::ModelSpec& m);
std::string stated_bias(const spec::ModelSpec& m);
std::string stated_qkv_bias(const spec::ModelSpec& m);
std::string stated_qk_norm(const spec::ModelSpec& m);
std::string stated_top_k(const spec::ModelSpec& m);
// One assumption line naming the options or keys a file states that trainplan does not
// price (ShellArgs::unconsulted, YamlFields::unconsulted); empty when there are none.
std::string unread_options_note(const std::vector<std::string>& names);

struct LaunchJob {
  // trainplan's own header line ("# trainplan: model=... hardware=... stack=..."); empty where silent,
  // except a microsoft Megatron-DeepSpeed script's stack (megatron-deepspeed-ms), told by its options.
  std::string model_name, hardware_name, stack_name;
  // The hardware's accelerator family ("h100", "trainium1", "gaudi2"); empty where unknown
  // (a file read back). Writing refuses a format whose launcher does not run on it.
  std::string hardware_family;
  spec::ModelSpec model;       // the architecture (written from it; read back from the file's fields)
  // On reading: the file states layers, hidden, heads and vocabulary. Without it,
  // model.layers, hidden and heads hold what the file does state (0: silent).
  bool has_architecture = false;
  // Without it: what the file states of the layer beyond its shape (KV heads, norm, MLP,
  // positions, RoPE base, biases, QK-norm, top-k), for the named model to be held against.
  std::vector<StatedProperty> stated;
  int instances = 0;           // 0: the file is silent
  // The count comes from the caller's environment (${SLURM_NNODES:-1}): the
  // script's default, which --instances may set as the environment would.
  bool instances_from_environment = false;
  int devices_per_instance = 0;
  // The option or key the file states it with (--nproc_per_node, trainer.devices); empty where silent.
  std::string devices_per_instance_option;
  // NxD Training's trainer.lnc: physical NeuronCores per logical one (Trn2's Logical NeuronCore
  // configuration, 1 or 2); 0 where silent.
  int logical_core_size = 0;
  spec::Plan plan;
  spec::Workload workload;
  // FP8 GEMM weights kept as FP8 parameters (spec::StackMemory::fp8_param_gather):
  // written where the format has the option; on reading, what the file says.
  bool fp8_param_gather = false;
  // Gradients accumulated and reduced in BF16, not FP32 (the stack's main_grad_dtype):
  // Megatron-LM's --grad-reduce-in-bf16.
  bool bf16_grad_reduce = false;
  // Mixed precision in FP16 with loss scaling, not BF16 (the stack's main_grad_dtype
  // fp16): DeepSpeed's fp16.enabled and --fp16; priced as mixed BF16.
  bool fp16 = false;
  // The stack priced a fused (flash) attention kernel: a format whose model has
  // no flash path says so in the file it writes.
  bool flash_attention = true;
  // The stack priced gradient accumulation fused into the weight-gradient GEMMs
  // (spec::GradAccumulation::fused_wgrad), not a separate pass: a format whose
  // client can switch the fusion off writes what was priced.
  bool fused_grad_accumulation = true;
  // The stack priced MoE tokens sent once per instance (DeepEP's flex
  // dispatcher), not the plain all-to-all: a format without it refuses.
  bool dispatch_once_per_instance = false;
  // The stack priced this plan's EP all-to-alls partly hidden behind another
  // micro-batch's compute (Megatron-Core's overlap_moe_expert_parallel_comm):
  // a format whose client lacks that option refuses.
  bool ep_a2a_overlap = false;
  // The stack priced every expert's capacity slots, filled or not
  // (spec::StackCompute::experts_compute_capacity: NxD's ExpertMLPs), not the routed tokens.
  bool experts_compute_capacity = false;
  // The stack's selective recompute wraps a dense model's whole MLP (spec::selective_wraps_mlp:
  // NxD's TP/PP example at 8,192 tokens): NxD Training's activations_checkpoint_recompute_mlp.
  bool recompute_mlp = false;
  // How mixed precision (BF16 or FP8 GEMMs) keeps the optimizer's state beside the 16-bit weights,
  // as the stack priced it (spec::optimizer_states): FP32 masters and moments; none of the masters
  // (NxD 2.18's BF16 weights beside an FP32 optimizer: NxD Training's manual precision); BF16 moments
  // and no masters, or FP32 masters as 16-bit remainders (NeMo's distributed_fused_adam with optim.dtype
  // bf16 or fp32). Each writer refuses what its client cannot keep (check_optimizer_states). On reading:
  // what the file's optimizer keeps (a NeMo file's optim, an NxD file's precision.master_weights).
  spec::OptimizerStates optimizer;
  // The stack priced ZeRO-3 as PyTorch FSDP's mixed precision runs it: an FP32 parameter shard as
  // the master, FP32 gradient shards reduce-scattered in FP32, no kept 16-bit shard (stacks/nemo-fsdp.json:
  // NeMo 2.0.0 turns megatron_amp_O2 off under model.fsdp). On reading a NeMo file: model.fsdp.
  bool fsdp_fp32_shards = false;
  // DeepSpeed ZeRO's gradient bucket (ZeRO-3; on reading, ZeRO-1 too) and ZeRO-3's optimizer
  // sub-group, in elements, as the stack priced them (spec::StackCommunication::dp_bucket_bytes
  // over the gradient element, spec::StackMemory::optimizer_sub_group_parameters): ds_config's
  // reduce_bucket_size and sub_group_size. On reading, what the ds_config states, or DeepSpeed's
  // default where it is silent (0: a stage that reads neither).
  long long zero_reduce_bucket_elements = 0;
  long long zero3_sub_group_elements = 0;
  // NxD Training's HF model path (model_source: hf, export/nxd_hf_config.h): on reading, its
  // distributed_strategy.kv_replicator as stated (0: silent, the client's 1), checked against the KV heads.
  bool nxd_hf = false;
  int kv_replicator = 0;
  // Mixed precision as the file writes it: BF16, or FP16 where `fp16` says so.
  bool mixed_bf16() const { return workload.precision == spec::Precision::mixed_bf16 && !fp16; }
  bool mixed_fp16() const { return workload.precision == spec::Precision::mixed_bf16 && fp16; }
  // On reading: what the file states that trainplan prices otherwise than the
  // client would read it, one sentence each (printed as assumptions).
  std::vector<std::string> notes;
};

}  // namespace trainplan::exporting
