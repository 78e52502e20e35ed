#include "cost/pipeline_step.h"

#include <algorithm>
#include <array>
#include <vector>

namespace trainplan::cost {

PipelineStep pipeline_step(const StepContext& ctx, double chunk_forward_s, double chunk_backward_s,
                           double first_forward_extra_s, double first_backward_extra_s, double last_forward_extra_s,
                           double last_backward_extra_s, PipelineMethod method) {
  const spec::Plan& p = ctx.plan;
  const int chunks = p.pp * p.virtual_stages;
  constexpr int stack_chunks = 512;  // plans up to this many chunks allocate nothing
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
  // Where the stack cuts a graph at each hand-off, its fixed cost
  // (spec::Calibration::pipeline_microbatch_overhead_s) holds the chunk, so it
  // rides the schedule like compute; counted below with the exposed p2p.
  const double handoff_s = p.pp > 1 && ctx.stack.communication.pipeline_graph_cut_per_micro_batch
                               ? ctx.calibration.pipeline_microbatch_overhead_s
                               : 0.0;
  std::fill(fwd, fwd + chunks, chunk_forward_s);
  std::fill(bwd, bwd + chunks, chunk_backward_s);
  fwd[0] += first_forward_extra_s;  // rank 0, chunk 0
  bwd[0] += first_backward_extra_s;
  fwd[chunks - 1] += last_forward_extra_s;  // last rank, last chunk
  bwd[chunks - 1] += last_backward_extra_s;

  PipelineInput pipe;
  pipe.stages = p.pp;
  pipe.micro_batches = p.grad_accum;
  pipe.virtual_stages = p.virtual_stages;
  pipe.forward_s = {fwd, size_t(chunks)};
  pipe.backward_s = {bwd, size_t(chunks)};
  pipe.blocking_p2p = p.virtual_stages > 1 ? ctx.stack.communication.pipeline_p2p_blocking_interleaved
                                           : ctx.stack.communication.pipeline_p2p_blocking_1f1b;
  // The split between bubble and exposed p2p comes from the closed form, which
  // is exact for it on uniform stages, so the DAG path runs once.
  PipelineStep step;
  if (2L * chunks * p.grad_accum > kMaxDagTasks) method = PipelineMethod::closed_form;
  if (p.pp == 1) {  // one stage: no p2p, and the schedule is the micro-batches in a row
    step.total_s = method == PipelineMethod::dag ? pipeline_time_dag(pipe).total_s
                                                 : pipeline_time_closed_form(pipe).total_s;
    return step;
  }
  const PipelineTime without_p2p = pipeline_time_closed_form(pipe);
  if (handoff_s > 0)
    for (int i = 0; i < chunks; ++i) fwd[i] += handoff_s, bwd[i] += handoff_s;
  const double p2p_bytes = ctx.tokens() * ctx.model.hidden * ctx.element_bytes() / p.tp;  // scattered across TP
  pipe.p2p_s = ctx.cluster.seconds(net::Collective::point_to_point, p2p_bytes, {p.pp, p.tp * p.cp * p.dp}, p.instances,
                                   ctx.calibration.collective);
  const PipelineTime closed = pipeline_time_closed_form(pipe);
  step.total_s = method == PipelineMethod::dag ? pipeline_time_dag(pipe).total_s : closed.total_s;
  step.p2p_exposed_s = std::clamp(closed.total_s - without_p2p.total_s, 0.0, step.total_s);
  return step;
}

}  // namespace trainplan::cost
