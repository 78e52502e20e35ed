// spec::optimizer_states reads a stack's master_weights_dtype and optimizer_state_dtype as bytes
// per parameter; describe names them as refusals and notes print them.
#include "spec/optimizer_states.h"

#include <gtest/gtest.h>

#include "spec/load.h"

namespace trainplan::spec {
namespace {

// stacks/*.json: Megatron-LM FP32 masters and moments; NeMo 24.07 FP32 masters as 16-bit
// remainders (Apex DistributedFusedAdam, optim.dtype fp32); neuronx-distributed BF16 weights
// beside FP32 moments; neuronx-nemo-megatron and torchtune BF16 moments without masters.
TEST(OptimizerStates, ReadsTheStacksDtypes) {
  EXPECT_EQ(optimizer_states(load_stack("megatron-lm").memory), kFp32Optimizer);
  EXPECT_EQ(optimizer_states(load_stack("nemo-24.07").memory), kMasterRemainders);
  EXPECT_EQ(optimizer_states(load_stack("neuronx-distributed").memory), kNoMastersFp32Moments);
  EXPECT_EQ(optimizer_states(load_stack("neuronx-nemo-megatron").memory), kBf16Optimizer);
  EXPECT_EQ(optimizer_states(load_stack("torchtune").memory), kBf16Optimizer);
}

TEST(OptimizerStates, DescribesMastersThenMoments) {
  EXPECT_EQ(describe(kFp32Optimizer), "FP32 master weights and FP32 Adam moments");
  EXPECT_EQ(describe(kBf16Optimizer), "no master weights and BF16 Adam moments");
  EXPECT_EQ(describe(kMasterRemainders), "FP32 master weights kept as 16-bit remainders and FP32 Adam moments");
  EXPECT_EQ(describe(kNoMastersFp32Moments), "no master weights and FP32 Adam moments");
}

}  // namespace
}  // namespace trainplan::spec
