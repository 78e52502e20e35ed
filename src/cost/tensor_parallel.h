// Tensor parallel: the TP collectives of one layer for one micro-batch (an
// all-reduce after attention and after the MLP, or all-gather + reduce-scatter
// pairs under sequence parallelism, whose forward gathers move one byte per
// element under FP8 with Transformer Engine), forward and backward, less what
// async TP hides behind the layer's GEMMs; full recompute repeats the forward ones
// (less the MLP's closing one where the stack stops at the last saved tensor).
#pragma once
#include "cost/layer_compute.h"
#include "cost/step_context.h"

namespace trainplan::cost {

struct TensorParallelTime {
  double forward_s = 0, backward_s = 0;  // exposed, per layer
  double recompute_s = 0;                // forward collectives re-run by full recompute
  double embedding_s = 0;                // the embedding's all-reduce (first stage)
  double head_s = 0;                     // the head's all-gather under SP, forward and again backward
};

TensorParallelTime tensor_parallel(const StepContext& ctx, const LayerCompute& layer);

}  // namespace trainplan::cost
