#include "cost/optimizer.h"

#include <gtest/gtest.h>

#include "step_fixture.h"

namespace trainplan::cost {
namespace {

// Bytes through HBM per updated parameter for one Adam step: FP32 master and
// two moments read and written, the gradient read, the BF16 copy written.
TEST(Optimizer, BytesPerParameterFollowTheStackDtypes) {
  const spec::Stack megatron;  // FP32 master, FP32 grads, FP32 moments
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(megatron, spec::Precision::mixed_bf16), 2 * (4 + 8) + 4 + 2);
  // Pure BF16 with stochastic rounding: the weights themselves and BF16 moments.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(megatron, spec::Precision::bf16_sr), 2 * (2 + 4) + 2);
  spec::Stack lean;  // BF16 moments and gradients (NeMo's optimizer-dtype options)
  lean.memory.optimizer_state_bytes = 4;
  lean.memory.main_grad_bytes = 2;
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(lean, spec::Precision::mixed_bf16), 2 * (4 + 4) + 2 + 2);
}

// DeepSpeed's BF16 optimizer over a BF16 accumulator (stacks/megatron-deepspeed-ms-bf16-accum.json):
// the step casts the gradient partition to FP32 (read 2, write 4) and Adam reads the copy (4), then
// master and moments are read and written and the BF16 weights written: 2 x (4 + 8) + 2 + 4 + 4 + 2 = 36
// bytes per parameter of the shard, against 30 over megatron-deepspeed-ms's FP32 accumulator.
TEST(Optimizer, Bf16AccumulatorIsCastToFp32BeforeAdamReadsIt) {
  const spec::Stack bf16_accum = spec::load_stack("megatron-deepspeed-ms-bf16-accum");
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(bf16_accum, spec::Precision::mixed_bf16), 2 * (4 + 8) + 2 + 4 + 4 + 2);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(spec::load_stack("megatron-deepspeed-ms"), spec::Precision::mixed_bf16),
                   2 * (4 + 8) + 4 + 2);
  // FP32 training keeps no accumulator apart from its FP32 gradients: no cast.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(bf16_accum, spec::Precision::fp32), 2 * (4 + 8) + 4);
}

// Under a distributed optimizer (ZeRO-1) each of the DP ranks updates 1/DP of
// the parameters: Llama 2 7B, TP 8 on 4 p5 (DP 4) takes a quarter of DP 1's
// step. DP 1: 6,738,415,616 / 8 x 30 bytes / (3350 GB/s x 0.7) = 10.78 ms.
TEST(Optimizer, DistributedOptimizerUpdatesItsShardOnly) {
  spec::Plan p;
  p.tp = 8;
  p.zero = 1;
  p.instances = 1;
  testing::StepFixture one("llama2-7b", "p5.48xlarge", 4096, 64, spec::Precision::mixed_bf16, p);
  p.instances = 4;
  testing::StepFixture four("llama2-7b", "p5.48xlarge", 4096, 64, spec::Precision::mixed_bf16, p);
  const double dp1 = optimizer_s(one.context());
  EXPECT_NEAR(dp1, 6738415616.0 / 8 * 30 / (3350e9 * 0.7), 1e-9);
  EXPECT_NEAR(optimizer_s(four.context()), dp1 / 4, 1e-12);
}

}  // namespace
}  // namespace trainplan::cost
