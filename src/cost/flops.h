// Model FLOPs of one training step, op by op, counted as multiply-adds x 2.
// Backward is twice forward; causal attention counts the lower triangle only
// ((s+1)/2s of the full score matrix), as a fused causal kernel computes it.
// Recompute adds forward work to hardware FLOPs, never to model FLOPs. A MoE
// layer counts its router, shared experts and the top-k routed experts a token
// runs (active parameters), so MFU is on active parameters.
#pragma once
#include "spec/model_spec.h"
#include "spec/plan.h"

namespace trainplan::cost {

// Forward FLOPs of one layer for `tokens` tokens in sequences of `seq_len`.
struct LayerFlops {
  double qkv = 0, attention_scores = 0, attention_context = 0, output_projection = 0, mlp = 0;
  double total() const { return qkv + attention_scores + attention_context + output_projection + mlp; }
  double attention_core() const { return attention_scores + attention_context; }
};

LayerFlops layer_forward_flops(const spec::ModelSpec& model, double tokens, int seq_len);
// LM head (decoder) or MLM head (encoder, on the masked share of tokens), forward.
double head_forward_flops(const spec::ModelSpec& model, double tokens, int tp = 1);
// Model FLOPs (forward + backward, no recompute) of a step over `tokens` tokens.
double model_flops(const spec::ModelSpec& model, double tokens, int seq_len);
// Hardware FLOPs: model FLOPs plus what recompute runs again; under full
// recompute, `full_share` of the layers (spec::recomputed_share).
double hardware_flops(const spec::ModelSpec& model, double tokens, int seq_len, spec::Recompute recompute,
                      double full_share = 1.0);

}  // namespace trainplan::cost
