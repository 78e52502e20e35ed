#include "net/cluster.h"

#include <cmath>

#include <gtest/gtest.h>

#include "spec/error.h"
#include "test_hardware.h"

namespace trainplan::net {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(Cluster, TwoRankAllReduceOnOneTrn1Chip) {
  // 1 GiB all-reduce on 2 ranks moves 2(n-1)/n = 1 x the buffer per rank.
  // Ranks 0 and 1 share chip 0: bandwidth is the (assumed) 400e9 on-chip figure.
  // 2^30 / 400e9 = 2.6844e-3 s.
  Cluster c(testing::trn1());
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {2, 1}, 1, testing::ideal()), kGiB / 400e9, 1e-12);
}

TEST(Cluster, TwoRankAllReduceAcrossTrn1Chips) {
  // Stride 2: groups {0,2} and {1,3} both cross the chip0-chip1 link, one
  // 96e9 link per direction shared by 2 rings: 48e9 bytes/s per rank.
  // Published: nccom-test all-reduce, 2 ranks, 1 GiB on trn1: 52.8 GB/s bus
  // bandwidth (AWS Neuron docs) -- one group alone, with an efficiency below 1.
  Cluster c(testing::trn1());
  EXPECT_DOUBLE_EQ(c.intra_collective_bytes_per_s({2, 2}), 48e9);
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {2, 2}, 1, testing::ideal()), kGiB / 48e9, 1e-12);
}

TEST(Cluster, Trn1Tp8RingOverATorusRow) {
  // TP=8, stride 1: devices 0-7 on chips 0-3, one torus row (wraparound closes
  // the ring). Four rows run at once, one group each. A two-way ring sends half
  // each way, so every row link carries 0.5 per direction: 96e9 / 0.5 = 192e9.
  // All-reduce of 1 GiB: 2 * 7/8 * 2^30 / 192e9 = 9.7878e-3 s.
  Cluster c(testing::trn1());
  EXPECT_DOUBLE_EQ(c.intra_collective_bytes_per_s({8, 1}), 192e9);
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {8, 1}, 1, testing::ideal()), 2 * 7.0 / 8 * kGiB / 192e9,
              1e-12);
}

TEST(Cluster, Dl1EightWayAllToAll) {
  // Eight Gaudis, one 12.5e9 link to each peer: a direct reduce-scatter sends
  // 1/7 of each rank's traffic on each of its 7 links: 7 * 12.5e9 = 87.5e9.
  // (A single ring would use one link: 12.5e9.)
  Cluster c(testing::dl1());
  EXPECT_DOUBLE_EQ(c.intra_collective_bytes_per_s({8, 1}), 87.5e9);
  // All-gather of 1 GiB output: 7/8 * 2^30 / 87.5e9 = 1.0737e-2 s.
  EXPECT_NEAR(c.seconds(Collective::all_gather, kGiB, {8, 1}, 1, testing::ideal()), 7.0 / 8 * kGiB / 87.5e9, 1e-12);
}

TEST(Cluster, FlatRingAcrossFourDl1Instances) {
  // scale_out flat-ring: one ring over all 32 Gaudis (DP 32, stride 1). Inside an
  // instance a ring hop is one 12.5e9 RoCE link; the boundary hop is the one
  // flow leaving the instance, with all of EFA (50e9) to itself. The slowest
  // hop sets the pace: 12.5e9. All-reduce of 1 GiB: 2 * 31/32 * 2^30 / 12.5e9.
  spec::HardwareSpec hw = testing::dl1();
  hw.scale_out = spec::ScaleOut::flat_ring;
  Cluster c(hw);
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {32, 1}, 4, testing::ideal()), 2 * 31.0 / 32 * kGiB / 12.5e9,
              1e-12);
  // At half the EFA efficiency the boundary hop (25e9) is still faster than a link.
  spec::CollectiveEfficiency half_efa = testing::ideal();
  half_efa.inter_node = 0.5;
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {32, 1}, 4, half_efa), 2 * 31.0 / 32 * kGiB / 12.5e9, 1e-12);
  // At a fifth (10e9) the boundary hop sets the pace.
  half_efa.inter_node = 0.2;
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {32, 1}, 4, half_efa), 2 * 31.0 / 32 * kGiB / 10e9, 1e-12);
}

