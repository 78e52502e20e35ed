#include "net/instance_graph.h"

#include <gtest/gtest.h>

#include "spec/error.h"
#include "test_hardware.h"

namespace trainplan::net {
namespace {

int count_fabric_arcs_from(const InstanceGraph& g, int chip) {
  int n = 0;
  const auto& topo = g.topology();
  for (auto e : boost::make_iterator_range(boost::out_edges(g.chip_vertex(chip), topo)))
    if (topo[e].kind == LinkKind::fabric) ++n;
  return n;
}

TEST(InstanceGraph, Trn1TorusGivesEveryChipFourLinks) {
  InstanceGraph g(testing::trn1());
  EXPECT_EQ(g.devices(), 32);
  for (int c = 0; c < 16; ++c) EXPECT_EQ(count_fabric_arcs_from(g, c), 4) << "chip " << c;
}

TEST(InstanceGraph, Trn1HopsFollowTheTorusWithWraparound) {
  InstanceGraph g(testing::trn1());
  // Devices 0 and 1 share chip 0: device -> chip -> device.
  EXPECT_EQ(g.hops(0, 1), 2);
  // Chip 0 at (0,0) to chip 10 at (2,2): 2 + 2 chip hops, plus the two device arcs.
  EXPECT_EQ(g.hops(0, 20), 6);
  // Chip 15 at (3,3) is one wraparound step away in each dimension.
  EXPECT_EQ(g.hops(0, 30), 4);
}

TEST(InstanceGraph, Dl1AllToAllIsOneHopBetweenChips) {
  InstanceGraph g(testing::dl1());
  for (int c = 0; c < 8; ++c) EXPECT_EQ(count_fabric_arcs_from(g, c), 7);
  EXPECT_EQ(g.hops(0, 7), 3);  // device, chip, chip, device
}

TEST(InstanceGraph, SwitchedRoutesThroughTheSwitch) {
  InstanceGraph g(testing::p4d());
  EXPECT_EQ(g.hops(2, 5), 4);  // device, chip, switch, chip, device
}

TEST(InstanceGraph, EvenSplitOverEqualPaths) {
  // Chip 0 to chip 2 in a torus row has two 2-hop paths (via 1 and via 3):
  // one flow loads each half, so its bottleneck is twice one link.
  InstanceGraph g(testing::trn1());
  EXPECT_DOUBLE_EQ(g.bottleneck_bytes_per_s({{0, 4, 1.0}}), 2 * 96e9);
}

TEST(InstanceGraph, MultiDeviceChipNeedsOnChipBandwidth) {
  auto hw = testing::trn1();
  hw.on_chip_bytes_per_s = 0;
  EXPECT_THROW(InstanceGraph{hw}, spec::SpecError);
}

TEST(InstanceGraph, TorusShapeMustMatchChips) {
  auto hw = testing::trn1();
  hw.torus_cols = 3;
  EXPECT_THROW(InstanceGraph{hw}, spec::SpecError);
}

}  // namespace
}  // namespace trainplan::net
