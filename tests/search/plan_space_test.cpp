#include "search/plan_space.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::search {
namespace {

spec::Workload workload() { return {4096, 1024, 1e12, spec::Precision::bf16_sr}; }

auto key(const spec::Plan& p) {
  return std::make_tuple(p.instances, p.tp, p.pp, p.sp, p.virtual_stages, p.micro_batch, p.zero, int(p.recompute),
                         p.overlap_dp_comm, p.overlap_tp_comm);
}

TEST(PlanSpace, EveryIndexIsADistinctPlanRespectingHeadsAndLayers) {
  const auto model = spec::load_model("llama2-7b");  // 32 heads, 32 layers
  const auto hw = spec::load_hardware("trn1.32xlarge");  // 32 devices per instance
  SpaceConstraints c;
  c.instances = {1, 4};
  const PlanSpace space(model, hw, spec::Stack{}, workload(), c);
  std::set<decltype(key(spec::Plan{}))> seen;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const spec::Plan p = space.at(i);
    EXPECT_EQ(model.heads % p.tp, 0);
    EXPECT_EQ(32 % p.tp, 0);
    EXPECT_EQ(model.layers % (p.pp * p.virtual_stages), 0);
    EXPECT_FALSE(p.sp && p.tp == 1);
    EXPECT_TRUE(seen.insert(key(p)).second) << "duplicate at " << i;
  }
  EXPECT_EQ(seen.size(), space.size());
}

// Edge layer slots open the splits of layers + 2 that the layers alone do not
// allow, and only those, where the stack offers them: Llama 3.1 405B's 126
// layers take PP 8 x VP 8 as NVIDIA runs it (Megatron-Bridge's H100 recipe sets
// account_for_embedding/loss_in_pipeline_split), never as a plain split.
TEST(PlanSpace, EdgeSlotsAddOnlyTheSplitsTheyOpen) {
  const auto model = spec::load_model("llama3.1-405b");  // 126 layers
  const auto hw = spec::load_hardware("dgx-h100");
  SpaceConstraints c;
  c.instances = {128};
  c.tp = 8;
  c.sp = true;
  c.zero = 1;
  c.micro_batch = 1;
  c.recompute = spec::Recompute::none;
  spec::Stack with_slots = spec::load_stack("megatron-lm"), without = with_slots;
  ASSERT_TRUE(with_slots.capabilities.edge_layer_slots);
  without.capabilities.edge_layer_slots = false;
  std::set<std::tuple<int, int, bool>> splits, plain;
  const PlanSpace space(model, hw, with_slots, workload(), c);
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const spec::Plan p = space.at(i);
    splits.insert({p.pp, p.virtual_stages, p.edge_layer_slots});
    const int slots = model.layers + (p.edge_layer_slots ? 2 : 0);
    EXPECT_EQ(slots % (p.pp * p.virtual_stages), 0);
    if (p.edge_layer_slots) EXPECT_NE(model.layers % (p.pp * p.virtual_stages), 0);
  }
  const PlanSpace space_without(model, hw, without, workload(), c);
  for (std::uint64_t i = 0; i < space_without.size(); ++i) {
    const spec::Plan p = space_without.at(i);
    EXPECT_FALSE(p.edge_layer_slots);
    plain.insert({p.pp, p.virtual_stages, false});
  }
  EXPECT_TRUE(splits.count({8, 8, true}));
  EXPECT_TRUE(splits.count({8, 1, true}));
  EXPECT_FALSE(splits.count({9, 1, true}));  // 126 / 9 divides already
  EXPECT_TRUE(plain.count({9, 1, false}));
  // 27 (PP, VP) pairs over 128 slots (PP > 1) that 126 layers do not divide
  EXPECT_EQ(splits.size(), plain.size() + 27u);
}

