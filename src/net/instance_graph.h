// InstanceGraph: one instance of a HardwareSpec as a Boost.Graph of device,
// chip, switch and NIC vertices; every link is two arcs (one per direction)
// carrying bytes/s. Given a traffic pattern of all concurrent groups of a
// layout, it spreads each flow evenly over the shortest paths between its
// devices (NIC arcs excluded) and returns the per-rank bandwidth the most
// loaded arc allows. Built once; queries are const and thread-safe.
#pragma once
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "net/cluster.h"
#include "spec/hardware_spec.h"

namespace trainplan::net {

enum class VertexKind { device, chip, fabric_switch, nic };
enum class LinkKind { on_chip, fabric, efa };

struct VertexInfo {
  VertexKind kind = VertexKind::device;
  int index = 0;  // device, chip or NIC number within the instance
};
struct LinkInfo {
  LinkKind kind = LinkKind::fabric;
  double bytes_per_s = 0;  // one direction
  int id = 0;              // arc number, for per-arc load arrays
};

using InstanceTopology =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexInfo, LinkInfo>;

// One sender-to-receiver stream; weight is its share of one rank's traffic.
struct Flow {
  int from_device = 0;
  int to_device = 0;
  double weight = 1;
};

class InstanceGraph {
 public:
  // Throws spec::SpecError when the spec lacks a figure its topology needs.
  explicit InstanceGraph(const spec::HardwareSpec& hardware);

  const InstanceTopology& topology() const { return graph_; }
  int devices() const { return devices_; }
  // Vertex number of a device / chip (devices come first, then chips).
  int device_vertex(int device) const { return device; }
  int chip_vertex(int chip) const { return devices_ + chip; }
  // Arcs on a shortest path between two devices (0 for the same device).
  int hops(int from_device, int to_device) const;

  // Per-rank bytes/s of `flows` run at once: min over arcs of bandwidth / load.
  // Infinite when no arc is used.
  double bottleneck_bytes_per_s(const std::vector<Flow>& flows) const;

  // Best per-rank bus bandwidth of the ring family (one-way ring, two-way
  // ring, direct all-pairs) for every group of `layout` tiling the instance.
  double collective_bytes_per_s(GroupLayout layout) const;
  // Per-rank bandwidth of an all-to-all: every member sends an equal share to
  // each other member of its group, all groups at once.
  double all_to_all_bytes_per_s(GroupLayout layout) const;
  // Per-rank bandwidth of pipeline sends member k -> k+1 of every group at once.
  double p2p_bytes_per_s(GroupLayout layout) const;

 private:
  struct ArcShare {
    int arc = 0;
    double fraction = 0;
  };
  void add_link(int a, int b, LinkKind kind, double bytes_per_s);
  void compute_routes();
  std::vector<std::vector<int>> groups(GroupLayout layout) const;

  InstanceTopology graph_;
  int devices_ = 0;
  int arcs_ = 0;
  std::vector<double> arc_bytes_per_s_;
  // routes_[from * devices_ + to]: every arc on some shortest path, with the
  // fraction of the flow it carries under even splitting over those paths.
  std::vector<std::vector<ArcShare>> routes_;
  std::vector<int> hops_;
};

}  // namespace trainplan::net
