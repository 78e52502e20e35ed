#include "net/instance_graph.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>

#include "spec/error.h"

namespace trainplan::net {
namespace {

constexpr double kUnboundedRate = std::numeric_limits<double>::infinity();

// Routing never leaves the instance: traffic between two devices of one
// instance does not hairpin through the EFA NIC.
struct NoEfa {
  const InstanceTopology* graph = nullptr;
  bool operator()(InstanceTopology::edge_descriptor e) const {
    return (*graph)[e].kind != LinkKind::efa;
  }
};

void require_positive(const spec::HardwareSpec& hw, double value, const char* field) {
  if (!(value > 0))
    throw spec::SpecError(hw.source_file, field,
                          std::string("a positive figure (needed by the ") +
                              spec::to_string(hw.fabric) + " fabric model)");
}

// Records vertices as BFS discovers them: non-decreasing hop distance.
struct DiscoveryOrder : boost::base_visitor<DiscoveryOrder> {
  using event_filter = boost::on_discover_vertex;
  std::vector<int>* out = nullptr;
  template <class V, class G>
  void operator()(V v, const G&) { out->push_back(static_cast<int>(v)); }
};

}  // namespace

void InstanceGraph::add_link(int a, int b, LinkKind kind, double bytes_per_s) {
  boost::add_edge(a, b, LinkInfo{kind, bytes_per_s, arcs_++}, graph_);
  boost::add_edge(b, a, LinkInfo{kind, bytes_per_s, arcs_++}, graph_);
  arc_bytes_per_s_.push_back(bytes_per_s);
  arc_bytes_per_s_.push_back(bytes_per_s);
}

InstanceGraph::InstanceGraph(const spec::HardwareSpec& hw) {
  const int chips = hw.chips_per_instance;
  const int per_chip = hw.devices_per_chip;
  if (chips < 1) throw spec::SpecError(hw.source_file, "chips_per_instance", "at least 1");
  if (per_chip < 1) throw spec::SpecError(hw.source_file, "devices_per_chip", "at least 1");
  devices_ = chips * per_chip;

  for (int d = 0; d < devices_; ++d) boost::add_vertex(VertexInfo{VertexKind::device, d}, graph_);
  for (int c = 0; c < chips; ++c) boost::add_vertex(VertexInfo{VertexKind::chip, c}, graph_);

  // A chip that holds one device has no on-chip hop worth modelling.
  double on_chip = kUnboundedRate;
  if (per_chip > 1) {
    require_positive(hw, hw.on_chip_bytes_per_s, "on_chip_bytes_per_s");
    on_chip = hw.on_chip_bytes_per_s;
  }
  for (int d = 0; d < devices_; ++d) add_link(device_vertex(d), chip_vertex(d / per_chip), LinkKind::on_chip, on_chip);

  switch (hw.fabric) {
    case spec::FabricTopology::all_to_all:
      if (chips > 1) require_positive(hw, hw.link_bytes_per_s, "link_bytes_per_s");
      for (int a = 0; a < chips; ++a)
        for (int b = a + 1; b < chips; ++b) add_link(chip_vertex(a), chip_vertex(b), LinkKind::fabric, hw.link_bytes_per_s);
      break;
    case spec::FabricTopology::torus_2d: {
      const int rows = hw.torus_rows, cols = hw.torus_cols;
      if (rows < 1 || cols < 1 || rows * cols != chips)
        throw spec::SpecError(hw.source_file, "torus_rows", "torus_rows * torus_cols == chips_per_instance");
      if (chips > 1) require_positive(hw, hw.link_bytes_per_s, "link_bytes_per_s");
      // Chip c sits at row c / cols, column c % cols; each links to its right
      // and lower neighbour with wraparound, so every chip has (up to) 4 links.
      // A ring of 2 has one link, not two parallel ones.
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const int here = r * cols + c;
          if (cols > 1 && (c + 1 < cols || cols > 2))
            add_link(chip_vertex(here), chip_vertex(r * cols + (c + 1) % cols), LinkKind::fabric, hw.link_bytes_per_s);
          if (rows > 1 && (r + 1 < rows || rows > 2))
            add_link(chip_vertex(here), chip_vertex(((r + 1) % rows) * cols + c), LinkKind::fabric, hw.link_bytes_per_s);
        }
      break;
    }
    case spec::FabricTopology::switched: {
      if (chips > 1) require_positive(hw, hw.chip_fabric_bytes_per_s, "chip_fabric_bytes_per_s");
      const auto sw = static_cast<int>(boost::add_vertex(VertexInfo{VertexKind::fabric_switch, 0}, graph_));
      for (int c = 0; c < chips; ++c) add_link(chip_vertex(c), sw, LinkKind::fabric, hw.chip_fabric_bytes_per_s);
      break;
    }
  }

  // The NIC hangs off every chip; it carries only inter-instance traffic,
  // whose bandwidth Cluster takes from efa_bytes_per_s() directly.
  const auto nic = static_cast<int>(boost::add_vertex(VertexInfo{VertexKind::nic, 0}, graph_));
  for (int c = 0; c < chips; ++c) add_link(chip_vertex(c), nic, LinkKind::efa, hw.efa_bytes_per_s());

  compute_routes();
}

