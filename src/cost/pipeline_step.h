// Pipeline: the step's critical path through the 1F1B or interleaved schedule,
// from per-chunk forward and backward times (embedding on the first chunk, the
// head on the last), the p2p send between stages and the fixed hand-off cost of
// each micro-batch at each chunk (the calibration's); split into the bubble and
// the exposed p2p time (hand-offs included). The DAG or the closed form (cost/pipeline.h) times it;
// a schedule of more than kMaxDagTasks tasks is timed by the closed form,
// exact on uniform stages, so no plan builds an unbounded graph.
#pragma once
#include "cost/pipeline.h"
#include "cost/step_context.h"

namespace trainplan::cost {

enum class PipelineMethod { closed_form, dag };

inline constexpr long kMaxDagTasks = 1L << 21;  // forward and backward tasks of one step

struct PipelineStep {
  double total_s = 0;        // first forward to last backward, p2p included
  double p2p_exposed_s = 0;  // the part of total_s that p2p and each micro-batch's hand-off add
};

// chunk_*_s: one micro-batch through one uniform model chunk; the edges are
// added to the first and last chunk.
PipelineStep pipeline_step(const StepContext& ctx, double chunk_forward_s, double chunk_backward_s,
                           double first_forward_extra_s, double first_backward_extra_s, double last_forward_extra_s,
                           double last_backward_extra_s, PipelineMethod method);

}  // namespace trainplan::cost
