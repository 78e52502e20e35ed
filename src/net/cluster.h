// Cluster: the instances of one HardwareSpec as a Boost.Graph of devices,
// chips, intra-instance links and EFA NICs, and the time of a collective on a
// group of ranks laid out on it. Built once per hardware (the graph work is
// done in the constructor); seconds() is then a cheap, thread-safe lookup.
#pragma once
#include "calib/calibration.h"
#include "spec/hardware_spec.h"

namespace tp::net {

enum class Collective { all_reduce, all_gather, reduce_scatter, point_to_point };

// A communication group of `size` ranks whose consecutive members are `stride`
// devices apart in the global numbering (device = instance * devices_per_instance
// + local index). Every device belongs to one such group and all groups of a
// layout run at the same time, as TP, DP and PP collectives do in training.
struct GroupLayout {
  int size = 1;
  int stride = 1;
};

class Cluster {
 public:
  explicit Cluster(const spec::HardwareSpec& hardware);
  // Seconds for one collective over `bytes` per rank: the whole buffer for
  // all_reduce, the gathered output for all_gather, the input for
  // reduce_scatter, the message for point_to_point (to the rank `stride` away).
  // `instances` is the cluster size the layout lives in.
  double seconds(Collective kind, double bytes, GroupLayout group, int instances,
                 const calib::CollectiveEfficiency& efficiency) const;
};

}  // namespace tp::net
