#include "cost/data_parallel.h"

#include <gtest/gtest.h>

#include "spec/load.h"
#include "step_fixture.h"

namespace trainplan::cost {
namespace {

// Llama 2 7B, TP 8, ZeRO 0 on 4 p5 instances: DP 4 all-reduces FP32 gradients.
testing::StepFixture dp4(double bucket_bytes, bool overlap) {
  spec::Plan p;
  p.instances = 4;
  p.tp = 8;
  p.zero = 0;
  p.overlap_dp_comm = overlap;
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 64, spec::Precision::mixed_bf16, p);
  f.stack.communication.dp_bucket_bytes = bucket_bytes;
  return f;
}

TEST(DataParallel, WithoutOverlapEverythingIsExposed) {
  auto f = dp4(0, false);
  const DataParallelTime t = data_parallel(f.context(), 1.0, 2.0, 32);
  EXPECT_GT(t.total_s, 0);
  EXPECT_DOUBLE_EQ(t.exposed_s, t.total_s);
}

// The last bucket is reduced after the last backward ends: with a backward far
// longer than the reduction, exactly that bucket's share stays exposed. The
// gradients are 6,738,415,616 / 8 x 4 bytes = 3.37 GB per device; a 337 MB
// bucket is a tenth of them.
TEST(DataParallel, TheLastBucketCannotHide) {
  const double grad_bytes = 6738415616.0 / 8 * 4;
  auto f = dp4(grad_bytes / 10, true);
  const DataParallelTime t = data_parallel(f.context(), 100.0, 100.0, 32);
  EXPECT_NEAR(t.exposed_s, t.total_s / 10, 1e-12);
  // No bucket size (FSDP units): one layer's share of the 32 on the rank.
  auto g = dp4(0, true);
  const DataParallelTime u = data_parallel(g.context(), 100.0, 100.0, 32);
  EXPECT_NEAR(u.exposed_s, u.total_s / 32, 1e-12);
  // A backward shorter than the reduction leaves the difference exposed.
  const DataParallelTime short_backward = data_parallel(f.context(), 0.0, t.total_s / 2, 32);
  EXPECT_NEAR(short_backward.exposed_s, t.total_s / 2, 1e-12);
}

TEST(DataParallel, StackWithoutOverlapExposesItEvenWhenThePlanAsks) {
  auto f = dp4(0, true);
  f.stack.communication.overlap_dp_grad_reduce = false;
  const DataParallelTime t = data_parallel(f.context(), 100.0, 100.0, 32);
  EXPECT_DOUBLE_EQ(t.exposed_s, t.total_s);
}

// ZeRO-3 without parameter prefetch but with overlap_comm (optimum-habana's CI
// ZeRO-3 config on HPU: stacks/optimum-habana.json by_zero_stage "3"): each
// module's all-gather blocks its forward and its backward, while the gradients
// reduce-scatter on their own stream behind the backward, all but the last
// bucket. ZeRO-2's reduction and gather are the same collectives once, so
// gather = ZeRO-3 per micro-batch - ZeRO-2 and reduce = 2 ZeRO-2 - ZeRO-3.
TEST(DataParallel, ZeroThreeHidesItsReductionWithoutPrefetch) {
  const double grad_bytes = 6738415616.0 / 8 * 4;
  auto z3 = dp4(grad_bytes / 10, true);
  z3.plan.zero = 3;
  z3.stack.communication.overlap_dp_grad_reduce = true;
  z3.stack.communication.overlap_dp_param_gather = false;
  auto z2 = dp4(grad_bytes / 10, false);
  z2.plan.zero = 2;
  const double mb = z3.context().micro_batches();
  const double both = data_parallel(z2.context(), 1, 1, 32).total_s;
  const DataParallelTime t = data_parallel(z3.context(), 100.0, 100.0, 32);
  const double gather = t.total_s / mb - both, reduce = 2 * both - t.total_s / mb;
  ASSERT_GT(gather, 0);
  ASSERT_GT(reduce, 0);
  EXPECT_NEAR(t.exposed_s, mb * (2 * gather + reduce / 10), 1e-9 * t.total_s);
  // A backward shorter than the reduction hides none of what exceeds it.
  EXPECT_NEAR(data_parallel(z3.context(), 100.0, 0.0, 32).exposed_s, t.total_s, 1e-9 * t.total_s);
  // Without overlap_comm the reduction waits for nothing: all exposed.
  z3.stack.communication.overlap_dp_grad_reduce = false;
  EXPECT_DOUBLE_EQ(data_parallel(z3.context(), 100.0, 100.0, 32).exposed_s, t.total_s);
  // Prefetched gathers with a blocking reduction: the gathers hide (all but the
  // last bucket's share, forward and backward), the reduction does not.
  z3.stack.communication.overlap_dp_param_gather = true;
  EXPECT_NEAR(data_parallel(z3.context(), 100.0, 100.0, 32).exposed_s, mb * (2 * gather / 10 + reduce),
              1e-9 * t.total_s);
}

// DeepSpeed ZeRO-1/2 with "reduce_scatter": false all-reduce each bucket and keep
// their shard (HabanaAI/DeepSpeed@ad4a2d0f stage_1_and_2.py:1056-1058, :977-999):
// the same reduction costs what ZeRO 0's all-reduce costs, and the gather of the
// updated shards comes on top. A bandwidth-bound all-reduce moves twice a
// reduce-scatter's bytes (2 (P-1)/P against (P-1)/P per rank).
TEST(DataParallel, ZeroReducedByAllReduceCostsWhatZeroZeroDoes) {
  auto zero0 = dp4(0, false);
  auto scatter = dp4(0, false);
  scatter.plan.zero = 2;
  auto all_reduce = dp4(0, false);
  all_reduce.plan.zero = 2;
  all_reduce.stack.communication.zero_grad_reduce_all_reduce = true;
  const double ar = data_parallel(zero0.context(), 1, 1, 32).total_s;
  const double z2_scatter = data_parallel(scatter.context(), 1, 1, 32).total_s;
  const double z2_all_reduce = data_parallel(all_reduce.context(), 1, 1, 32).total_s;
  // Both ZeRO-2 plans gather the same updated shards: what the all-reduce one
  // adds to ZeRO 0 is that gather, and the reduce-scatter is the rest of the other.
  const double gather = z2_all_reduce - ar;
  const double reduce_scatter = z2_scatter - gather;
  EXPECT_GT(gather, 0);
  EXPECT_GT(reduce_scatter, 0);
  EXPECT_GT(ar, 1.8 * reduce_scatter);
  EXPECT_LT(ar, 2.2 * reduce_scatter);
}

// DeepSpeed's ZeRO-2 reduces in every micro-batch's backward and FSDP's SHARD_GRAD_OP
// also re-gathers for every forward (stacks/*.json by_zero_stage "2",
// dp_grad_reduce_every_micro_batch, dp_param_gather_every_micro_batch): at DP 4
// and global batch 64 a step runs 16 micro-batches, so the reduction is paid 16
// times where the stack does it per micro-batch, and with both the whole ZeRO-2
// cost is. Overlapped, each micro-batch leaves its last bucket exposed.
TEST(DataParallel, ZeroTwoReducingEveryMicroBatchPaysItPerMicroBatch) {
  auto once = dp4(0, false);
  once.plan.zero = 2;
  auto every = once;
  every.stack.communication.dp_grad_reduce_every_micro_batch = true;
  auto both = every;
  both.stack.communication.dp_param_gather_every_micro_batch = true;
  ASSERT_EQ(once.context().micro_batches(), 16);
  const double a = data_parallel(once.context(), 1, 1, 32).total_s;
  const double b = data_parallel(every.context(), 1, 1, 32).total_s;
  const double c = data_parallel(both.context(), 1, 1, 32).total_s;
  const double reduce = (b - a) / 15, gather = a - reduce;
  EXPECT_GT(reduce, 0);
  EXPECT_GT(gather, 0);
  EXPECT_NEAR(c, 16 * a, 1e-9 * c);
  EXPECT_DOUBLE_EQ(data_parallel(every.context(), 1, 1, 32).exposed_s, b);  // no overlap asked: all exposed

  auto hidden = dp4(0, true);  // no bucket size: one layer's share (1/32) of each reduction stays out
  hidden.plan.zero = 2;
  hidden.stack.communication.dp_grad_reduce_every_micro_batch = true;
  hidden.stack.communication.dp_param_gather_every_micro_batch = true;
  const DataParallelTime t = data_parallel(hidden.context(), 100.0, 100.0, 32);
  EXPECT_NEAR(t.total_s, c, 1e-9 * c);
  EXPECT_NEAR(t.exposed_s, 16 * (reduce + gather) / 32, 1e-9 * c);
}

// microsoft Megatron-DeepSpeed without the pipeline engine at ZeRO 2 (stacks/megatron-deepspeed-ms-nopipe.json
// by_zero_stage "2", DeepSpeed 0.16.2's stage_1_and_2.py): each of the 16 micro-batches all-reduces its
// FP16 gradients (allreduce_and_scatter), the same collective as the stack's ZeRO 0 once a step, and the
// step all-gathers the updated partitions once; without overlap_comm (the plan's DP overlap off) on the
// compute stream, so all of it is exposed; with it on a side stream, partly hidden.
TEST(DataParallel, MicrosoftDeepSpeedZeroTwoAllReducesEveryMicroBatchUnhidden) {
  const spec::Stack nopipe = spec::load_stack("megatron-deepspeed-ms-nopipe");
  auto z0 = dp4(0, false);
  z0.stack = spec::at_zero_stage(nopipe, 0);
  auto z2 = dp4(0, false);
  z2.plan.zero = 2;
  z2.stack = spec::at_zero_stage(nopipe, 2);
  auto z2_once = z2;  // the same, reducing once a step: the all-reduce and the gather
  z2_once.stack.communication.dp_grad_reduce_every_micro_batch = false;
  ASSERT_EQ(z2.context().micro_batches(), 16);
  const double all_reduce = data_parallel(z0.context(), 100, 100, 32).total_s;
  const double gather = data_parallel(z2_once.context(), 100, 100, 32).total_s - all_reduce;
  EXPECT_GT(gather, 0);
  const DataParallelTime t = data_parallel(z2.context(), 100, 100, 32);
  EXPECT_NEAR(t.total_s, 16 * all_reduce + gather, 1e-9 * t.total_s);
  EXPECT_DOUBLE_EQ(t.exposed_s, t.total_s);
  auto overlapped = z2;
  overlapped.plan.overlap_dp_comm = true;
  const DataParallelTime hidden = data_parallel(overlapped.context(), 100, 100, 32);
  EXPECT_NEAR(hidden.total_s, t.total_s, 1e-9 * t.total_s);
  EXPECT_LT(hidden.exposed_s, t.exposed_s);
}

// DeepSpeed's BF16 optimizer accumulates in FP32 but all-reduces each flat bucket cast
// to BF16 (microsoft/DeepSpeed@v0.16.2 engine.py:2418-2424, communication_data_type
// :871-882): stack megatron-deepspeed-ms moves 2 bytes an element, as an all-reduce
// of the rank's parameters x 2 bytes over DP; at 4 bytes it would take longer.
TEST(DataParallel, DeepSpeedAllReducesTheFp32AccumulatorInBf16) {
  auto f = dp4(0, false);
  f.stack = spec::load_stack("megatron-deepspeed-ms");
  ASSERT_DOUBLE_EQ(f.stack.memory.main_grad_bytes, 4);
  const auto ctx = f.context();
  const double bf16 = ctx.cluster.seconds(net::Collective::all_reduce, ctx.params_per_device * 2, {ctx.dense_dp(), f.plan.tp},
                                          f.plan.instances, ctx.calibration.collective);
  const DataParallelTime t = data_parallel(ctx, 100, 100, 32);
  EXPECT_NEAR(t.total_s, bf16, 1e-12 * bf16);
  auto fp32 = f;
  fp32.stack.communication.dp_reduce_bytes = 0;  // reduced in the buffer's own FP32
  EXPECT_GT(data_parallel(fp32.context(), 100, 100, 32).total_s, 1.5 * bf16);
}

// BF16 gradients (NeMo's benchmark recipes, grad_reduce_in_fp32 false) halve the
// bytes, and the time where bandwidth dominates.
TEST(DataParallel, GradientDtypeSetsTheBytes) {
  auto fp32 = dp4(0, false);
  auto bf16 = dp4(0, false);
  bf16.stack.memory.main_grad_bytes = 2;
  const double a = data_parallel(fp32.context(), 1, 1, 32).total_s;
  const double b = data_parallel(bf16.context(), 1, 1, 32).total_s;
  EXPECT_LT(b, 0.55 * a);
  EXPECT_GT(b, 0.45 * a);
}

// FP8 parameters (spec::StackMemory::fp8_param_gather) are gathered as FP8: one byte
// for each layer parameter where BF16 sends two; the embedding and the head
// stay BF16. Llama 2 7B, TP 1: 32 x 202,383,360 layer parameters of
// 6,738,415,616 (tests/spec), so the gather sends 1 + 262,148,096 / 6,738,415,616
// = 1.0389 bytes per parameter.
TEST(DataParallel, Fp8ParametersAreGatheredInOneByte) {
  spec::Plan p;
  p.instances = 1;
  p.zero = 1;
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 64, spec::Precision::fp8, p);
  EXPECT_DOUBLE_EQ(f.context().gathered_parameter_bytes(), 2);
  f.stack.memory.fp8_param_gather = true;
  EXPECT_NEAR(f.context().gathered_parameter_bytes(), 1 + 262148096.0 / 6738415616.0, 1e-9);
  testing::StepFixture bf16("llama2-7b", "p5.48xlarge", 4096, 64, spec::Precision::mixed_bf16, p);
  bf16.stack.memory.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(bf16.context().gathered_parameter_bytes(), 2);
}

}  // namespace
}  // namespace trainplan::cost
