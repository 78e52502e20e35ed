// Pipeline schedules (1F1B, and interleaved 1F1B with v virtual chunks per
// rank) as a task DAG in Boost.Graph; the step's pipeline time is the DAG's
// critical path. A closed form beside it serves the search, tested against it.
//
// What Megatron-Core's interleaved schedule does that this DAG does not price
// (issue 40.2; NVIDIA/Megatron-LM@baf94af3, core_r0.8.0, the line NeMo 24.07 runs):
//  - overlap_p2p_comm False (ModelParallelConfig default, model_parallel_config.py:218,
//    with batch_p2p_comm and batch_p2p_sync True, :223-231): every warm-up forward,
//    every steady-state F+B pair and every cool-down backward ends in a blocking
//    batch_isend_irecv, req.wait() and torch.cuda.synchronize()
//    (p2p_communication.py:349-371; schedules.py:853-879, 1017-1085, 1105-1119), so
//    about one p2p time per chunk per micro-batch is exposed. Priced where the
//    stack's "pipeline_p2p" says so (PipelineInput::blocking_p2p below); the
//    non-interleaved 1F1B blocks the same way whatever overlap_p2p_comm says
//    (schedules.py:1396-1500 call _communicate with wait_on_reqs True).
//    Otherwise every p2p is asynchronous and only fill and drain expose it.
//  - overlap_p2p_comm True (NeMo-Framework-Launcher@8325688d gpt3/175b.yaml:108-109,
//    llama2_70b.yaml:140-141): isend/irecv are waited on before the next forward or
//    backward (schedules.py:931-934, 981-983), including the wait on the send, which
//    completes only when the receiver posts its recv after its own next forward; on
//    uniform stages that binds no later than the data arcs here. NeMo's docs say the
//    fill and flush p2p stay exposed (NVIDIA/NeMo@8e3d65dc
//    docs/source/features/optimizations/communication_overlap.rst:42-46).
//  - FP8 delayed scaling: each chunk's forward exits its own fp8_autocast
//    (transformer_block.py@baf94af3:372-396) and Transformer Engine then all-reduces
//    the amaxes over TP x DP x CP, blocking (TransformerEngine@3ec998e9, v1.8,
//    fp8.py:305-313, 419-426); the backward does once more per chunk (module/linear.py:612-613).
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
  // The stack's p2p exchange holds the rank until it completes (Megatron-Core's
  // batched send/recv with torch.cuda.synchronize, DeepSpeed's dist.send,
  // torch.distributed.pipelining's waited batch_isend_irecv), so the rank's next
  // task starts p2p_s after the exchange that follows its last one. Which tasks
  // end in an exchange: 1F1B, every forward on a rank that sends it on (not the
  // last) and every backward on a rank that sends its gradient back (not the
  // first); interleaved, every warm-up forward, every steady-state forward +
  // backward pair (after the backward) and every cool-down backward
  // (NVIDIA/Megatron-LM@baf94af3 schedules.py:853-879, 1017-1085, 1105-1119 with
  // overlap_p2p_comm False; 1F1B schedules.py:1396, 1446, 1474, 1500, whose
  // _communicate waits and synchronizes, p2p_communication.py:349-371).
  // false: sends are asynchronous and only the data dependencies carry p2p_s.
  bool blocking_p2p = false;
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