TEST(Cluster, P4dSwitchGivesEachGpuItsUplink) {
  Cluster c(testing::p4d());
  EXPECT_DOUBLE_EQ(c.intra_collective_bytes_per_s({8, 1}), 300e9);
  EXPECT_DOUBLE_EQ(c.intra_collective_bytes_per_s({4, 2}), 300e9);
}

TEST(Cluster, DpAcrossFourDl1InstancesIsBoundByEfa) {
  // TP=8 inside each dl1, DP=4 at stride 8: each DP group has one member per
  // instance, and the 8 DP groups share the 400 Gb/s = 50e9 bytes/s EFA:
  // 6.25e9 per device. Ring all-reduce of 1 GiB on 4: 2 * 3/4 * 2^30 / 6.25e9 = 0.25770 s.
  Cluster c(testing::dl1());
  EXPECT_NEAR(c.seconds(Collective::all_reduce, kGiB, {4, 8}, 4, testing::ideal()),
              2 * 0.75 * kGiB / 6.25e9, 1e-9);
}

TEST(Cluster, HierarchicalAllReduceAcrossDl1Instances) {
  // DP=32 at stride 1 over 4 dl1: reduce-scatter among the 8 local Gaudis
  // (7/8 * B at 87.5e9), ring among 4 instances on B/8 with all 8 devices
  // sharing EFA (2 * 3/4 * B/8 at 6.25e9), all-gather back (7/8 * B at 87.5e9).
  Cluster c(testing::dl1());
  const double b = kGiB;
  const double expected = 2 * (7.0 / 8 * b / 87.5e9) + 2 * 0.75 * (b / 8) / 6.25e9;
  EXPECT_NEAR(c.seconds(Collective::all_reduce, b, {32, 1}, 4, testing::ideal()), expected, 1e-9);
  // All-gather: the inter phase gathers B/8 per device, then the intra phase B.
  const double gather = 0.75 * (b / 8) / 6.25e9 + 7.0 / 8 * b / 87.5e9;
  EXPECT_NEAR(c.seconds(Collective::all_gather, b, {32, 1}, 4, testing::ideal()), gather, 1e-9);
}

TEST(Cluster, EfficiencyScalesEachTier) {
  Cluster c(testing::dl1());
  auto eff = testing::ideal();
  eff.intra_node = 0.5;
  eff.inter_node = 0.25;
  const double b = kGiB;
  const double expected = 2 * (7.0 / 8 * b / (0.5 * 87.5e9)) + 2 * 0.75 * (b / 8) / (0.25 * 6.25e9);
  EXPECT_NEAR(c.seconds(Collective::all_reduce, b, {32, 1}, 4, eff), expected, 1e-9);
}

TEST(Cluster, LatencyIsAlphaPerRingStep) {
  auto hw = testing::dl1();
  hw.fabric_latency_s = 2e-6;
  hw.efa_latency_s = 15e-6;
  Cluster c(hw);
  auto eff = testing::ideal();
  eff.step_latency_s = 10e-6;
  // Intra all-reduce on 8: 2 * 7 = 14 steps of (10 + 2) us.
  EXPECT_NEAR(c.seconds(Collective::all_reduce, 0, {8, 1}, 1, eff), 14 * 12e-6, 1e-15);
  // Reduce-scatter on 4 instances: 3 steps of (10 + 15) us.
  EXPECT_NEAR(c.seconds(Collective::reduce_scatter, 0, {4, 8}, 4, eff), 3 * 25e-6, 1e-15);
  // Hierarchical all-reduce on 32: 2 * 7 intra steps + 2 * 3 inter steps.
  EXPECT_NEAR(c.seconds(Collective::all_reduce, 0, {32, 1}, 4, eff), 14 * 12e-6 + 6 * 25e-6, 1e-15);
}

