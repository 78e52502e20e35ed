// search_bench: plans evaluated per second, and the full search for llama2-70b
// on trn1.32xlarge over 1..256 instances (powers of two): wall time (median of
// 3 runs), plan count, plans per second per thread, peak RSS.
// Usage: search_bench [threads (default 2)]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cost/evaluate.h"
#include "search/plan_space.h"
#include "search/ranker.h"
#include "spec/load.h"

int main(int argc, char** argv) {
  using namespace tp;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const spec::ModelSpec model = spec::load_model("llama2-70b");
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  spec::Calibration cal;  // the assumed default: speed does not depend on the figures
  spec::Workload w{4096, 1024, 20.0 * double(model.total_parameters()), spec::Precision::bf16_sr};
  const spec::Stack stack;  // generic: speed does not depend on its behaviours
  const cost::Evaluator evaluator(model, hw, stack, cal, w);
  search::SpaceConstraints c;
  c.instances = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const search::PlanSpace space(model, hw, stack, w, c);
  const search::Scorer scorer(evaluator, space.instance_counts(), hw.prices.front().usd_per_instance_hour,
                              search::Objective::throughput, cost::FailureSettings{});
  search::SearchOptions options;
  options.top_k = 10;
  options.threads = threads;
  std::vector<double> seconds;
  search::SearchResult r;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    r = search::run_search(evaluator, space, scorer, options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[1];
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("llama2-70b on trn1.32xlarge, instances 1..256 (powers of two), %d threads\n", threads);
  std::printf("plans considered %lld, feasible %lld\n", (long long)r.drops.considered, (long long)r.drops.feasible);
  std::printf("full search: median %.3f s of 3 (min %.3f, max %.3f)\n", median, seconds[0], seconds[2]);
  std::printf("plans per second: %.3g total, %.3g per thread\n", r.drops.considered / median,
              r.drops.considered / median / threads);
  std::printf("peak RSS: %.1f MiB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
