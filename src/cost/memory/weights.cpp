// The weights component: the compute copy (sharded at ZeRO-3) and the FP8
// copies Transformer Engine caches across micro-batches; under a pipeline that
// keeps a ZeRO-3 stage gathered, the whole stage's 16-bit weights.
#include "cost/memory.h"

namespace trainplan::cost {

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

double gathered_weights_bytes(const StateBytes& s, double params) { return params * s.weights; }

}  // namespace trainplan::cost
