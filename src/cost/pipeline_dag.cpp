// The pipeline schedule as a task DAG: one vertex per (micro-batch, virtual
// stage, forward|backward), arcs for data dependencies (weighted by the p2p
// time when they cross ranks) and for each rank's execution order. With every
// task starting as soon as its predecessors end, the step is the longest path.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <boost/graph/topological_sort.hpp>

#include "cost/pipeline.h"
#include "spec/error.h"

namespace trainplan::cost {
namespace {

// Compressed sparse rows: the graph is built once from an arc list and only
// read, so contiguous storage keeps the 64 x 64 case well inside its budget.
struct Delay {
  double seconds = 0;
};
using TaskGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, Delay>;

struct Task {
  int micro_batch;
  int chunk;
  bool backward;
  // Interleaved: the task ends a warm-up forward, a steady-state forward +
  // backward pair or a cool-down backward, each followed by one p2p exchange
  // (what a blocking exchange holds the rank for; PipelineInput::blocking_p2p).
  bool exchange_after = false;
};

// Rank r's execution order. 1F1B: p-r-1 warm-up forwards, then one forward
// one backward, then the remaining backwards. Interleaved (Narayanan et al.
// 2021, as Megatron-Core runs it): forwards walk chunks in blocks of p
// micro-batches (chunk 0 for micro-batches 0..p-1, chunk 1 for the same, ...),
// backwards walk chunks in reverse (schedules.py get_model_chunk_id); warm-up
// is 2(p-r-1) + (v-1)p forwards, and every forward when m == p ("Run all
// forward passes and then all backward passes if number of microbatches is
// just the number of pipeline stages"): NVIDIA/Megatron-LM@baf94af3 (core_r0.8.0)
// megatron/core/pipeline_parallel/schedules.py:645-652, 672-678.
void rank_order(int p, int m, int v, int r, std::vector<Task>& out) {
  out.clear();
  const int total = m * v;
  const int warmup = v == 1    ? std::min(p - r - 1, m)
                     : m == p ? total
                              : std::min(2 * (p - r - 1) + (v - 1) * p, total);
  auto forward = [&](int k, bool exchange_after) {
    if (v == 1) return Task{k, 0, false, exchange_after};
    return Task{(k / (p * v)) * p + k % p, (k / p) % v, false, exchange_after};
  };
  auto backward = [&](int k) {
    if (v == 1) return Task{k, 0, true, true};
    return Task{(k / (p * v)) * p + k % p, v - 1 - (k / p) % v, true, true};
  };
  for (int k = 0; k < warmup; ++k) out.push_back(forward(k, true));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(forward(warmup + k, false));
    out.push_back(backward(k));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(backward(k));
}

}  // namespace

void check_pipeline_input(const PipelineInput& in) {
  auto bad = [](const std::string& field, const std::string& expected) {
    throw spec::SpecError("pipeline", field, expected);
  };
  if (in.stages < 1) bad("stages", "at least 1");
  if (in.micro_batches < 1) bad("micro_batches", "at least 1");
  if (in.virtual_stages < 1) bad("virtual_stages", "at least 1");
  const size_t chunks = static_cast<size_t>(in.stages) * in.virtual_stages;
  if (in.forward_s.size() != chunks) bad("forward_s", std::to_string(chunks) + " times (stages * virtual_stages)");
  if (in.backward_s.size() != chunks) bad("backward_s", std::to_string(chunks) + " times (stages * virtual_stages)");
  for (size_t i = 0; i < chunks; ++i)
    if (!(in.forward_s[i] >= 0) || !(in.backward_s[i] >= 0)) bad("forward_s/backward_s", "non-negative times");
  if (!(in.p2p_s >= 0)) bad("p2p_s", "a non-negative time");
  if (in.virtual_stages > 1 && in.micro_batches % in.stages != 0)
    bad("micro_batches", "a multiple of stages when virtual_stages > 1 (interleaved schedule)");
}

PipelineTime pipeline_time_dag_every_task(const PipelineInput& in) {
  check_pipeline_input(in);
  const int p = in.stages, m = in.micro_batches, v = in.virtual_stages;
  const int vstages = p * v;
  // Vertex of (micro-batch, virtual stage s = chunk * p + rank, direction).
  auto vertex = [&](int mb, int s, bool backward) { return (mb * vstages + s) * 2 + (backward ? 1 : 0); };
  const int tasks = 2 * m * vstages;

  std::vector<double> duration(tasks);
  std::vector<std::pair<int, int>> arcs;
  std::vector<Delay> weights;
  arcs.reserve(static_cast<size_t>(tasks) * 2);
  weights.reserve(static_cast<size_t>(tasks) * 2);
  auto arc = [&](int from, int to, double w) {
    arcs.emplace_back(from, to);
    weights.push_back({w});
  };

  for (int mb = 0; mb < m; ++mb)
    for (int s = 0; s < vstages; ++s) {
      const int rank = s % p, chunk = s / p, slot = rank * v + chunk;
      duration[vertex(mb, s, false)] = in.forward_s[slot];
      duration[vertex(mb, s, true)] = in.backward_s[slot];
      // Activations move to the next virtual stage, gradients to the previous;
      // a move between ranks costs one p2p send.
      if (s + 1 < vstages) {
        const double hop = (s + 1) % p != rank ? in.p2p_s : 0.0;
        arc(vertex(mb, s, false), vertex(mb, s + 1, false), hop);
        arc(vertex(mb, s + 1, true), vertex(mb, s, true), hop);
      } else {
        arc(vertex(mb, s, false), vertex(mb, s, true), 0.0);
      }
    }
  std::vector<Task> order;
  std::vector<double> busy(p, 0.0);
  for (int r = 0; r < p; ++r) {
    rank_order(p, m, v, r, order);
    int previous = -1;
    double hold = 0;  // what the exchange after the previous task holds the rank for
    for (const Task& t : order) {
      const int here = vertex(t.micro_batch, t.chunk * p + r, t.backward);
      busy[r] += duration[here];
      if (previous >= 0) arc(previous, here, hold);
      previous = here;
      // A blocking exchange: 1F1B sends a forward on unless on the last rank, a
      // gradient back unless on the first; interleaved, see Task::exchange_after.
      const bool exchange = v == 1 ? (t.backward ? r > 0 : r < p - 1) : t.exchange_after;
      hold = in.blocking_p2p && exchange && p > 1 ? in.p2p_s : 0.0;
    }
  }

  const TaskGraph graph(boost::edges_are_unsorted_multi_pass, arcs.begin(), arcs.end(), weights.begin(),
                        static_cast<TaskGraph::vertices_size_type>(tasks));
  std::vector<TaskGraph::vertex_descriptor> reverse_topo;
  reverse_topo.reserve(tasks);
  // Throws boost::not_a_dag if a schedule order ever contradicted the data flow.
  boost::topological_sort(graph, std::back_inserter(reverse_topo));

  std::vector<double> start(tasks, 0.0);
  double total = 0;
  for (auto it = reverse_topo.rbegin(); it != reverse_topo.rend(); ++it) {
    const auto u = *it;
    const double end = start[u] + duration[u];
    total = std::max(total, end);
    for (auto e : boost::make_iterator_range(boost::out_edges(u, graph))) {
      const auto w = boost::target(e, graph);
      start[w] = std::max(start[w], end + graph[e].seconds);
    }
  }

  PipelineTime result;
  result.total_s = total;
  result.busy_s = *std::max_element(busy.begin(), busy.end());
  result.bubble_s = total - result.busy_s;
  return result;
}

PipelineTime pipeline_time_dag(const PipelineInput& in) {
  check_pipeline_input(in);
  const int p = in.stages, m = in.micro_batches, v = in.virtual_stages;
  // Past the warm-up the schedule repeats with the same times, so the step
  // grows by the same amount per period of p micro-batches (a block of the
  // interleaved order). Beyond kDagMicroBatches the DAG is timed at two counts
  // a period apart and extended along that line: the same figure (tested against
  // every task), without a graph of millions of tasks for a million sequences.
  constexpr int kDagMicroBatches = 512;
  const int period = p;
  const int base = ((std::max(kDagMicroBatches / 2, 4 * p * v) + period - 1) / period) * period;
  if (m <= base + 2 * period || m <= kDagMicroBatches) return pipeline_time_dag_every_task(in);
  // Both counts congruent to m modulo the period, so the drain at the end is m's own.
  PipelineInput at = in;
  at.micro_batches = base + (m - base) % period;
  const PipelineTime first = pipeline_time_dag_every_task(at);
  at.micro_batches += period;
  const PipelineTime second = pipeline_time_dag_every_task(at);
  const double periods = (m - at.micro_batches) / period;  // a whole number
  PipelineTime result;
  result.total_s = second.total_s + periods * (second.total_s - first.total_s);
  result.busy_s = second.busy_s + periods * (second.busy_s - first.busy_s);
  result.bubble_s = result.total_s - result.busy_s;
  return result;
}

}  // namespace trainplan::cost
