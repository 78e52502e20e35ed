// Context parallel: the exchange around the attention core when each sequence
// is split over CP ranks, per layer and micro-batch. Ring (Megatron-Core /
// Transformer Engine "p2p"): CP-1 steps, each sending this rank's K and V
// chunk to the next rank while attention runs on the chunk in hand; only what
// a step's transfer takes beyond its attention shows (backward also returns
// dK and dV: twice the bytes). All-gather (torchtitan's default): K and V
// gathered before attention, dK and dV reduce-scattered after; not hidden.
// All-to-all (DeepSpeed-Ulysses, TE "a2a"): Q, K and V each exchanged from
// s/CP tokens x all local heads to s tokens x heads/CP before attention, the
// output back after: four blocking all-to-alls forward, their mirrors
// (dO, dQ, dK, dV) backward; nothing overlaps them.
// Selective (attention-core) and full recompute repeat the forward exchange.
#pragma once
#include "cost/layer_compute.h"
#include "cost/step_context.h"

namespace trainplan::cost {

struct ContextParallelTime {
  double forward_s = 0, backward_s = 0;  // exposed, per layer
  double recompute_s = 0;
};

// Bytes of one rank's K and V chunk for one micro-batch: 2 chunks' worth of
// sequence (s / CP) x kv heads on this TP rank x (qk + v head dims) x bytes.
double kv_chunk_bytes(const StepContext& ctx);
// Bytes each rank sends into one all-to-all of the attention exchange, for one
// micro-batch: s / CP tokens x local heads (Q, O) or kv heads (K, V) x head dim x bytes.
struct HeadExchangeBytes {
  double q = 0, k = 0, v = 0, out = 0;
};
HeadExchangeBytes head_exchange_bytes(const StepContext& ctx);
ContextParallelTime context_parallel(const StepContext& ctx, const LayerCompute& layer);

}  // namespace trainplan::cost
