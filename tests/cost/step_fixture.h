// A StepContext over shipped descriptors, for testing one term of the step at a time.
#pragma once
#include <string>

#include "cost/memory.h"
#include "cost/plan_check.h"
#include "cost/step_context.h"
#include "spec/load.h"

namespace trainplan::cost::testing {

struct StepFixture {
  spec::ModelSpec model;
  spec::HardwareSpec hardware;
  spec::Stack stack;
  spec::Calibration calibration;  // the assumed defaults
  spec::Workload workload;
  spec::Plan plan;
  net::Cluster cluster;
  OpEfficiencies ops;

  StepFixture(const std::string& model_name, const std::string& hardware_name, int seq_len, long global_batch,
              spec::Precision precision, spec::Plan p)
      : model(spec::load_model(model_name)), hardware(spec::load_hardware(hardware_name)),
        workload{seq_len, global_batch, 0, precision}, plan(p), cluster(hardware),
        ops{calibration.memory, calibration.memory, calibration.memory, calibration.memory, calibration.memory,
            calibration.memory} {}

  // Completes the plan (dp, grad_accum) and returns the context; fails the test on a bad plan.
  StepContext context() {
    const PlanProblem problem = complete_plan(model, hardware, workload, plan, stack.communication.context_parallel);
    EXPECT_EQ(problem, PlanProblem::none) << to_string(problem);
    return StepContext{model, hardware, stack, calibration, workload, plan, cluster, ops,
                       parameters_per_device(model, plan), expert_parameters_per_device(model, plan),
                       stack.attention_speedup(hardware.family)};
  }
};

// BLOOM-176B's layout as trained (tr11 README): 48 nodes, TP 4, PP 12,
// micro-batch 2, ZeRO 1, full recompute; the caller sets how PP splits 70 layers.
inline spec::Plan bloom_176b_plan() {
  spec::Plan p;
  p.instances = 48;
  p.tp = 4;
  p.pp = 12;
  p.micro_batch = 2;
  p.zero = 1;
  p.recompute = spec::Recompute::full;
  return p;
}

}  // namespace trainplan::cost::testing
