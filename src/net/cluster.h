// Cluster: the instances of one HardwareSpec as a Boost.Graph of devices,
// chips, intra-instance links and EFA NICs, and the time of a collective on a
// group of ranks laid out on it. Built once per hardware (the graph work is
// done in the constructor); seconds() is then a cheap, thread-safe lookup.
// Layouts whose groups do not tile instances evenly throw spec::SpecError.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "spec/hardware_spec.h"

namespace trainplan::net {

enum class Collective { all_reduce, all_gather, reduce_scatter, point_to_point };

// A communication group of `size` ranks whose consecutive members are `stride`
// devices apart in the global numbering (device = instance * devices_per_instance
// + local index). Every device belongs to one such group and all groups of a
// layout run at the same time, as TP, DP and PP collectives do in training.
struct GroupLayout {
  int size = 1;
  int stride = 1;
};

class InstanceGraph;

class Cluster {
 public:
  explicit Cluster(const spec::HardwareSpec& hardware);
  // Seconds for one collective over `bytes` per rank: the whole buffer for
  // all_reduce, the gathered output for all_gather, the input for
  // reduce_scatter, the message for point_to_point (to the rank `stride` away).
  // `instances` is the cluster size the layout lives in.
  double seconds(Collective kind, double bytes, GroupLayout group, int instances,
                 const spec::CollectiveEfficiency& efficiency) const;

  // Seconds for one all-to-all (MoE dispatch or combine) over `bytes` per rank:
  // the rank's whole send buffer, of which (n-1)/n leaves it, an equal share to
  // each member. Inside an instance the shares cross the fabric as the graph
  // routes them; across instances the remote share crosses EFA, which every
  // device of the instance uses at once, while the local share crosses the
  // fabric: the slower of the two sets the time. One step's latency: the
  // sends are issued together.
  double all_to_all_seconds(double bytes, GroupLayout group, int instances,
                            const spec::CollectiveEfficiency& efficiency) const;
  // The same exchange with the bytes a rank moves over the fabric and over EFA
  // given apart (a dispatcher that sends a token to each remote instance once
  // and fans it out there moves fewer bytes over EFA than it delivers).
  double all_to_all_seconds(double fabric_bytes, double efa_bytes, GroupLayout group, int instances,
                            const spec::CollectiveEfficiency& efficiency) const;

  int devices_per_instance() const { return devices_; }
  // Raw (efficiency 1) per-rank bandwidth of the concurrent groups of an
  // intra-instance layout (size * stride <= devices_per_instance), from the graph.
  double intra_collective_bytes_per_s(GroupLayout group) const;
  double intra_p2p_bytes_per_s(GroupLayout group) const;
  const InstanceGraph& graph() const { return *graph_; }

 private:
  // Refuses a group or message no collective can run (one line naming the descriptor).
  void check_group(double bytes, GroupLayout group, int instances) const;
  int table_index(GroupLayout group) const { return group.size * (devices_ + 1) + group.stride; }
  double hierarchical_seconds(Collective kind, double bytes, GroupLayout group,
                              const spec::CollectiveEfficiency& efficiency) const;
  int members_per_instance(GroupLayout group) const;
  double flat_ring_seconds(Collective kind, double bytes, GroupLayout group,
                           const spec::CollectiveEfficiency& efficiency) const;
  double p2p_seconds(double bytes, GroupLayout group, const spec::CollectiveEfficiency& efficiency) const;
  // The fitted per-step latency of a step on the instance's fabric: capped
  // where the descriptor states its collective library's fabric step.
  double fabric_step_s(const spec::CollectiveEfficiency& efficiency) const {
    return fabric_step_cap_s_ > 0 ? std::min(efficiency.step_latency_s, fabric_step_cap_s_) : efficiency.step_latency_s;
  }

  int devices_ = 0;
  double fabric_latency_s_ = 0;
  double fabric_step_cap_s_ = 0;  // 0: none; else the fitted step latency on the fabric is capped here
  double efa_latency_s_ = 0;
  double efa_bytes_per_s_ = 0;
  spec::ScaleOut scale_out_ = spec::ScaleOut::hierarchical;
  std::string source_file_;
  std::shared_ptr<const InstanceGraph> graph_;
  // Indexed by table_index(size, stride) for size * stride <= devices_.
  std::vector<double> collective_bytes_per_s_;
  std::vector<double> p2p_bytes_per_s_;
  std::vector<double> all_to_all_bytes_per_s_;
};

}  // namespace trainplan::net
