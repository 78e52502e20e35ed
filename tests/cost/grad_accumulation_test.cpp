#include "cost/grad_accumulation.h"

#include <gtest/gtest.h>

#include "step_fixture.h"

namespace trainplan::cost {
namespace {

spec::Plan tp8_plan() {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.micro_batch = 1;
  p.zero = 1;
  return p;
}

// Llama 2 7B on one p5 (8 H100), TP 8, DP 1, global batch 8 of micro-batch 1:
// 8 micro-batches. A separate pass reads the new BF16 gradient and reads and
// writes the FP32 accumulator (Megatron-LM@6985e589 megatron/model/distributed.py:
// 'param.main_grad.add_(param.grad.data)'): (2 + 2 x 4) bytes x 6,738,415,616 / 8
// parameters = 8.42 GB per later micro-batch, at 3350 GB/s x 0.7 (the assumed
// streaming share) = 3.593 ms; 7 of them: 25.15 ms.
TEST(GradAccumulation, SeparatePassStreamsTheAccumulatorPerLaterMicroBatch) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, tp8_plan());
  f.stack.compute.grad_accumulation = spec::GradAccumulation::separate_pass;
  const StepContext ctx = f.context();
  ASSERT_EQ(ctx.plan.grad_accum, 8);
  const double per_pass = (2 + 2 * 4) * 6738415616.0 / 8 / (3350e9 * 0.7);
  EXPECT_NEAR(grad_accumulation_s(ctx), 7 * per_pass, 1e-9);
  EXPECT_NEAR(grad_accumulation_s(ctx), 0.02515, 0.0001);
}

// Megatron-LM fuses accumulation into the weight-gradient GEMM
// (--gradient-accumulation-fusion, FP32 main grads): no pass at all.
TEST(GradAccumulation, FusedIntoWgradCostsNothing) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, tp8_plan());
  f.stack = spec::load_stack("megatron-lm");
  ASSERT_EQ(f.stack.compute.grad_accumulation, spec::GradAccumulation::fused_wgrad);
  EXPECT_EQ(grad_accumulation_s(f.context()), 0.0);
}

// Megatron-LM 2021 under --fp16 adds into the FP16 .grad itself: 3 x 2 bytes.
TEST(GradAccumulation, Fp16AccumulatorStreamsTwoBytesEachWay) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, tp8_plan());
  f.stack = spec::load_stack("megatron-lm-2021");
  ASSERT_EQ(f.stack.memory.main_grad_bytes, 2);
  const double per_pass = 3 * 2 * 6738415616.0 / 8 / (3350e9 * 0.7);
  EXPECT_NEAR(grad_accumulation_s(f.context()), 7 * per_pass, 1e-9);
}

TEST(GradAccumulation, OneMicroBatchHasNothingToAdd) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 1, spec::Precision::mixed_bf16, tp8_plan());
  EXPECT_EQ(grad_accumulation_s(f.context()), 0.0);
}

}  // namespace
}  // namespace trainplan::cost
