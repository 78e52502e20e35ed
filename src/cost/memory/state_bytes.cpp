// Bytes per parameter by what holds them (cost/state_bytes.h): weights, master
// weights, gradients and Adam moments as the stack and precision keep them.
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
    // bytes) for the wrapped Adam. DeepSpeed's FP16_Optimizer (ZeRO off) casts
    // each gradient to FP32 (4 bytes) in a list and flattens the list (4 bytes):
    // microsoft/DeepSpeed@v0.16.2 deepspeed/runtime/fp16/fused_optimizer.py:285-288.
    {
      const spec::StackMemory& kept = stack.memory;
      StateBytes b{2, kept.master_weight_bytes, kept.main_grad_bytes,
                   kept.keeps_16bit_grads ? 2.0 : 0.0, kept.optimizer_state_bytes, kept.zero3_keeps_16bit_shard};
      // The stack as the plan's ZeRO stage sees it (spec::at_zero_stage) says which copy the step makes.
      if (kept.step_temporaries == spec::StepTemporaries::fp32_grad_shard) b.step_grad_shard_copy = 2 + 4;
      if (kept.step_temporaries == spec::StepTemporaries::fp32_grad_casts) b.step_grad_casts = 4 + 4;
      // DeepSpeed's BF16 optimizer with a BF16 accumulator: grad_partition.to(FP32), one copy of the
      // rank's partition (microsoft/DeepSpeed@v0.16.2 deepspeed/runtime/bf16_optimizer.py:297-301).
      if (kept.step_temporaries == spec::StepTemporaries::fp32_grad_partition) b.step_grad_partition_cast = 4;
      b.gradient_partition_per_micro_batch = kept.gradient_partition_per_micro_batch;
      const double reduced = reduction_element_bytes(stack, precision);
      if (reduced != b.gradients) b.reduce_cast = reduced;
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
      b.fp8_weight_cache = stack.memory.fp8_param_gather ? 0 : 2;
      return b;
    }
    case spec::Precision::bf16_sr: return {2, 0, 2, 0, 4, true};
    case spec::Precision::fp32:
    case spec::Precision::fp32_bf16_matmul: return {4, 0, 4, 0, 8, true};  // the cast copies are transient
  }
  return {};
}

double gradient_element_bytes(const spec::Stack& stack, spec::Precision precision) {
  switch (precision) {
    case spec::Precision::mixed_bf16:
    case spec::Precision::fp8: return stack.memory.main_grad_bytes;  // FP8 GEMMs, gradients as mixed BF16
    case spec::Precision::bf16_sr: return 2;
    case spec::Precision::fp32:
    case spec::Precision::fp32_bf16_matmul: return 4;
  }
  return 4;
}

double reduction_element_bytes(const spec::Stack& stack, spec::Precision precision) {
  const bool mixed = precision == spec::Precision::mixed_bf16 || precision == spec::Precision::fp8;
  const double cast = stack.communication.dp_reduce_bytes;
  return mixed && cast > 0 ? cast : gradient_element_bytes(stack, precision);
}

}  // namespace trainplan::cost
