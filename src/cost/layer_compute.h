// Layer compute: one transformer layer's GEMMs (fused QKV with GQA, output
// projection, MLP), attention core and memory-bound ops (norms, activation,
// residuals, rotary, unfused softmax) for one micro-batch on one device, and
// what recompute re-runs as the stack implements it; plus the embedding (first
// stage) and the output head with its loss (last stage).
#pragma once
#include "cost/gemm_time.h"
#include "cost/step_context.h"

namespace trainplan::cost {

struct LayerCompute {
  double gemm_forward_s = 0, gemm_backward_s = 0;
  double attention_forward_s = 0, attention_backward_s = 0;  // flash backward re-forms the scores
  double memory_forward_s = 0;   // norms, activation, residuals, rotary, unfused softmax
  double memory_backward_s = 0;  // about twice forward: gradients read inputs and outputs
  double recompute_s = 0;        // forward work re-run during backward
  // Forward GEMM time full recompute leaves out: the dense MLP's closing GEMM
  // where the stack stops at the last saved tensor (spec::FullRecompute).
  double gemm_not_recomputed_s = 0;
  // The GEMMs of the column-parallel layer that opens each TP pair, whose backward
  // halves a stack may run beside the pair's collectives (spec::TpBackwardOverlap):
  // the fused QKV (zero for latent attention, whose TP split starts after its
  // replicated down-projections), the dense MLP's up projection (gate included)
  // and, in MoE layers, the shared experts' up projection; one layer each, not
  // weighted by the share of MoE layers.
  GemmTime qkv, mlp_up, shared_up;
  double forward_s() const { return gemm_forward_s + attention_forward_s + memory_forward_s; }
  double backward_s() const { return gemm_backward_s + attention_backward_s + memory_backward_s + recompute_s; }
};

struct EdgeCompute {
  double embedding_forward_s = 0, embedding_backward_s = 0;
  double head_forward_s = 0, head_backward_s = 0;  // LM or MLM head with its loss
};

LayerCompute layer_compute(const StepContext& ctx);
// Share of the full s x s score matrix a fused (flash) attention kernel
// computes: the causal half of a decoder's, or under document masking
// (Workload::document_tokens) each query's earlier tokens of its own document
// plus one kernel tile of partly masked blocks, and on a model's sliding-window
// layers at most the window plus a tile; the mean over layers. Unfused
// attention computes all of it.
double attention_score_fraction(const spec::ModelSpec& m, const spec::Workload& w, spec::AttentionKernel kernel);
EdgeCompute edge_compute(const StepContext& ctx);

}  // namespace trainplan::cost