// A descriptor stating its collective library's step on the fabric (NCCL's
// NVLink Ring/Simple step, 3.4 us, NVIDIA/nccl@b6475625 src/graph/tuning.cc)
// caps the fitted step latency there; steps between instances keep all of it.
TEST(Cluster, FabricStepLatencyIsCappedWhereTheDescriptorStatesOne) {
  auto hw = testing::dl1();
  hw.fabric_latency_s = 2e-6;
  hw.efa_latency_s = 15e-6;
  hw.step_latency_band = {14e-6, 3.4e-6, "nccl"};
  Cluster c(hw);
  auto eff = testing::ideal();
  eff.step_latency_s = 10e-6;
  EXPECT_NEAR(c.seconds(Collective::all_reduce, 0, {8, 1}, 1, eff), 14 * 5.4e-6, 1e-15);
  EXPECT_NEAR(c.seconds(Collective::all_reduce, 0, {32, 1}, 4, eff), 14 * 5.4e-6 + 6 * 25e-6, 1e-15);
  EXPECT_NEAR(c.seconds(Collective::point_to_point, 0, {2, 1}, 1, eff), 5.4e-6, 1e-15);
  eff.step_latency_s = 1e-6;  // under the cap: the fitted figure stands
  EXPECT_NEAR(c.seconds(Collective::all_reduce, 0, {8, 1}, 1, eff), 14 * 3e-6, 1e-15);
}

TEST(Cluster, PointToPointInsideTrn1) {
  // PP at stride 8 (TP=8): stage k in torus row k sends to row k+1; the
  // 2 devices of a chip share its one downward link: 96e9 / 2 = 48e9.
  Cluster c(testing::trn1());
  EXPECT_DOUBLE_EQ(c.intra_p2p_bytes_per_s({4, 8}), 48e9);
  EXPECT_NEAR(c.seconds(Collective::point_to_point, 96e6, {4, 8}, 1, testing::ideal()), 96e6 / 48e9, 1e-15);
}

TEST(Cluster, PointToPointAcrossTrn1Instances) {
  // PP=8 at stride 8 over 2 trn1: the 8 devices of the last local stage send
  // across at once over 800 Gb/s = 100e9 bytes/s: 12.5e9 each, slower than the
  // 48e9 intra hops, so the EFA hop sets the time.
  Cluster c(testing::trn1());
  EXPECT_NEAR(c.seconds(Collective::point_to_point, 1e8, {8, 8}, 2, testing::ideal()), 1e8 / 12.5e9, 1e-15);
  // Stride 64 (every member on its own instance): all 32 devices share EFA.
  EXPECT_NEAR(c.seconds(Collective::point_to_point, 1e8, {2, 64}, 4, testing::ideal()), 1e8 / (100e9 / 32), 1e-12);
}

TEST(Cluster, SingleRankCostsNothing) {
  Cluster c(testing::trn1());
  EXPECT_EQ(c.seconds(Collective::all_reduce, kGiB, {1, 1}, 1, testing::ideal()), 0.0);
}

TEST(Cluster, RejectsLayoutsThatDoNotFitOrTile) {
  Cluster c(testing::dl1());
  EXPECT_THROW(c.seconds(Collective::all_reduce, 1, {16, 1}, 1, testing::ideal()), spec::SpecError);
  EXPECT_THROW(c.seconds(Collective::all_reduce, 1, {3, 1}, 1, testing::ideal()), spec::SpecError);
  EXPECT_THROW(c.seconds(Collective::all_reduce, 1, {6, 2}, 2, testing::ideal()), spec::SpecError);
  EXPECT_THROW(c.seconds(Collective::all_reduce, -1, {2, 1}, 1, testing::ideal()), spec::SpecError);
}

TEST(Cluster, MoreBytesNeverTakeLess) {
  Cluster c(testing::trn1());
  const auto eff = spec::CollectiveEfficiency{};
  for (GroupLayout g : {GroupLayout{2, 1}, GroupLayout{8, 1}, GroupLayout{4, 8}, GroupLayout{64, 1}, GroupLayout{4, 32}}) {
    double last = 0;
    for (double b = 1; b < 1e10; b *= 10) {
      const double t = c.seconds(Collective::all_reduce, b, g, 4, eff);
      EXPECT_GT(t, last);
      last = t;
    }
  }
}

}  // namespace
}  // namespace trainplan::net
