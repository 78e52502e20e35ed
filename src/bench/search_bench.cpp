// search_bench: plans evaluated per second and full-search wall time (median
// of 3 runs), plan count, plans per second per thread, peak RSS, for three
// spaces: llama2-70b on trn1.32xlarge over 1..256 instances (seq 4096); the
// full Llama 3.1 405B space on trn2.48xlarge over 1..512 instances at seq
// 131072 (CP searched); Mixtral 8x7B on p5.48xlarge over 1..512 (EP searched);
// Llama 2 70B on p5.48xlarge over 1..256 without and with the block method of
// full recompute (each fitting full-recompute plan bisects for its fewest
// recomputed layers), side by side. Instances run over powers of two.
// Usage: search_bench [threads (default 2)]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cost/evaluate.h"
#include "search/plan_space.h"
#include "search/ranker.h"
#include "spec/load.h"

namespace {

using namespace trainplan;

void run_case(const std::string& model_name, const std::string& hw_name, int seq_len, long batch,
              spec::Precision precision, const spec::Stack& stack, std::vector<int> instances, int threads,
              const char* label = "") {
  const spec::ModelSpec model = spec::load_model(model_name);
  const spec::HardwareSpec hw = spec::load_hardware(hw_name);
  spec::Calibration cal;  // the assumed default: speed does not depend on the figures
  spec::Workload w{seq_len, batch, 20.0 * double(model.total_parameters()), precision};
  const cost::Evaluator evaluator(model, hw, stack, cal, w);
  search::SpaceConstraints c;
  c.instances = instances;
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
  std::printf("%s on %s, seq %d, instances %d..%d (powers of two), %d threads%s\n", model_name.c_str(), hw_name.c_str(),
              seq_len, instances.front(), instances.back(), threads, label);
  std::printf("  plans considered %lld, feasible %lld\n", (long long)r.drops.considered, (long long)r.drops.feasible);
  std::printf("  full search: median %.3f s of 3 (min %.3f, max %.3f)\n", median, seconds[0], seconds[2]);
  std::printf("  plans per second: %.3g total, %.3g per thread\n", r.drops.considered / median,
              r.drops.considered / median / threads);
}

std::vector<int> powers_of_two(int last) {
  std::vector<int> out;
  for (int n = 1; n <= last; n *= 2) out.push_back(n);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  if (argc > 2 || (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))) {
    std::printf("Usage: search_bench [threads (1..256, default 2)]\n");
    return argc > 2 ? 2 : 0;
  }
  if (argc == 2) {
    char* end = nullptr;
    const long n = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || n < 1 || n > 256) {
      std::fprintf(stderr, "search_bench: threads: expected a whole number from 1 to 256, got '%s'\n", argv[1]);
      return 2;
    }
    threads = int(n);
  }
  spec::Stack generic;  // speed does not depend on the behaviours, only on what is offered
  run_case("llama2-70b", "trn1.32xlarge", 4096, 1024, spec::Precision::bf16_sr, generic, powers_of_two(256), threads);
  spec::Stack with_cp_ep = generic;
  with_cp_ep.communication.context_parallel = spec::ContextParallel::ring;
  with_cp_ep.capabilities.expert_parallel = true;
  run_case("llama3.1-405b", "trn2.48xlarge", 131072, 512, spec::Precision::bf16_sr, with_cp_ep, powers_of_two(512),
           threads);
  run_case("mixtral-8x7b", "p5.48xlarge", 4096, 1024, spec::Precision::mixed_bf16, with_cp_ep, powers_of_two(512),
           threads);
  spec::Stack with_block = generic;
  with_block.capabilities.block_recompute = true;
  run_case("llama2-70b", "p5.48xlarge", 4096, 1024, spec::Precision::mixed_bf16, generic, powers_of_two(256), threads,
           ", every layer or none recomputed");
  run_case("llama2-70b", "p5.48xlarge", 4096, 1024, spec::Precision::mixed_bf16, with_block, powers_of_two(256), threads,
           ", block recompute searched");
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak RSS: %.1f MiB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
