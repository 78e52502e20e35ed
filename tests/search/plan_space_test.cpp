#include "search/plan_space.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "spec/error.h"
#include "spec/load.h"

namespace tp::search {
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

TEST(PlanSpace, TpThatDividesNoHeadsIsRefused) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  SpaceConstraints c;
  c.tp = 3;
  EXPECT_THROW(PlanSpace(model, hw, spec::Stack{}, workload(), c), spec::SpecError);
}

}  // namespace
}  // namespace tp::search
