// Pipeline schedules (1F1B, and interleaved 1F1B with v virtual chunks per
// rank) as a task DAG in Boost.Graph; the step's pipeline time is the DAG's
// critical path. A closed form beside it serves the search, tested against it.
#pragma once
#include <span>

namespace trainplan::cost {

struct PipelineInput {
  int stages = 1;          // pipeline ranks (PP)
  int micro_batches = 1;   // per step per DP replica
  int virtual_stages = 1;  // model chunks per rank (interleaved when > 1)
  // Time of one micro-batch through one model chunk, indexed
  // [rank * virtual_stages + chunk]; chunk c of rank r holds layers of
  // virtual stage c * stages + r, as Megatron interleaves them.
  // Spans, so the closed form allocates nothing; the caller owns the storage.
  std::span<const double> forward_s;
  std::span<const double> backward_s;
  double p2p_s = 0;  // one activation (or gradient) send between adjacent stages
};

struct PipelineTime {
  double total_s = 0;   // first forward start to last backward end
  double busy_s = 0;    // compute on the busiest rank
  double bubble_s = 0;  // total_s - busy_s
};

// Each throws spec::SpecError on a malformed input (see check_pipeline_input).
// The DAG's longest path; past 512 micro-batches it is timed at two counts a
// period of `stages` micro-batches apart and extended along that line (the
// schedule repeats with the same times after its warm-up).
PipelineTime pipeline_time_dag(const PipelineInput& input);
// The same with every task in the graph however many micro-batches (the
// reference pipeline_time_dag's extension past 512 micro-batches is tested against).
PipelineTime pipeline_time_dag_every_task(const PipelineInput& input);
// Allocation-free, O(stages * virtual_stages). Exact for uniform stages; a lower
// bound on the DAG otherwise (every term is the length of a DAG path); the
// error bound measured on random stages is stated in pipeline_closed_form.cpp.
PipelineTime pipeline_time_closed_form(const PipelineInput& input);

// Throws unless stages, micro_batches, virtual_stages >= 1, both spans hold
// stages * virtual_stages non-negative times, p2p_s >= 0, and (interleaved)
// micro_batches % stages == 0.
void check_pipeline_input(const PipelineInput& input);

}  // namespace trainplan::cost
