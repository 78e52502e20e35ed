// Bytes each parameter's training state takes, by what holds it, as the
// stack and precision keep it: what the memory components and the time terms
// that stream states (gradient accumulation, the optimizer step, the DP
// reduction) all read, so that no term includes another for it.
#pragma once
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {

// Bytes per parameter held before sharding, by what holds them.
struct StateBytes {
  double weights = 0;         // the compute copy (BF16, or FP32 in fp32 training)
  double master_weights = 0;  // FP32 master copy under mixed precision (2: its low 16 bits beside BF16 weights); 0: none
  double gradients = 0;       // as accumulated and reduced
  double gradients_16bit = 0; // the model's own 16-bit gradients when they coexist with the main ones (unsharded)
  double optimizer = 0;       // Adam's two moments
  bool sharded_16bit_copy = true;  // at ZeRO-3: a persistent 16-bit shard beside the master (DeepSpeed), or none (FSDP)
  double fp8_weight_cache = 0;  // FP8 copies of the weights kept across micro-batches; not updated or checkpointed
  double step_grad_shard_copy = 0;  // bytes per element of the rank's gradient shard copied at the step (flat 16-bit + FP32)
  // Bytes per gradient element FP16_Optimizer allocates at the step: its FP32 cast and that cast's flat copy.
  double step_grad_casts = 0;
  // Bytes per element of the rank's gradient partition cast to FP32 at the step (DeepSpeed's BF16
  // optimizer accumulating in BF16: 4), beside the accumulator it was cast from.
  double step_grad_partition_cast = 0;
  // Bytes per element of the cast a buffered reduction makes of its flat copy into the stack's
  // reduction dtype (spec::StackCommunication::dp_reduce_bytes), beside the copy; 0: none.
  double reduce_cast = 0;
  // At ZeRO-2 with accumulation, a fresh 16-bit partition per micro-batch beside the accumulated one
  // (spec::StackMemory::gradient_partition_per_micro_batch).
  bool gradient_partition_per_micro_batch = false;
};
StateBytes state_bytes_per_parameter(const spec::Stack& stack, spec::Precision precision);

// Bytes of one gradient element as the stack accumulates it.
double gradient_element_bytes(const spec::Stack& stack, spec::Precision precision);
// Bytes of one gradient element as the DP collective moves it: the stack's
// reduction dtype in mixed precision where it casts the buffer, else the buffer's.
double reduction_element_bytes(const spec::Stack& stack, spec::Precision precision);

}  // namespace trainplan::cost
