#include "spec/stack.h"

#include <algorithm>

namespace trainplan::spec {

double Stack::attention_speedup(const std::string& family) const {
  const auto& by_family = compute.attention_speedup_by_family;
  const auto it = by_family.find(family);
  return it == by_family.end() ? 1.0 : it->second;
}

bool Stack::offers_zero(int stage) const {
  const auto& stages = capabilities.zero_stages;
  return std::find(stages.begin(), stages.end(), stage) != stages.end();
}

bool Stack::offers_recompute(Recompute mode) const {
  const auto& modes = capabilities.recompute_modes;
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

namespace {

// The fields a by_zero_stage entry may state, each with the members its file
// key sets: what a DeepSpeed config's zero_optimization block sets per stage
// (overlap_comm, reduce_scatter, reduce_bucket_size, contiguous_gradients,
// allgather_bucket_size, sub_group_size), when it reduces (every micro-batch at
// ZeRO-2), the optimizer DeepSpeed picks by stage, and Megatron's FP8
// parameters, which need a sharded optimizer. A field joins by a line here.
struct StageField {
  const char* key;
  void (*take)(Stack& to, const Stack& from);
};

constexpr StageField kStageFields[] = {
    {"overlap_dp_grad_reduce",
     [](Stack& to, const Stack& from) {
       to.communication.overlap_dp_grad_reduce = from.communication.overlap_dp_grad_reduce;
     }},
    {"overlap_dp_param_gather",
     [](Stack& to, const Stack& from) {
       to.communication.overlap_dp_param_gather = from.communication.overlap_dp_param_gather;
     }},
    {"zero_grad_reduce",
     [](Stack& to, const Stack& from) {
       to.communication.zero_grad_reduce_all_reduce = from.communication.zero_grad_reduce_all_reduce;
     }},
    {"dp_grad_reduce_every_micro_batch",
     [](Stack& to, const Stack& from) {
       to.communication.dp_grad_reduce_every_micro_batch = from.communication.dp_grad_reduce_every_micro_batch;
     }},
    {"dp_param_gather_every_micro_batch",
     [](Stack& to, const Stack& from) {
       to.communication.dp_param_gather_every_micro_batch = from.communication.dp_param_gather_every_micro_batch;
     }},
    {"dp_bucket_mb",
     [](Stack& to, const Stack& from) { to.communication.dp_bucket_bytes = from.communication.dp_bucket_bytes; }},
    {"dp_bucket_buffer_mb",
     [](Stack& to, const Stack& from) {
       to.communication.dp_bucket_buffer_bytes = from.communication.dp_bucket_buffer_bytes;
       to.communication.dp_bucket_buffer_hidden_squared = from.communication.dp_bucket_buffer_hidden_squared;
     }},
    {"dp_bucket_buffers_overlapped",
     [](Stack& to, const Stack& from) {
       to.communication.dp_bucket_buffers_overlapped = from.communication.dp_bucket_buffers_overlapped;
     }},
    {"dp_reduction_copy_mb",
     [](Stack& to, const Stack& from) {
       to.communication.dp_reduction_copy_bytes = from.communication.dp_reduction_copy_bytes;
     }},
    {"gradients_freed_at_step",
     [](Stack& to, const Stack& from) { to.memory.gradients_freed_at_step = from.memory.gradients_freed_at_step; }},
    {"gradient_partition_per_micro_batch",
     [](Stack& to, const Stack& from) {
       to.memory.gradient_partition_per_micro_batch = from.memory.gradient_partition_per_micro_batch;
     }},
    {"fp8_param_gather",
     [](Stack& to, const Stack& from) { to.memory.fp8_param_gather = from.memory.fp8_param_gather; }},
    {"optimizer_step_temporaries",
     [](Stack& to, const Stack& from) { to.memory.step_temporaries = from.memory.step_temporaries; }},
    {"optimizer_sub_group_parameters",
     [](Stack& to, const Stack& from) {
       to.memory.optimizer_sub_group_parameters = from.memory.optimizer_sub_group_parameters;
     }},
};

const StageField* stage_field(const std::string& key) {
  for (const StageField& f : kStageFields)
    if (key == f.key) return &f;
  return nullptr;
}

}  // namespace

bool varies_by_zero_stage(const std::string& key) { return stage_field(key) != nullptr; }

std::string zero_stage_fields() {
  std::string out;
  for (const StageField& f : kStageFields) out += (out.empty() ? "" : ", ") + std::string(f.key);
  return out;
}

Stack at_zero_stage(const Stack& stack, int stage) {
  Stack out = stack;
  if (stage < 0 || stage > 3) return out;
  const ZeroStageFields& entry = stack.by_zero_stage[stage];
  if (!entry.values) return out;
  // The loader admits only kStageFields' keys (spec/stack_load.cpp).
  for (const std::string& key : entry.keys)
    if (const StageField* f = stage_field(key)) f->take(out, *entry.values);
  return out;
}

bool Stack::offers_pipeline(int pp, int virtual_stages) const {
  if (pp <= 1) return true;
  return virtual_stages > 1 ? capabilities.pipeline_interleaved : capabilities.pipeline_1f1b;
}

std::string stack_refusal(const Stack& s, const Plan& p) {
  if (!s.offers_zero(p.zero)) return "ZeRO stage " + std::to_string(p.zero) + " is not offered by " + s.name;
  if (!s.offers_recompute(p.recompute))
    return std::string("recompute '") + to_string(p.recompute) + "' is not offered by " + s.name;
  if (p.recompute_layers > 0 && !s.capabilities.block_recompute)
    return "full recompute of the first " + std::to_string(p.recompute_layers) +
           " layers of each chunk (Megatron-Core's --recompute-method block) is not offered by " + s.name;
  if (!s.offers_pipeline(p.pp, p.virtual_stages))
    return std::string(p.virtual_stages > 1 ? "the interleaved pipeline schedule" : "pipeline parallelism") +
           " is not offered by " + s.name;
  if (edge_slots_active(p) && !s.capabilities.edge_layer_slots)
    return "edge layer slots (the embedding and the head in the pipeline split) are not offered by " + s.name;
  if (p.sp && !s.capabilities.sequence_parallel) return "sequence parallelism is not offered by " + s.name;
  if (p.overlap_tp_comm && !s.capabilities.overlap_tp_comm) return "TP communication overlap is not offered by " + s.name;
  if (p.cp > 1 && s.communication.context_parallel == ContextParallel::none)
    return "context parallelism (CP " + std::to_string(p.cp) + ") is not offered by " + s.name;
  if ((p.ep > 1 || (p.etp > 0 && p.etp != p.tp)) && !s.capabilities.expert_parallel)
    return "expert parallelism (EP " + std::to_string(p.ep) + ", expert TP " + std::to_string(p.etp) +
           ") is not offered by " + s.name;
  return {};
}

const char* to_string(GradAccumulation mode) {
  return mode == GradAccumulation::fused_wgrad ? "fused-wgrad" : "separate-pass";
}

const char* to_string(ContextParallel mode) {
  switch (mode) {
    case ContextParallel::none: return "none";
    case ContextParallel::ring: return "p2p-ring";
    case ContextParallel::all_gather: return "all-gather-kv";
    case ContextParallel::all_to_all: return "all-to-all";
  }
  return "?";
}

const char* to_string(AttentionKernel kernel) { return kernel == AttentionKernel::flash ? "flash" : "unfused"; }

bool selective_wraps_mlp(const Stack& stack, const ModelSpec& model) {
  // neuronx-distributed@4f95471 tp_pp_llama_hf_pretrain/run_llama_nxd.py:116-117
  // ((CoreAttention, LlamaMLP) at 8,192 tokens); MoE: @4f95471
  // examples/training/mixtral/mixtral_pretrain/run_mixtral_pretrain_ptl.py:182
  // ((CoreAttention, MoE)) and neuronx-distributed-training@ff83d7bd
  // megatron/megatron_base_model.py:56-59 ((CoreAttention, NeuronSwitchMLP)).
  switch (stack.capabilities.selective) {
    case SelectiveRecompute::core_attention_and_mlp_modules: return true;
    case SelectiveRecompute::core_attention_module: return model.moe();
    default: return false;
  }
}

double expert_load(const Stack& stack, const ModelSpec& model, double imbalance) {
  return stack.compute.experts_compute_capacity ? model.capacity_load() : model.routed_load(imbalance);
}

}  // namespace trainplan::spec
