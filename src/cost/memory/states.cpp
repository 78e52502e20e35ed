// Weights, master weights, gradients and optimizer states: bytes per parameter
// by precision and stack, sharded by ZeRO stage (1: optimizer states and
// master weights, 2: + gradients, 3: + weights; Rajbhandari et al. 2020,
// ZeRO, section 5), parameters split by TP and PP.
#include <algorithm>

#include "cost/memory.h"

namespace trainplan::cost {

StateBytes state_bytes_per_parameter(const spec::Stack& stack, spec::Precision precision) {
  switch (precision) {
    // BF16 compute copy; FP32 master weights when the stack keeps them; the
    // gradient and the Adam moments in the stack's dtypes (Megatron-LM: FP32
    // main grads and moments, 2 + 4 + 4 + 8 = 18 bytes per parameter).
    case spec::Precision::mixed_bf16:
    // DeepSpeed ZeRO in FP16 or BF16: at the step the shard (ZeRO-3: one
    // sub-group of it at a time) is flattened (2 bytes) and cast to FP32 (4
    // bytes) for the wrapped Adam.
    {
      StateBytes b{2, stack.master_weight_bytes, stack.main_grad_bytes,
                   stack.keeps_16bit_grads ? 2.0 : 0.0, stack.optimizer_state_bytes, stack.zero3_keeps_16bit_shard};
      if (stack.step_temporaries == spec::StepTemporaries::fp32_grad_shard) b.step_grad_shard_copy = 2 + 4;
      return b;
    }
    // Pure BF16 with stochastic rounding keeps no master copy: 2 + 2 + 2 x 2.
    // FP8 GEMMs (Transformer Engine): the BF16 weights plus an FP8 copy and its
    // transpose, cached across micro-batches (TE's is_first_microbatch cache
    // keeps both on Hopper), over mixed BF16; only the layers' GEMM weights
    // have them (weights_bytes). As FP8 parameters the weight is that FP8 data
    // and transpose alone (NVIDIA/TransformerEngine@006257e5
    // transformer_engine/pytorch/tensor/float8_tensor.py Float8Quantizer.make_empty:
    // a uint8 rowwise tensor and a uint8 columnwise transpose), 2 bytes as
    // mixed BF16's weight.
    case spec::Precision::fp8: {
      StateBytes b = state_bytes_per_parameter(stack, spec::Precision::mixed_bf16);
      b.fp8_weight_cache = stack.fp8_param_gather ? 0 : 2;
      return b;
    }
    case spec::Precision::bf16_sr: return {2, 0, 2, 0, 4, true};
    case spec::Precision::fp32:
    case spec::Precision::fp32_bf16_matmul: return {4, 0, 4, 0, 8, true};  // the cast copies are transient
  }
  return {};
}

double stage_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p, int rank) {
  const double layers = double(m.layer_parameters()) * spec::stage_layers(m.layers, p, rank);
  const double embedding = double(m.embedding_parameters());
  double head = double(m.head_parameters());
  // A tied output layer on a last stage of its own keeps a copy of the word
  // embedding, as a parameter with its own gradient and optimizer state, for
  // GPT and BERT alike (Megatron-Core LanguageModule.setup_embeddings_and_output_layer;
  // BertModel's output_layer allocates its weight unless pre_process).
  if (m.tied_embeddings && p.pp > 1) head += double(m.padded_vocab()) * m.hidden;
  if (p.pp == 1) return (layers + embedding + head) / p.tp;
  return (layers + (rank == 0 ? embedding : 0.0) + (rank == p.pp - 1 ? head : 0.0)) / p.tp;
}

double parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p) {
  double most = std::max(stage_parameters_per_device(m, p, 0), stage_parameters_per_device(m, p, p.pp - 1));
  if (spec::edge_slots_active(p) && p.pp > 2) most = std::max(most, stage_parameters_per_device(m, p, 1));
  return most;
}

double stage_layer_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p, int rank) {
  return double(m.layer_parameters()) * spec::stage_layers(m.layers, p, rank) / p.tp;
}

