// Overhead: the fixed per-step cost outside compute and communication: the
// calibration's fitted per-step overhead (launch, sync, data loading on that
// accelerator) plus the stack's stated host overhead; and the host's recording
// of each micro-batch's graph under lazy tracing, and a synchronous launch's
// gaps, where the device waits for the host.
#pragma once
#include "cost/step_context.h"

namespace trainplan::cost {

double overhead_s(const StepContext& ctx);

// Under lazy tracing (StackCompute::lazy_tracing) the host records each of
// `micro_batches` graphs, Calibration::host_trace_s_per_layer per layer of the
// rank, while the device runs the previous one: what the host's time exceeds
// the rank's device work by (`device_s` over the step); all of the host's time
// where the loop waits for the device every micro-batch
// (StackCompute::host_waits_every_micro_batch). 0 for other stacks.
double host_tracing_exposed_s(const StepContext& ctx, double rank_layers, double micro_batches, double device_s);

// Where the runtime launches each graph synchronously (StackCompute::sync_launch_share
// s), the device idles while the host prepares the next graph, which an
// asynchronous launch hides behind the device's run of this one: s / (1 - s) of
// the rank's device work `device_s`. 0 for other stacks.
double sync_launch_gaps_s(const StepContext& ctx, double device_s);

}  // namespace trainplan::cost
