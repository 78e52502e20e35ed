// pipeline_bench: times the pipeline critical path. Targets: the DAG for 64
// stages x 64 micro-batches under 1 ms; the closed form near 1 us or less per
// call (the search evaluates it for every plan). Prints medians of repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/median.h"
#include "cost/pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;
using trainplan::bench::median;

}  // namespace

int main() {
  const int p = 64, m = 64;
  std::vector<double> forward(p), backward(p);
  for (int r = 0; r < p; ++r) forward[r] = 1e-3 * (1.0 + 0.01 * (r % 7)), backward[r] = 2 * forward[r];
  forward[0] += 0.2e-3;  // embedding
  forward[p - 1] += 0.5e-3, backward[p - 1] += 1e-3;  // head
  trainplan::cost::PipelineInput in{p, m, 1, forward, backward, 20e-6};

  std::vector<double> dag_s;
  double sink = 0;
  for (int i = 0; i < 31; ++i) {
    const auto t0 = Clock::now();
    sink += trainplan::cost::pipeline_time_dag(in).total_s;
    dag_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::vector<double> vf(p * 4), vb(p * 4);
  for (size_t i = 0; i < vf.size(); ++i) vf[i] = forward[i / 4] / 4, vb[i] = backward[i / 4] / 4;
  trainplan::cost::PipelineInput interleaved{p, m, 4, vf, vb, 20e-6};
  std::vector<double> dag_v_s;
  for (int i = 0; i < 11; ++i) {
    const auto t0 = Clock::now();
    sink += trainplan::cost::pipeline_time_dag(interleaved).total_s;
    dag_v_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }

  // Closed form on a search-sized input (8 stages) and on 64 stages.
  auto closed_ns = [&](const trainplan::cost::PipelineInput& x) {
    std::vector<double> per_call;
    const int calls = 20000;
    for (int rep = 0; rep < 15; ++rep) {
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) {
        trainplan::cost::PipelineInput y = x;
        y.p2p_s = x.p2p_s + i * 1e-12;  // defeat hoisting
        sink += trainplan::cost::pipeline_time_closed_form(y).total_s;
      }
      per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls);
    }
    return median(per_call);
  };
  trainplan::cost::PipelineInput small{8, 32, 1, std::span<const double>(forward).first(8),
                                std::span<const double>(backward).first(8), 20e-6};

  const auto closed = trainplan::cost::pipeline_time_closed_form(in);
  const auto dag = trainplan::cost::pipeline_time_dag(in);
  std::printf("pipeline DAG, 64 stages x 64 micro-batches (1F1B): median %.3f ms over %zu runs (target < 1 ms)\n",
              median(dag_s) * 1e3, dag_s.size());
  std::printf("pipeline DAG, 64 stages x 64 micro-batches x 4 virtual: median %.3f ms over %zu runs\n",
              median(dag_v_s) * 1e3, dag_v_s.size());
  std::printf("closed form, 8 stages: median %.1f ns per call\n", closed_ns(small));
  std::printf("closed form, 64 stages: median %.1f ns per call\n", closed_ns(in));
  std::printf("64x64 step: DAG %.6f s, closed form %.6f s (%.2f%% below)\n", dag.total_s, closed.total_s,
              100 * (dag.total_s - closed.total_s) / dag.total_s);
  return sink == 42 ? 1 : 0;
}