double weights_bytes(const StateBytes& s, double params, double layer_params, const spec::Plan& p) {
  // Fully sharded with FP32 masters (FSDP mixed precision): the shard is the
  // master copy; the 16-bit weights exist only for the gathered layers
  // (sharding_buffers_bytes).
  const double shards = p.zero >= 3 ? p.dp : 1;
  // The embedding and the LM head run in BF16 (Megatron-Core builds them
  // outside Transformer Engine): no FP8 copies of them.
  const double cache = layer_params * s.fp8_weight_cache / shards;
  if (p.zero >= 3 && s.master_weights > 0 && !s.sharded_16bit_copy) return cache;
  return params * s.weights / shards + cache;
}
double master_weights_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.master_weights / (p.zero >= 1 ? p.dp : 1);
}
double gradients_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.gradients / (p.zero >= 2 ? p.dp : 1) + params * s.gradients_16bit;
}
double optimizer_states_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.optimizer / (p.zero >= 1 ? p.dp : 1);
}

double optimizer_temporaries_bytes(const spec::Stack& stack, const StateBytes& s, double params,
                                   const spec::Plan& p) {
  const double shards = p.zero >= 1 ? p.dp : 1;
  switch (stack.step_temporaries) {
    case spec::StepTemporaries::none: return 0;
    case spec::StepTemporaries::foreach: return params * (s.master_weights > 0 ? s.master_weights : s.weights) / shards;
    case spec::StepTemporaries::fp32_grad_shard: {
      const double shard = params / shards, group = stack.optimizer_sub_group_parameters;
      return (group > 0 ? std::min(shard, group) : shard) * s.step_grad_shard_copy;
    }
  }
  return 0;
}

double step_gradients_bytes(const spec::Stack& stack, const StateBytes& s, double params, const spec::Plan& p) {
  if (stack.step_temporaries != spec::StepTemporaries::fp32_grad_shard) return gradients_bytes(s, params, p);
  return params * s.gradients / (p.zero >= 1 ? p.dp : 1);
}

double cached_through_step_bytes(const spec::Stack& stack, double backward_tensors_bytes, double temporaries_bytes) {
  if (temporaries_bytes <= 0) return 0;
  return (1 + stack.allocator_overhead_fraction) * backward_tensors_bytes + temporaries_bytes;
}

double runtime_reserve_bytes(const spec::Stack& stack, const spec::Plan& p) {
  const int groups = (p.tp > 1) + (p.pp > 1) + (p.dp > 1) + (p.cp > 1) + (p.ep > 1);
  return stack.runtime_reserve_bytes + groups * stack.communicator_bytes;
}

double reduction_buffers_bytes(const spec::Stack& stack, const spec::Plan& p) {
  return p.dp > 1 ? stack.dp_bucket_buffer_bytes : 0.0;
}

double reduction_copy_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const StateBytes& s, double params,
                            const spec::Plan& p, int rank) {
  if (p.dp <= 1 || stack.dp_reduction_copy_bytes <= 0) return 0;
  // The edge stages hold the embedding or the head (or the tied copy): one tensor of
  // vocabulary x hidden (positions and the embedding's norm are tensors of their own).
  const bool edge = rank == 0 || rank == p.pp - 1;
  const double embedding = edge ? double(m.padded_vocab()) * m.hidden / p.tp : 0.0;
  const double layer_matrix = double(m.hidden) * std::max(m.ffn_hidden, 3 * m.hidden) / p.tp;
  const double largest = std::max(embedding, layer_matrix) * s.gradients;
  return std::min(params * s.gradients, std::max(stack.dp_reduction_copy_bytes, largest));
}

bool gathered_through_step(const spec::Stack& stack, const spec::Plan& p) {
  return stack.fsdp_gathered_under_pipeline && p.zero >= 3 && p.pp > 1;
}
double gathered_weights_bytes(const StateBytes& s, double params) { return params * s.weights; }
double gathered_gradients_bytes(const StateBytes& s, double params) { return params * s.gradients; }

double sharding_buffers_bytes(const spec::ModelSpec& m, const StateBytes& s, const spec::Plan& p) {
  if (p.zero < 3) return 0;
  const double layer = double(m.layer_parameters()) / p.tp;
  return layer * (2 * s.weights + s.weights);  // gathered + prefetched weights, unsharded gradients
}

double gradient_element_bytes(const spec::Stack& stack, spec::Precision precision) {
  switch (precision) {
    case spec::Precision::mixed_bf16:
    case spec::Precision::fp8: return stack.main_grad_bytes;  // FP8 GEMMs, gradients as mixed BF16
    case spec::Precision::bf16_sr: return 2;
    case spec::Precision::fp32:
    case spec::Precision::fp32_bf16_matmul: return 4;
  }
  return 4;
}

}  // namespace trainplan::cost
