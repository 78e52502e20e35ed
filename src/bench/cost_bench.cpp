// cost_bench: times cost::Evaluator::evaluate on one core. Targets (issue 2):
// the closed-form path at or under 1 us per plan; a whole evaluation with the
// pipeline DAG for 64 stages x 64 micro-batches under 1 ms. Prints medians of
// repeated batches, so a noisy shared machine shows as spread, not as bias.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/median.h"
#include "cost/evaluate.h"
#include "spec/load.h"

namespace {

using Clock = std::chrono::steady_clock;
using trainplan::bench::median;

}  // namespace

int main() {
  using namespace trainplan;
  const spec::ModelSpec llama7 = spec::load_model("llama2-7b");
  const spec::ModelSpec big = spec::load_model("gpt3-175b");
  const spec::HardwareSpec trn1 = spec::load_hardware("trn1.32xlarge");
  const spec::Calibration calibration;
  const spec::Workload workload{4096, 1024, 2e12, spec::Precision::bf16_sr};
  const spec::Stack stack;  // generic: speed does not depend on its behaviours
  const cost::Evaluator evaluator(llama7, trn1, stack, calibration, workload);

  // A mix of plans as a search visits them: TP, PP, SP, micro-batch, ZeRO and recompute varied.
  std::vector<spec::Plan> plans;
  for (int tp : {1, 2, 4, 8, 16, 32})
    for (int pp : {1, 2, 4, 8})
      for (int mb : {1, 2})
        for (int zero : {0, 1, 3})
          for (auto rc : {spec::Recompute::none, spec::Recompute::selective, spec::Recompute::full}) {
            spec::Plan p;
            p.instances = 16;
            p.tp = tp;
            p.pp = pp;
            p.sp = tp > 1;
            p.micro_batch = mb;
            p.zero = zero;
            p.recompute = rc;
            // Only plans that pass the divisibility checks: rejected ones cost nothing.
            if (cost::complete_plan(llama7, trn1, workload, p) == cost::PlanProblem::none)
              plans.push_back(p);
          }
  double sink = 0;
  std::vector<double> per_plan_ns;
  for (int batch = 0; batch < 21; ++batch) {
    const auto t0 = Clock::now();
    for (int rep = 0; rep < 20; ++rep)
      for (const auto& p : plans) sink += evaluator.evaluate(p).estimate.time.step_s;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    per_plan_ns.push_back(s / (20.0 * plans.size()) * 1e9);
  }
  std::sort(per_plan_ns.begin(), per_plan_ns.end());
  std::printf("closed form: %zu plans x 20 per batch, 21 batches: median %.0f ns per plan (min %.0f, max %.0f); "
              "%.2f M plans/s on one core\n",
              plans.size(), median(per_plan_ns), per_plan_ns.front(), per_plan_ns.back(), 1e3 / median(per_plan_ns));

  // The DAG path at 64 stages x 64 micro-batches: a 128-layer model, global batch 64 x DP.
  spec::ModelSpec deep = big;
  deep.layers = 128;
  deep.name = "gpt3-175b with 128 layers (benchmark shape)";
  const spec::Workload dag_workload{2048, 64, 1e12, spec::Precision::bf16_sr};
  const cost::Evaluator dag_evaluator(deep, trn1, stack, calibration, dag_workload);
  spec::Plan p;
  p.instances = 16;  // 512 cores = TP 8 x PP 64, DP 1, 64 micro-batches
  p.tp = 8;
  p.pp = 64;
  p.sp = true;
  p.recompute = spec::Recompute::full;
  std::vector<double> dag_ms;
  cost::Evaluation last;
  for (int i = 0; i < 31; ++i) {
    const auto t0 = Clock::now();
    last = dag_evaluator.evaluate(p, cost::PipelineMethod::dag);
    dag_ms.push_back(std::chrono::duration<double>(Clock::now() - t0).count() * 1e3);
  }
  std::printf("DAG path: %d stages x %d micro-batches: median %.3f ms per evaluation (%s)\n", last.plan.pp,
              last.plan.grad_accum, median(dag_ms), cost::to_string(last.problem));
  return sink > 0 ? 0 : 1;
}
