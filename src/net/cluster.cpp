#include "net/cluster.h"

#include <algorithm>
#include <limits>
#include <string>

#include "net/instance_graph.h"
#include "net/ring_algebra.h"
#include "spec/error.h"

namespace trainplan::net {
namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

double transfer_s(double bytes, double bytes_per_s) { return bytes > 0 ? bytes / bytes_per_s : 0.0; }

}  // namespace

Cluster::Cluster(const spec::HardwareSpec& hw)
    : devices_(hw.devices_per_instance()),
      fabric_latency_s_(hw.fabric_latency_s),
      fabric_step_cap_s_(hw.step_latency_band.fabric_high_s),
      efa_latency_s_(hw.efa_latency_s),
      efa_bytes_per_s_(hw.efa_bytes_per_s()),
      scale_out_(hw.scale_out),
      source_file_(hw.source_file),
      graph_(std::make_shared<const InstanceGraph>(hw)) {
  const size_t cells = static_cast<size_t>(devices_ + 1) * (devices_ + 1);
  collective_bytes_per_s_.assign(cells, kUnbounded);
  p2p_bytes_per_s_.assign(cells, kUnbounded);
  all_to_all_bytes_per_s_.assign(cells, kUnbounded);
  for (int n = 2; n <= devices_; ++n)
    for (int s = 1; n * s <= devices_; ++s) {
      collective_bytes_per_s_[table_index({n, s})] = graph_->collective_bytes_per_s({n, s});
      p2p_bytes_per_s_[table_index({n, s})] = graph_->p2p_bytes_per_s({n, s});
      all_to_all_bytes_per_s_[table_index({n, s})] = graph_->all_to_all_bytes_per_s({n, s});
    }
}

double Cluster::intra_collective_bytes_per_s(GroupLayout g) const {
  if (g.size < 1 || g.stride < 1 || g.size * g.stride > devices_)
    throw spec::SpecError(source_file_, "", "an intra-instance layout (size * stride <= devices per instance)");
  return collective_bytes_per_s_[table_index(g)];
}

double Cluster::intra_p2p_bytes_per_s(GroupLayout g) const {
  if (g.size < 1 || g.stride < 1 || g.size * g.stride > devices_)
    throw spec::SpecError(source_file_, "", "an intra-instance layout (size * stride <= devices per instance)");
  return p2p_bytes_per_s_[table_index(g)];
}

void Cluster::check_group(double bytes, GroupLayout group, int instances) const {
  if (group.size < 1 || group.stride < 1)
    throw spec::SpecError(source_file_, "", "a group of at least 1 rank at a stride of at least 1");
  if (instances < 1) throw spec::SpecError(source_file_, "", "at least 1 instance");
  if (!(bytes >= 0)) throw spec::SpecError(source_file_, "", "a non-negative message size");
  const long long span = static_cast<long long>(group.size) * group.stride;
  if (group.size > 1 && span > static_cast<long long>(devices_) * instances)
    throw spec::SpecError(source_file_, "", "a group that fits in the cluster's " +
                                                std::to_string(static_cast<long long>(devices_) * instances) + " devices");
}

double Cluster::seconds(Collective kind, double bytes, GroupLayout group, int instances,
                        const spec::CollectiveEfficiency& eff) const {
  check_group(bytes, group, instances);
  if (group.size == 1) return 0;
  const long long span = static_cast<long long>(group.size) * group.stride;
  if (kind == Collective::point_to_point) return p2p_seconds(bytes, group, eff);
  if (span <= devices_) {
    if (devices_ % span != 0)
      throw spec::SpecError(source_file_, "", "groups that tile an instance (size * stride divides devices per instance)");
    const double alpha = fabric_step_s(eff) + fabric_latency_s_;
    return ring_steps(kind, group.size) * alpha +
           transfer_s(ring_bytes_per_rank(kind, bytes, group.size), collective_bytes_per_s_[table_index(group)] * eff.intra_node);
  }
  return scale_out_ == spec::ScaleOut::flat_ring ? flat_ring_seconds(kind, bytes, group, eff)
                                                 : hierarchical_seconds(kind, bytes, group, eff);
}

double Cluster::all_to_all_seconds(double bytes, GroupLayout group, int instances,
                                   const spec::CollectiveEfficiency& eff) const {
  check_group(bytes, group, instances);
  if (group.size == 1) return 0;
  const long long span = static_cast<long long>(group.size) * group.stride;
  const double n = group.size;
  if (span <= devices_) {
    if (devices_ % span != 0)
      throw spec::SpecError(source_file_, "", "groups that tile an instance (size * stride divides devices per instance)");
    return fabric_step_s(eff) + fabric_latency_s_ +
           transfer_s(bytes * (n - 1) / n, all_to_all_bytes_per_s_[table_index(group)] * eff.intra_node);
  }
  const int local = members_per_instance(group);
  return all_to_all_seconds(bytes * (local - 1) / n, bytes * (n - local) / n, group, instances, eff);
}