void InstanceGraph::compute_routes() {
  const int vertices = static_cast<int>(boost::num_vertices(graph_));
  NoEfa keep{&graph_};
  boost::filtered_graph<InstanceTopology, NoEfa> intra(graph_, keep);

  // Hop distance and number of shortest paths from every device.
  std::vector<std::vector<int>> dist(devices_, std::vector<int>(vertices, -1));
  std::vector<std::vector<double>> paths(devices_, std::vector<double>(vertices, 0));
  for (int s = 0; s < devices_; ++s) {
    auto& d = dist[s];
    std::vector<int> order;
    std::vector<int> hop(vertices, 0);
    std::vector<boost::default_color_type> color(vertices);
    auto recorder = boost::record_distances(hop.data(), boost::on_tree_edge());
    DiscoveryOrder discover;
    discover.out = &order;
    boost::breadth_first_search(intra, s,
                                boost::visitor(boost::make_bfs_visitor(std::make_pair(recorder, discover)))
                                    .color_map(color.data()));
    for (int v : order) d[v] = hop[v];
    auto& sigma = paths[s];
    sigma[s] = 1;
    // BFS discovery order is non-decreasing in distance, so predecessors are final.
    for (int u : order)
      for (auto e : boost::make_iterator_range(boost::out_edges(u, intra))) {
        const int v = static_cast<int>(boost::target(e, intra));
        if (d[v] == d[u] + 1) sigma[v] += sigma[u];
      }
  }

  routes_.assign(static_cast<size_t>(devices_) * devices_, {});
  hops_.assign(static_cast<size_t>(devices_) * devices_, 0);
  for (int s = 0; s < devices_; ++s)
    for (int t = 0; t < devices_; ++t) {
      if (s == t) continue;
      const int total = dist[s][t];
      if (total < 0) throw spec::SpecError("", "fabric", "every device reachable inside the instance");
      hops_[s * devices_ + t] = total;
      auto& route = routes_[s * devices_ + t];
      // Arc (u, v) lies on a shortest s-t path iff d(s,u) + 1 + d(v,t) == d(s,t);
      // the links are symmetric, so d(v,t) and path counts to t come from t's BFS.
      for (auto e : boost::make_iterator_range(boost::edges(intra))) {
        const int u = static_cast<int>(boost::source(e, intra)), v = static_cast<int>(boost::target(e, intra));
        if (dist[s][u] < 0 || dist[t][v] < 0 || dist[s][u] + 1 + dist[t][v] != total) continue;
        route.push_back({graph_[e].id, paths[s][u] * paths[t][v] / paths[s][t]});
      }
    }
}

int InstanceGraph::hops(int from_device, int to_device) const { return hops_[from_device * devices_ + to_device]; }

double InstanceGraph::bottleneck_bytes_per_s(const std::vector<Flow>& flows) const {
  std::vector<double> load(arcs_, 0.0);
  for (const Flow& f : flows)
    for (const ArcShare& a : routes_[f.from_device * devices_ + f.to_device]) load[a.arc] += f.weight * a.fraction;
  double best = kUnboundedRate;
  for (int a = 0; a < arcs_; ++a)
    if (load[a] > 1e-12) best = std::min(best, arc_bytes_per_s_[a] / load[a]);
  return best;
}

std::vector<std::vector<int>> InstanceGraph::groups(GroupLayout layout) const {
  // Groups are blocks of size*stride devices; within a block, members of one
  // group share the offset modulo stride. Blocks that would cross the instance
  // edge are left out (Cluster only asks for layouts that tile the instance).
  std::vector<std::vector<int>> out;
  const int span = layout.size * layout.stride;
  for (int block = 0; block + span <= devices_; block += span)
    for (int offset = 0; offset < layout.stride; ++offset) {
      std::vector<int> members;
      for (int k = 0; k < layout.size; ++k) members.push_back(block + offset + k * layout.stride);
      out.push_back(std::move(members));
    }
  return out;
}

double InstanceGraph::collective_bytes_per_s(GroupLayout layout) const {
  const int n = layout.size;
  if (n < 2) return kUnboundedRate;
  const auto all = groups(layout);
  std::vector<Flow> ring, two_way, direct;
  for (const auto& g : all)
    for (int k = 0; k < n; ++k) {
      ring.push_back({g[k], g[(k + 1) % n], 1.0});
      two_way.push_back({g[k], g[(k + 1) % n], 0.5});
      two_way.push_back({g[k], g[(k + n - 1) % n], 0.5});
      for (int j = 0; j < n; ++j)
        if (j != k) direct.push_back({g[k], g[j], 1.0 / (n - 1)});
    }
  // A collective library picks its fastest algorithm; the three patterns move
  // the same bytes per rank, so the one with the least loaded bottleneck wins.
  return std::max({bottleneck_bytes_per_s(ring), bottleneck_bytes_per_s(two_way), bottleneck_bytes_per_s(direct)});
}

double InstanceGraph::all_to_all_bytes_per_s(GroupLayout layout) const {
  const int n = layout.size;
  if (n < 2) return kUnboundedRate;
  std::vector<Flow> sends;
  for (const auto& g : groups(layout))
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        if (j != k) sends.push_back({g[k], g[j], 1.0 / (n - 1)});
  return bottleneck_bytes_per_s(sends);
}

double InstanceGraph::p2p_bytes_per_s(GroupLayout layout) const {
  if (layout.size < 2) return kUnboundedRate;
  std::vector<Flow> sends;
  for (const auto& g : groups(layout))
    for (int k = 0; k + 1 < layout.size; ++k) sends.push_back({g[k], g[k + 1], 1.0});
  return bottleneck_bytes_per_s(sends);
}

}  // namespace trainplan::net
