#include "cost/evaluate.h"

#include <algorithm>

#include "cost/context_parallel.h"
#include "cost/data_parallel.h"
#include "cost/expert_parallel.h"
#include "cost/flops.h"
#include "cost/grad_accumulation.h"
#include "cost/layer_compute.h"
#include "cost/memory.h"
#include "cost/optimizer.h"
#include "cost/overhead.h"
#include "cost/stages.h"
#include "cost/tensor_parallel.h"
#include "spec/error.h"
#include "spec/precision_support.h"

namespace trainplan::cost {

double StepContext::peak_flops_per_s() const {
  return workload.precision == spec::Precision::fp32 ? hardware.peak_fp32_flops_per_s : hardware.peak_bf16_flops_per_s;
}

double StepContext::linear_peak_flops_per_s() const {
  return workload.precision == spec::Precision::fp8 ? hardware.peak_fp8_flops_per_s : peak_flops_per_s();
}

double StepContext::gathered_parameter_bytes() const {
  if (workload.precision != spec::Precision::fp8 || !stack.memory.fp8_param_gather || params_per_device <= 0)
    return element_bytes();
  const double layers = double(model.layer_parameters()) * spec::layers_per_stage(model.layers, plan) / plan.tp;
  const double fp8_share = std::min(1.0, layers / params_per_device);
  return fp8_share * 1.0 + (1 - fp8_share) * element_bytes();
}

Evaluator::Evaluator(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
                     const spec::Calibration& calibration, const spec::Workload& workload)
    : model_(model), hardware_(hardware), stack_(stack), calibration_(calibration), workload_(workload),
      cluster_(hardware), attention_speedup_(stack.attention_speedup(hardware.family)) {
  for (int zero = 0; zero < 4; ++zero)
    if (stack.by_zero_stage[zero].values) zero_stage_stacks_[zero] = spec::at_zero_stage(stack, zero);
  if (const std::string why = spec::precision_refusal(hardware, stack, workload.precision); !why.empty())
    throw spec::SpecError(stack.source_file.empty() ? stack.name : stack.source_file, "precision", why);
}

const spec::Stack& Evaluator::stack_at(int zero) const {
  return zero >= 0 && zero < 4 && zero_stage_stacks_[zero] ? *zero_stage_stacks_[zero] : stack_;
}

Evaluation Evaluator::evaluate(const spec::Plan& input, PipelineMethod method) const {
  Evaluation result;
  result.plan = input;
  const spec::Plan& p = result.plan;
  result.problem = complete_plan(model_, hardware_, workload_, result.plan, stack_at(p.zero).communication.context_parallel);
  if (result.problem == PlanProblem::none) result.problem = check_context_parallel(model_, stack_at(p.zero), p);
  if (result.problem != PlanProblem::none) return result;
  // Read per call: a fit moves the calibration's memory efficiencies between calls.
  const spec::Calibration& c = calibration_;
  const OpEfficiencies ops{c.memory_for(model_.norm == spec::NormKind::layernorm ? "layernorm" : "rmsnorm"),
                           c.memory_for("softmax"), c.memory_for(model_.mlp == spec::MlpKind::gelu ? "gelu" : "swiglu"),
                           c.memory_for("residual"), c.memory_for("optimizer"),
                           c.memory_for("attention_softmax", "softmax")};
  const spec::Stack& stack = stack_at(p.zero);  // every term reads the stack as this plan's ZeRO stage sees it
  const StepContext ctx{model_, hardware_, stack, calibration_, workload_, p, cluster_, ops,
                        parameters_per_device(model_, p), expert_parameters_per_device(model_, p),
                        attention_speedup_};

  const LayerCompute layer = layer_compute(ctx);
  const EdgeCompute edge = edge_compute(ctx);
  const TensorParallelTime tp = tensor_parallel(ctx, layer);
  const ContextParallelTime cp = context_parallel(ctx, layer);
  const ExpertParallelTime ep = expert_parallel(ctx, layer);

  // Per micro-batch: one model chunk, and the busiest rank (the first, with the
  // embedding, the last, with the head, both when there is no pipeline, or a
  // middle one where the edges take a layer's slot and weigh less than it).
  // Uneven stages are timed as if every stage held the busiest one's layers.
  const double layers_per_chunk = spec::chunk_layers(model_.layers, p);
  const double layer_fwd = layer.forward_s() + tp.forward_s + cp.forward_s + ep.forward_s;
  const double layer_bwd = layer.backward_s() + tp.backward_s + tp.recompute_s + cp.backward_s + cp.recompute_s +
                           ep.backward_s + ep.recompute_s;
  const double edge_slot = spec::edge_slots_active(p) ? 1.0 : 0.0;  // the layer an edge's slot displaces
  const double first_fwd = edge.embedding_forward_s + tp.embedding_s - edge_slot * layer_fwd;
  const double first_bwd = edge.embedding_backward_s - edge_slot * layer_bwd;
  const double last_fwd = edge.head_forward_s + tp.head_s - edge_slot * layer_fwd;
  const double last_bwd = edge.head_backward_s + tp.head_s - edge_slot * layer_bwd;
  const PipelineStep pipe = pipeline_step(ctx, layers_per_chunk * layer_fwd, layers_per_chunk * layer_bwd, first_fwd,
                                          first_bwd, last_fwd, last_bwd, method);
  // Each edge rank's work beyond a middle rank's (negative where its slot's layer outweighs the edge).
  const double first_extra = first_fwd + first_bwd, last_extra = last_fwd + last_bwd;
  const int busiest_rank = heaviest_rank(p, [&](int rank) {
    return rank == 0 ? first_extra : rank == p.pp - 1 ? last_extra : 0.0;
  });
  const double rank_layers = spec::stage_layers(model_.layers, p, busiest_rank);
  // Edge work of the busiest rank: compute, then the TP collectives around it.
  const bool has_first = p.pp == 1 || busiest_rank == 0, has_last = p.pp == 1 || busiest_rank == p.pp - 1;
  const double extra_fwd = (has_first ? edge.embedding_forward_s : 0) + (has_last ? edge.head_forward_s : 0);
  const double extra_bwd = (has_first ? edge.embedding_backward_s : 0) + (has_last ? edge.head_backward_s : 0);
  const double extra_tp = (has_first ? tp.embedding_s : 0) + (has_last ? 2 * tp.head_s : 0);
  const double rank_fwd_mb = rank_layers * layer_fwd + extra_fwd;
  const double rank_bwd_mb = rank_layers * layer_bwd + extra_bwd;
  const DataParallelTime dp = data_parallel(ctx, rank_fwd_mb, rank_bwd_mb, rank_layers);

  const double mb = p.grad_accum;
  Estimate& est = result.estimate;
  StepBreakdown& tb = est.time;
  tb.forward_compute_s = mb * (rank_layers * layer.forward_s() + extra_fwd);
  tb.backward_compute_s = mb * (rank_layers * layer.backward_s() + extra_bwd);
  tb.recompute_s = mb * rank_layers * layer.recompute_s;
  tb.memory_bound_s = mb * rank_layers * (layer.memory_forward_s + layer.memory_backward_s);
  tb.tp_comm_exposed_s = mb * (rank_layers * (tp.forward_s + tp.backward_s + tp.recompute_s) + extra_tp);
  tb.cp_comm_exposed_s = mb * rank_layers * (cp.forward_s + cp.backward_s + cp.recompute_s);
  tb.ep_comm_exposed_s = mb * rank_layers * (ep.forward_s + ep.backward_s + ep.recompute_s);
  const double busiest_rank_s = tb.forward_compute_s + tb.backward_compute_s + tb.tp_comm_exposed_s +
                                tb.cp_comm_exposed_s + tb.ep_comm_exposed_s;
  tb.pp_comm_exposed_s = pipe.p2p_exposed_s;
  tb.pipeline_bubble_s = std::max(0.0, pipe.total_s - pipe.p2p_exposed_s - busiest_rank_s);
  tb.dp_comm_total_s = dp.total_s;
  tb.dp_comm_exposed_s = dp.exposed_s;
  tb.grad_accumulation_s = grad_accumulation_s(ctx);
  tb.optimizer_s = optimizer_s(ctx);
  // The device work the host's recording overlaps: each micro-batch's compute and
  // the collectives inside it on the busiest rank (pipeline waits are idle either way).
  tb.host_tracing_exposed_s = host_tracing_exposed_s(ctx, rank_layers, mb, busiest_rank_s);
  tb.sync_launch_gaps_s = sync_launch_gaps_s(ctx, busiest_rank_s);
  tb.overhead_s = overhead_s(ctx);
  tb.step_s = sum_of_step_parts(tb);

  est.devices = p.instances * hardware_.devices_per_instance();
  est.micro_batches = p.grad_accum;
  const double tokens_per_step = workload_.tokens_per_step();
  est.model_flops_per_step = model_flops(model_, tokens_per_step, workload_.seq_len);
  est.total_parameters = double(model_.total_parameters());
  est.active_parameters = double(model_.active_parameters());
  est.hardware_flops_per_step = hardware_flops(model_, tokens_per_step, workload_.seq_len, p.recompute,
                                                ctx.full_recompute_share());
  est.seqs_per_s = double(workload_.global_batch_seqs) / tb.step_s;
  est.tokens_per_s = est.seqs_per_s * workload_.seq_len;
  est.tokens_per_s_per_device = est.tokens_per_s / est.devices;
  const double cluster_peak = ctx.peak_flops_per_s() * est.devices;
  est.mfu = est.model_flops_per_step / tb.step_s / cluster_peak;
  est.hfu = est.hardware_flops_per_step / tb.step_s / cluster_peak;
  est.time_to_train_s = workload_.tokens_to_train > 0 ? workload_.tokens_to_train / est.tokens_per_s : 0;

  est.memory = memory_per_device(model_, hardware_, stack, workload_, p);
  if (!est.memory.fits) result.problem = PlanProblem::out_of_memory;
  return result;
}

Evaluation evaluate(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
                    const spec::Calibration& calibration, const spec::Workload& workload, const spec::Plan& plan,
                    PipelineMethod method) {
  return Evaluator(model, hardware, stack, calibration, workload).evaluate(plan, method);
}

}  // namespace trainplan::cost