double Cluster::all_to_all_seconds(double fabric_bytes, double efa_bytes, GroupLayout group, int instances,
                                   const spec::CollectiveEfficiency& eff) const {
  check_group(fabric_bytes + efa_bytes, group, instances);
  if (group.size == 1) return 0;
  if (static_cast<long long>(group.size) * group.stride <= devices_)  // inside one instance: no EFA
    return all_to_all_seconds(fabric_bytes * group.size / (group.size - 1.0), group, instances, eff);
  const int local = members_per_instance(group);
  const double local_s =
      local > 1 ? transfer_s(fabric_bytes, all_to_all_bytes_per_s_[table_index({local, group.stride})] * eff.intra_node)
                : 0.0;
  const double remote_s = transfer_s(efa_bytes, efa_bytes_per_s_ * eff.inter_node / devices_);
  return eff.step_latency_s + std::max(efa_latency_s_, fabric_latency_s_) + std::max(local_s, remote_s);
}

// Members of a cross-instance group on each instance it spans.
int Cluster::members_per_instance(GroupLayout g) const {
  if (g.stride >= devices_) return 1;
  if (devices_ % g.stride != 0 || g.size % (devices_ / g.stride) != 0)
    throw spec::SpecError(source_file_, "", "groups that tile instances (stride divides devices per instance, "
                                            "and members per instance divide the group size)");
  return devices_ / g.stride;
}

// One ring over every member: each rank moves the full ring volume, and a step
// waits for the slowest hop. Hops inside an instance run on the fabric with all
// neighbours sending at once; each group crosses each instance boundary once,
// so the concurrent groups of an instance share its EFA bandwidth.
double Cluster::flat_ring_seconds(Collective kind, double bytes, GroupLayout g,
                                  const spec::CollectiveEfficiency& eff) const {
  const int local = members_per_instance(g);
  const int groups_per_instance = devices_ / local;
  const double cross_bps = efa_bytes_per_s_ * eff.inter_node / groups_per_instance;
  const double hop_bps =
      local > 1 ? std::min(cross_bps, p2p_bytes_per_s_[table_index({local, g.stride})] * eff.intra_node) : cross_bps;
  const double alpha = eff.step_latency_s + std::max(efa_latency_s_, fabric_latency_s_);
  return ring_steps(kind, g.size) * alpha + transfer_s(ring_bytes_per_rank(kind, bytes, g.size), hop_bps);
}

// Reduce-scatter among the members inside each instance, a ring among the
// instances on 1/local of the data, then all-gather inside: the NCCL/Neuron
// hierarchical scheme. Every device of an instance belongs to some concurrent
// group, so all of them share the instance's EFA bandwidth during the middle phase.
double Cluster::hierarchical_seconds(Collective kind, double bytes, GroupLayout g,
                                     const spec::CollectiveEfficiency& eff) const {
  const int local = members_per_instance(g);
  const int across = g.size / local;
  const double intra_bps = local > 1 ? collective_bytes_per_s_[table_index({local, g.stride})] * eff.intra_node : kUnbounded;
  const double inter_bps = efa_bytes_per_s_ * eff.inter_node / devices_;
  const double alpha_intra = fabric_step_s(eff) + fabric_latency_s_;
  const double alpha_inter = eff.step_latency_s + efa_latency_s_;

  // The intra phases are the local halves of the collective (reduce-scatter
  // and/or all-gather over the full buffer); the inter phase is the same kind
  // of collective over one local shard.
  const Collective half = kind == Collective::all_reduce ? Collective::reduce_scatter : kind;
  const int intra_phases = kind == Collective::all_reduce ? 2 : 1;
  const double intra_s = intra_phases * (ring_steps(half, local) * alpha_intra +
                                         transfer_s(ring_bytes_per_rank(half, bytes, local), intra_bps));
  const double inter_s = ring_steps(kind, across) * alpha_inter +
                         transfer_s(ring_bytes_per_rank(kind, bytes / local, across), inter_bps);
  return intra_s + inter_s;
}

// One message to the member `stride` away. Hops inside an instance run on
// the fabric with every pipeline pair sending at once; a hop that leaves the
// instance shares EFA with the other devices crossing at the same moment
// (the last `stride` local devices, or all of them when stride >= an instance).
// A step waits for its slowest hop, so the slower kind sets the time.
double Cluster::p2p_seconds(double bytes, GroupLayout g, const spec::CollectiveEfficiency& eff) const {
  const double alpha_intra = fabric_step_s(eff) + fabric_latency_s_;
  const long long span = static_cast<long long>(g.size) * g.stride;
  if (span <= devices_) {
    if (devices_ % span != 0)
      throw spec::SpecError(source_file_, "", "groups that tile an instance (size * stride divides devices per instance)");
    return alpha_intra + transfer_s(bytes, p2p_bytes_per_s_[table_index(g)] * eff.intra_node);
  }
  const int crossing = std::min(g.stride, devices_);
  const double cross_s = eff.step_latency_s + efa_latency_s_ +
                         transfer_s(bytes, efa_bytes_per_s_ * eff.inter_node / crossing);
  double intra_s = 0;
  if (g.stride < devices_) {
    if (devices_ % g.stride != 0)
      throw spec::SpecError(source_file_, "", "a stride that divides devices per instance");
    const int local = devices_ / g.stride;
    if (local > 1) intra_s = alpha_intra + transfer_s(bytes, p2p_bytes_per_s_[table_index({local, g.stride})] * eff.intra_node);
  }
  return std::max(cross_s, intra_s);
}

}  // namespace trainplan::net
