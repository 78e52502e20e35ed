#include "cost/overhead.h"

#include <gtest/gtest.h>

#include "cost/evaluate.h"
#include "step_fixture.h"

namespace trainplan::cost {
namespace {

spec::Plan one_instance_dp() {
  spec::Plan p;
  p.instances = 1;
  p.micro_batch = 16;
  p.zero = 0;
  return p;
}

// Lazy tracing: the host records each micro-batch's graph, 5 ms per layer, while
// the device runs the previous one. BERT-Large (24 layers), 4 micro-batches:
// 4 x 24 x 5 ms = 480 ms of recording; against 300 ms of device work 180 ms are
// exposed, against 600 ms none.
TEST(Overhead, LazyTracingExposesWhatTheHostTakesBeyondTheDevice) {
  testing::StepFixture f("bert-large", "trn1.32xlarge", 128, 2048, spec::Precision::bf16_sr, one_instance_dp());
  f.stack.compute.lazy_tracing = true;
  f.calibration.host_trace_s_per_layer = 0.005;
  const StepContext ctx = f.context();
  EXPECT_NEAR(host_tracing_exposed_s(ctx, 24, 4, 0.300), 0.180, 1e-12);
  EXPECT_EQ(host_tracing_exposed_s(ctx, 24, 4, 0.600), 0.0);
  f.stack.compute.lazy_tracing = false;  // a stack that replays a captured graph (CUDA, HPU graphs) records nothing per step
  EXPECT_EQ(host_tracing_exposed_s(f.context(), 24, 4, 0.300), 0.0);
}

// A loop that waits for the device every micro-step (HabanaAI/Model-References@6450b9cb
// PyTorch/nlp/bert/pretraining/run_pretraining.py:731-732 torch.distributed.barrier()
// and :779 loss.item() each micro-batch): the host records micro-batch k + 1 only
// after the device has run k, so all 4 x 24 x 5 ms = 480 ms add to the step,
// however long the device work; with nothing recorded, nothing is added.
TEST(Overhead, AHostThatWaitsEveryMicroBatchExposesAllItsRecording) {
  testing::StepFixture f("bert-large", "dl1.24xlarge", 128, 2048, spec::Precision::mixed_bf16, one_instance_dp());
  f.stack.compute.lazy_tracing = true;
  f.stack.compute.host_waits_every_micro_batch = true;
  f.calibration.host_trace_s_per_layer = 0.005;
  EXPECT_NEAR(host_tracing_exposed_s(f.context(), 24, 4, 0.300), 0.480, 1e-12);
  EXPECT_NEAR(host_tracing_exposed_s(f.context(), 24, 4, 0.600), 0.480, 1e-12);
  f.stack.compute.lazy_tracing = false;
  EXPECT_EQ(host_tracing_exposed_s(f.context(), 24, 4, 0.300), 0.0);
}

// A synchronous launch (stack sync_launch_share 0.12, the Neuron runtime's
// figure for what asynchronous execution saves in training): the device-bound
// time is 88% of the step, so 300 ms of device work adds 300 x 0.12 / 0.88 ms
// of launch gaps, on top of what the host's recording exposes; with no lazy
// tracing the gaps remain.
TEST(Overhead, SynchronousLaunchAddsBackWhatAsynchronousExecutionSaves) {
  testing::StepFixture f("bert-large", "trn1.32xlarge", 128, 2048, spec::Precision::bf16_sr, one_instance_dp());
  f.stack.compute.lazy_tracing = true;
  f.stack.compute.sync_launch_share = 0.12;
  f.calibration.host_trace_s_per_layer = 0.005;
  const double gaps_s = 0.300 * 0.12 / 0.88;
  const auto waits_s = [&](double device_s) {
    return host_tracing_exposed_s(f.context(), 24, 4, device_s) + sync_launch_gaps_s(f.context(), device_s);
  };
  EXPECT_NEAR(waits_s(0.300), 0.180 + gaps_s, 1e-12);
  EXPECT_NEAR(waits_s(0.600), 2 * gaps_s, 1e-12);
  f.stack.compute.lazy_tracing = false;
  EXPECT_NEAR(waits_s(0.300), gaps_s, 1e-12);
}

// In the step: a device-light micro-batch (one sequence of 128 tokens per
// NeuronCore) waits for the host, and the part is one of the step's parts.
TEST(Overhead, LazyTracingIsAPartOfTheStepWhereTheHostIsSlower) {
  spec::Plan p = one_instance_dp();
  p.micro_batch = 1;
  testing::StepFixture f("bert-large", "trn1.32xlarge", 128, 64, spec::Precision::bf16_sr, p);
  f.stack.compute.lazy_tracing = true;
  f.calibration.host_trace_s_per_layer = 0.005;
  const Evaluation e = evaluate(f.model, f.hardware, f.stack, f.calibration, f.workload, f.plan);
  ASSERT_TRUE(e.ok()) << to_string(e.problem);
  const StepBreakdown& t = e.estimate.time;
  const double device_s = t.forward_compute_s + t.backward_compute_s + t.tp_comm_exposed_s;
  ASSERT_LT(device_s, 2 * 24 * 0.005);  // 2 micro-batches of 24 layers on the host
  EXPECT_NEAR(t.host_tracing_exposed_s, 2 * 24 * 0.005 - device_s, 1e-9);
  EXPECT_NEAR(t.step_s, sum_of_step_parts(t), 1e-12);
}

// The launch gaps are their own part of the step, beside the host's recording:
// with no lazy tracing, 0.12 / 0.88 of the rank's device work and nothing traced.
TEST(Overhead, SynchronousLaunchGapsAreTheirOwnPartOfTheStep) {
  testing::StepFixture f("bert-large", "trn1.32xlarge", 128, 2048, spec::Precision::bf16_sr, one_instance_dp());
  f.stack.compute.lazy_tracing = false;
  f.stack.compute.sync_launch_share = 0.12;
  const Evaluation e = evaluate(f.model, f.hardware, f.stack, f.calibration, f.workload, f.plan);
  ASSERT_TRUE(e.ok()) << to_string(e.problem);
  const StepBreakdown& t = e.estimate.time;
  const double device_s = t.forward_compute_s + t.backward_compute_s + t.tp_comm_exposed_s;
  EXPECT_EQ(t.host_tracing_exposed_s, 0.0);
  EXPECT_NEAR(t.sync_launch_gaps_s, device_s * 0.12 / 0.88, 1e-12);
  EXPECT_NEAR(t.step_s, sum_of_step_parts(t), 1e-12);
}

}  // namespace
}  // namespace trainplan::cost
