#include "cost/evaluate.h"

#include <algorithm>
#include <array>
#include <vector>

#include "cost/flops.h"
#include "cost/memory.h"
#include "cost/pipeline.h"

namespace tp::cost {
namespace {

using net::Collective;

// Seconds of a GEMM (m x k) * (k x n) at the calibrated efficiency for its shape.
inline double gemm_s(const spec::GemmEfficiency& eff, double peak, double m, double n, double k) {
  return 2 * m * n * k / (peak * eff.at(m, n, k));
}
// Forward GEMM plus its two backward GEMMs: dX = dY W^T (m, k, n) and dW = X^T dY (k, n, m).
struct GemmPass {
  double forward_s = 0, backward_s = 0;
  void add(const spec::GemmEfficiency& eff, double peak, double m, double n, double k) {
    forward_s += gemm_s(eff, peak, m, n, k);
    backward_s += gemm_s(eff, peak, m, k, n) + gemm_s(eff, peak, k, n, m);
  }
};

inline double stream_s(const spec::MemoryEfficiency& eff, double bandwidth, double bytes) {
  return bytes > 0 ? bytes / (bandwidth * eff.at(bytes)) : 0.0;
}

// One layer, one micro-batch, one device; backward includes nothing recomputed.
struct LayerTime {
  double gemm_forward_s = 0, gemm_backward_s = 0;
  double attention_forward_s = 0;  // attention core (batched GEMMs); backward is twice this
  double memory_forward_s = 0;     // norms, softmax, activation, residuals, rotary
  double softmax_forward_s = 0;    // part of memory_forward_s, re-run by selective recompute
  double tp_forward_s = 0, tp_backward_s = 0;
};

// Bytes of an Adam step per locally updated parameter (reads and writes).
double optimizer_bytes_per_parameter(spec::Precision precision) {
  switch (precision) {
    case spec::Precision::mixed_bf16: return 2 * (4 + 4 + 4) + 4 + 2;  // master, m, v r/w; grad; bf16 copy
    case spec::Precision::bf16_sr: return 2 * (2 + 2 + 2) + 2;
    case spec::Precision::fp32: return 2 * (4 + 4 + 4) + 4;
  }
  return 0;
}

}  // namespace

Evaluator::Evaluator(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                     const spec::Calibration& calibration, const spec::Workload& workload)
    : model_(model), hardware_(hardware), calibration_(calibration), workload_(workload), cluster_(hardware),
      norm_(calibration.memory_for(model.norm == spec::NormKind::layernorm ? "layernorm" : "rmsnorm")),
      softmax_(calibration.memory_for("softmax")),
      activation_(calibration.memory_for(model.mlp == spec::MlpKind::gelu ? "gelu" : "swiglu")),
      residual_(calibration.memory_for("residual")),
      optimizer_(calibration.memory_for("optimizer")) {}

Evaluation Evaluator::evaluate(const spec::Plan& input, PipelineMethod method) const {
  const spec::ModelSpec& m = model_;
  const spec::HardwareSpec& hw = hardware_;
  const spec::Calibration& cal = calibration_;
  const spec::Workload& w = workload_;
  Evaluation result;
  result.plan = input;
  spec::Plan& p = result.plan;
  result.problem = complete_plan(m, hw, w, p);
  if (result.problem != PlanProblem::none) return result;

  const bool fp32 = w.precision == spec::Precision::fp32;
  const double peak = fp32 ? hw.peak_fp32_flops_per_s : hw.peak_bf16_flops_per_s;
  const double hbm = hw.hbm_bytes_per_s;
  const double e = fp32 ? 4 : 2;  // bytes per activation element
  const double t = p.tp, s = w.seq_len, b = p.micro_batch, h = m.hidden, f = m.ffn_hidden, d = m.head_dim();
  const double tokens = b * s;                      // per micro-batch
  const double sp_tokens = p.sp ? tokens / t : tokens;  // tokens seen by norms and residuals
  const double heads_local = m.heads / t;
  const double kv_local = m.kv_heads % p.tp == 0 ? m.kv_heads / t : 1.0;  // replicated when TP > kv heads
  const int instances = p.instances;
  const auto& coll = cal.collective;

  // ---- one layer ----
  LayerTime layer;
  GemmPass gemms;
  gemms.add(cal.gemm, peak, tokens, (heads_local + 2 * kv_local) * d, h);  // fused QKV
  gemms.add(cal.gemm, peak, tokens, h, h / t);                             // output projection
  gemms.add(cal.gemm, peak, tokens, f / t * (m.mlp == spec::MlpKind::swiglu ? 2 : 1), h);  // up (+gate)
  gemms.add(cal.gemm, peak, tokens, h, f / t);                                             // down
  layer.gemm_forward_s = gemms.forward_s;
  layer.gemm_backward_s = gemms.backward_s;
  {
    const double causal = m.kind == spec::ModelKind::decoder ? (s + 1) / (2 * s) : 1.0;
    const double batches = b * heads_local;
    const double flops = batches * 2 * s * s * d * causal;
    layer.attention_forward_s = flops / (peak * cal.gemm.at(s, s, d) * cal.attention_factor) +
                                flops / (peak * cal.gemm.at(s, d, s) * cal.attention_factor);
  }
  {
    const double norm_bytes = 2 * sp_tokens * h * e;        // read + write
    const double residual_bytes = 3 * sp_tokens * h * e;    // two reads, one write
    const double act_bytes = tokens * f / t * e * (m.mlp == spec::MlpKind::swiglu ? 3 : 2);
    const double softmax_bytes = b * heads_local * s * s * e * 2;
    const double rotary_bytes = m.position == spec::PositionKind::rotary
                                    ? 2 * tokens * (heads_local + kv_local) * d * m.rotary_fraction * e
                                    : 0.0;
    layer.softmax_forward_s = stream_s(softmax_, hbm, softmax_bytes);
    layer.memory_forward_s = 2 * stream_s(norm_, hbm, norm_bytes) + 2 * stream_s(residual_, hbm, residual_bytes) +
                             stream_s(activation_, hbm, act_bytes) + layer.softmax_forward_s +
                             stream_s(residual_, hbm, rotary_bytes);
  }
  double tp_per_collective_pair = 0;  // one all-reduce, or all-gather + reduce-scatter with SP
  if (p.tp > 1) {
    const net::GroupLayout tp_group{p.tp, 1};
    const double bytes = tokens * h * e;
    tp_per_collective_pair =
        p.sp ? cluster_.seconds(Collective::all_gather, bytes, tp_group, instances, coll) +
                   cluster_.seconds(Collective::reduce_scatter, bytes, tp_group, instances, coll)
             : cluster_.seconds(Collective::all_reduce, bytes, tp_group, instances, coll);
    layer.tp_forward_s = 2 * tp_per_collective_pair;
    layer.tp_backward_s = 2 * tp_per_collective_pair;
    if (p.overlap_tp_comm) {  // async TP hides collectives behind the layer's independent GEMM chunks
      layer.tp_forward_s = std::max(0.0, layer.tp_forward_s - layer.gemm_forward_s);
      layer.tp_backward_s = std::max(0.0, layer.tp_backward_s - layer.gemm_backward_s);
    }
  }
  const double layer_fwd_compute = layer.gemm_forward_s + layer.attention_forward_s + layer.memory_forward_s;
  const double layer_bwd_compute = layer.gemm_backward_s + 2 * layer.attention_forward_s + 2 * layer.memory_forward_s;
  double layer_recompute = 0, layer_recompute_tp = 0;
  if (p.recompute == spec::Recompute::selective) layer_recompute = layer.attention_forward_s + layer.softmax_forward_s;
  if (p.recompute == spec::Recompute::full) {
    layer_recompute = layer_fwd_compute;
    layer_recompute_tp = layer.tp_forward_s;
  }

  // ---- embedding (first rank) and head (last rank) ----
  const double embed_fwd = stream_s(residual_, hbm, 2 * tokens * h * e) +
                           (p.tp > 1 ? cluster_.seconds(Collective::all_reduce, tokens * h * e, {p.tp, 1}, instances, coll) : 0);
  const double embed_bwd = stream_s(residual_, hbm, 2 * tokens * h * e);
  double head_fwd = 0, head_bwd = 0, head_tp = 0;
  {
    const double head_tokens = tokens * m.head_token_fraction;
    GemmPass head;
    head.add(cal.gemm, peak, head_tokens, double(m.padded_vocab(p.tp)) / t, h);
    if (m.kind == spec::ModelKind::encoder_mlm) head.add(cal.gemm, peak, head_tokens, h, h);
    const double logits_bytes = head_tokens * double(m.padded_vocab(p.tp)) / t * 4;
    const double loss_s = stream_s(softmax_, hbm, 3 * logits_bytes);
    head_fwd = head.forward_s + loss_s + stream_s(norm_, hbm, 2 * sp_tokens * h * e);
    head_bwd = head.backward_s + loss_s;
    if (p.sp) head_tp = cluster_.seconds(Collective::all_gather, tokens * h * e, {p.tp, 1}, instances, coll);
  }

  // ---- pipeline ----
  const int chunks = p.pp * p.virtual_stages;
  const double layers_per_chunk = double(m.layers) / chunks;
  const double chunk_fwd = layers_per_chunk * (layer_fwd_compute + layer.tp_forward_s);
  const double chunk_bwd =
      layers_per_chunk * (layer_bwd_compute + layer_recompute + layer.tp_backward_s + layer_recompute_tp);
  constexpr int stack_chunks = 512;
  std::array<double, stack_chunks> fwd_stack, bwd_stack;
  std::vector<double> fwd_heap, bwd_heap;
  double* fwd = fwd_stack.data();
  double* bwd = bwd_stack.data();
  if (chunks > stack_chunks) {
    fwd_heap.resize(chunks);
    bwd_heap.resize(chunks);
    fwd = fwd_heap.data();
    bwd = bwd_heap.data();
  }
  std::fill(fwd, fwd + chunks, chunk_fwd);
  std::fill(bwd, bwd + chunks, chunk_bwd);
  fwd[0] += embed_fwd;  // rank 0, chunk 0
  bwd[0] += embed_bwd;
  fwd[chunks - 1] += head_fwd + head_tp;  // last rank, last chunk
  bwd[chunks - 1] += head_bwd + head_tp;

  PipelineInput pipe;
  pipe.stages = p.pp;
  pipe.micro_batches = p.grad_accum;
  pipe.virtual_stages = p.virtual_stages;
  pipe.forward_s = {fwd, size_t(chunks)};
  pipe.backward_s = {bwd, size_t(chunks)};
  // The step's pipeline time comes from the chosen method with p2p included.
  // The split between bubble and exposed p2p comes from the closed form, which
  // is exact for it on uniform stages, so the DAG path runs once.
  const PipelineTime closed_without_p2p = pipeline_time_closed_form(pipe);
  double p2p_exposed_s = 0;
  if (p.pp > 1) {
    const double p2p_bytes = tokens * h * e / t;  // Megatron scatters across TP, gathers after the send
    pipe.p2p_s = cluster_.seconds(Collective::point_to_point, p2p_bytes, {p.pp, p.tp * p.dp}, instances, coll);
  }
  const PipelineTime with_p2p =
      method == PipelineMethod::dag ? pipeline_time_dag(pipe) : pipeline_time_closed_form(pipe);
  if (p.pp > 1) {
    const double closed_with_p2p =
        method == PipelineMethod::dag ? pipeline_time_closed_form(pipe).total_s : with_p2p.total_s;
    p2p_exposed_s = std::clamp(closed_with_p2p - closed_without_p2p.total_s, 0.0, with_p2p.total_s);
  }

  // Per-micro-batch figures of the busiest rank, for the breakdown.
  const int v = p.virtual_stages;
  const double rank_layers = layers_per_chunk * v;
  const double first_rank = v * (chunk_fwd + chunk_bwd) + embed_fwd + embed_bwd + (p.pp == 1 ? head_fwd + head_bwd + 2 * head_tp : 0);
  const double last_rank = v * (chunk_fwd + chunk_bwd) + head_fwd + head_bwd + 2 * head_tp;
  const bool last_is_busiest = p.pp > 1 && last_rank > first_rank;
  const double extra_fwd = last_is_busiest ? head_fwd : embed_fwd + (p.pp == 1 ? head_fwd : 0);
  const double extra_bwd = last_is_busiest ? head_bwd : embed_bwd + (p.pp == 1 ? head_bwd : 0);
  const double extra_tp = last_is_busiest || p.pp == 1 ? 2 * head_tp : 0;
  const double mb = p.grad_accum;

  // ---- data parallel ----
  const StateBytes state = state_bytes_per_parameter(w.precision);
  const double params = parameters_per_device(m, p);
  double dp_reduce = 0, dp_gather = 0, zero3_per_mb = 0;
  if (p.dp > 1) {
    const net::GroupLayout dp_group{p.dp, p.tp};
    const double grad_bytes = params * state.gradients;
    const double weight_bytes = params * state.weights;
    if (p.zero == 0) {
      dp_reduce = cluster_.seconds(Collective::all_reduce, grad_bytes, dp_group, instances, coll);
    } else {
      dp_reduce = cluster_.seconds(Collective::reduce_scatter, grad_bytes, dp_group, instances, coll);
      dp_gather = cluster_.seconds(Collective::all_gather, weight_bytes, dp_group, instances, coll);
    }
    if (p.zero == 3) zero3_per_mb = 2 * dp_gather;
  }
  const double rank_fwd_mb = rank_layers * (layer_fwd_compute + layer.tp_forward_s) + extra_fwd;
  const double rank_bwd_mb = rank_layers * (layer_bwd_compute + layer_recompute + layer.tp_backward_s + layer_recompute_tp) + extra_bwd;
  double dp_exposed = dp_reduce + dp_gather + zero3_per_mb * mb;
  if (p.overlap_dp_comm) {
    // Gradients of the last micro-batch's backward stream out while it runs; the
    // parameter all-gather hides behind the next step's first forward; ZeRO-3
    // gathers prefetch behind each micro-batch's compute.
    dp_exposed = std::max(0.0, dp_reduce - rank_bwd_mb) + std::max(0.0, dp_gather - rank_fwd_mb) +
                 mb * std::max(0.0, zero3_per_mb - (rank_fwd_mb + rank_bwd_mb));
  }

  // ---- optimizer and the rest ----
  const double local_params = params / (p.zero >= 1 ? p.dp : 1);
  const double opt_bytes = local_params * optimizer_bytes_per_parameter(w.precision);
  const double optimizer_s = stream_s(optimizer_, hbm, opt_bytes);
  // Every micro-batch after the first adds its gradients into the step's
  // buffer: autograd reads the new gradient and the accumulator and writes the
  // accumulator back. The buffer is the full local one at every ZeRO stage
  // (Megatron's distributed optimizer and ZeRO-1 keep it whole until the step).
  const double accumulate_bytes = 3 * params * state.gradients;
  const double grad_accumulation_s = (mb - 1) * stream_s(residual_, hbm, accumulate_bytes);

  Estimate& est = result.estimate;
  StepBreakdown& tb = est.time;
  tb.forward_compute_s = mb * (rank_layers * layer_fwd_compute + extra_fwd);
  tb.recompute_s = mb * rank_layers * layer_recompute;
  tb.backward_compute_s = mb * (rank_layers * (layer_bwd_compute + layer_recompute) + extra_bwd);
  tb.memory_bound_s = mb * rank_layers * 3 * layer.memory_forward_s;
  tb.tp_comm_exposed_s = mb * (rank_layers * (layer.tp_forward_s + layer.tp_backward_s + layer_recompute_tp) + extra_tp);
  const double busiest_rank_s = tb.forward_compute_s + tb.backward_compute_s + tb.tp_comm_exposed_s;
  tb.pp_comm_exposed_s = p2p_exposed_s;
  tb.pipeline_bubble_s = std::max(0.0, with_p2p.total_s - p2p_exposed_s - busiest_rank_s);
  tb.dp_comm_total_s = dp_reduce + dp_gather + zero3_per_mb * mb;
  tb.dp_comm_exposed_s = dp_exposed;
  tb.optimizer_s = optimizer_s;
  tb.grad_accumulation_s = grad_accumulation_s;
  tb.overhead_s = cal.step_overhead_s;
  // The busiest rank's work plus the bubble is the pipeline's critical path.
  tb.step_s = tb.forward_compute_s + tb.backward_compute_s + tb.tp_comm_exposed_s + tb.pipeline_bubble_s +
              tb.pp_comm_exposed_s + tb.dp_comm_exposed_s + tb.grad_accumulation_s + tb.optimizer_s + tb.overhead_s;

  est.devices = p.instances * hw.devices_per_instance();
  est.micro_batches = p.grad_accum;
  const double tokens_per_step = w.tokens_per_step();
  est.model_flops_per_step = model_flops(m, tokens_per_step, w.seq_len);
  est.hardware_flops_per_step = hardware_flops(m, tokens_per_step, w.seq_len, p.recompute);
  est.seqs_per_s = double(w.global_batch_seqs) / tb.step_s;
  est.tokens_per_s = est.seqs_per_s * w.seq_len;
  est.tokens_per_s_per_device = est.tokens_per_s / est.devices;
  const double cluster_peak = peak * est.devices;
  est.mfu = est.model_flops_per_step / tb.step_s / cluster_peak;
  est.hfu = est.hardware_flops_per_step / tb.step_s / cluster_peak;
  est.time_to_train_s = w.tokens_to_train > 0 ? w.tokens_to_train / est.tokens_per_s : 0;

  est.memory = memory_per_device(m, hw, w, p);
  if (!est.memory.fits) result.problem = PlanProblem::out_of_memory;
  return result;
}

Evaluation evaluate(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                    const spec::Calibration& calibration, const spec::Workload& workload, const spec::Plan& plan,
                    PipelineMethod method) {
  return Evaluator(model, hardware, calibration, workload).evaluate(plan, method);
}

}  // namespace tp::cost
