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