TEST(PlanSpace, FlagsNarrowTheSpace) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  SpaceConstraints c;
  c.instances = {128};
  c.tp = 8;
  c.pp = 1;
  c.sp = true;
  c.zero = 1;
  c.micro_batch = 1;
  c.recompute = spec::Recompute::selective;
  c.overlap_dp = true;
  c.overlap_tp = false;
  const PlanSpace space(model, hw, spec::Stack{}, workload(), c);
  ASSERT_EQ(space.size(), 1u);
  const spec::Plan p = space.at(0);
  EXPECT_EQ(p.tp, 8);
  EXPECT_TRUE(p.sp);
  EXPECT_EQ(p.instances, 128);
}

// DP overlap is the stack's at each plan's ZeRO stage (spec::at_zero_stage):
// optimum-habana's CI overlaps the reduction only in its ZeRO-3 config
// (stacks/optimum-habana.json by_zero_stage), unless the user fixes it.
TEST(PlanSpace, DpOverlapFollowsTheStacksZeroStage) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("hls-gaudi2");
  const spec::Stack stack = spec::load_stack("optimum-habana");
  SpaceConstraints c;
  c.instances = {1};
  c.micro_batch = 1;
  c.recompute = spec::Recompute::full;
  std::set<std::pair<int, bool>> seen;
  const PlanSpace space(model, hw, stack, workload(), c);
  for (std::uint64_t i = 0; i < space.size(); ++i) seen.insert({space.at(i).zero, space.at(i).overlap_dp_comm});
  EXPECT_EQ(seen, (std::set<std::pair<int, bool>>{{0, false}, {1, false}, {2, false}, {3, true}}));
  c.overlap_dp = true;
  const PlanSpace fixed(model, hw, stack, workload(), c);
  for (std::uint64_t i = 0; i < fixed.size(); ++i) EXPECT_TRUE(fixed.at(i).overlap_dp_comm);
}

// No fixed cap on micro-batches or interleaving (issue 39): every divisor of
// the global batch is a micro-batch, every divisor of a stage's layers a
// virtual-stage count. 1024 sequences: 1, 2, ..., 1024 (11); Llama 2 7B's 32
// layers at PP 2: 1, 2, 4, 8, 16 chunks.
TEST(PlanSpace, MicroBatchesAndVirtualStagesRunOverEveryDivisor) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  SpaceConstraints c;
  c.instances = {8};
  c.tp = 8;
  c.sp = true;
  c.zero = 1;
  c.recompute = spec::Recompute::none;
  c.overlap_dp = false;
  c.overlap_tp = false;
  const PlanSpace space(model, hw, spec::Stack{}, workload(), c);
  std::set<int> micro_batches, chunks_at_pp2;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const spec::Plan p = space.at(i);
    micro_batches.insert(p.micro_batch);
    if (p.pp == 2) chunks_at_pp2.insert(p.virtual_stages);
  }
  EXPECT_EQ(micro_batches, (std::set<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(chunks_at_pp2, (std::set<int>{1, 2, 4, 8, 16}));
}

// Every divisor of the batch is a micro-batch tried, however many there are:
// 720720 = 2^4 3^2 5 7 11 13 has (4+1)(2+1)(1+1)^4 = 240 divisors.
TEST(PlanSpace, EveryDivisorOfTheBatchIsAMicroBatch) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  SpaceConstraints c;
  c.instances = {1};
  c.tp = 8;
  c.pp = 1;
  const spec::Workload w{4096, 720720, 1e12, spec::Precision::bf16_sr};
  const PlanSpace space(model, hw, spec::Stack{}, w, c);
  std::set<int> micro_batches;
  for (std::uint64_t i = 0; i < space.size(); ++i) micro_batches.insert(space.at(i).micro_batch);
  EXPECT_EQ(micro_batches.size(), 240u);
  for (int mb : micro_batches) EXPECT_EQ(720720 % mb, 0) << mb;
  EXPECT_EQ(*micro_batches.rbegin(), 720720);
}

TEST(PlanSpace, TpThatDividesNoHeadsIsRefused) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  SpaceConstraints c;
  c.tp = 3;
  EXPECT_THROW(PlanSpace(model, hw, spec::Stack{}, workload(), c), spec::SpecError);
}

}  // namespace
}  // namespace trainplan::search
