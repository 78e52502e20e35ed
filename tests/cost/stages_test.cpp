// Which pipeline ranks can decide a per-device figure, and how ties fall.
#include "cost/stages.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainplan::cost {
namespace stages_test {

spec::Plan plan(int pp, bool edge_slots) {
  spec::Plan p;
  p.pp = pp;
  p.edge_layer_slots = edge_slots;
  return p;
}

std::vector<int> ranks(const spec::Plan& p) {
  const CandidateRanks c = candidate_ranks(p);
  return {c.begin(), c.end()};
}

TEST(Stages, CandidatesAreTheEdgesAndTheSecondWhereEdgesTakeASlot) {
  EXPECT_EQ(ranks(plan(1, false)), std::vector<int>({0}));
  EXPECT_EQ(ranks(plan(1, true)), std::vector<int>({0}));  // no pipeline: no slots to take
  EXPECT_EQ(ranks(plan(4, false)), std::vector<int>({0, 3}));
  EXPECT_EQ(ranks(plan(2, true)), std::vector<int>({0, 1}));  // the second is the last
  EXPECT_EQ(ranks(plan(12, true)), std::vector<int>({0, 11, 1}));
}

TEST(Stages, HeaviestRankBreaksTiesTowardsTheFirstCandidate) {
  const spec::Plan p = plan(12, true);
  EXPECT_EQ(heaviest_rank(p, [](int) { return 1.0; }), 0);
  EXPECT_EQ(heaviest_rank(p, [](int rank) { return rank == 11 ? 2.0 : 1.0; }), 11);
  EXPECT_EQ(heaviest_rank(p, [](int rank) { return rank == 1 ? 0.0 : -1.0; }), 1);
  EXPECT_EQ(heaviest_rank(plan(4, false), [](int rank) { return rank == 1 ? 9.0 : 0.0; }), 0);  // 1 is no candidate
}

}  // namespace stages_test
}  // namespace trainplan::cost
