// cost::evaluate: the step model. Given the model, the hardware, the stack, a
// Calibration, the Workload and a Plan, it returns the Estimate: where the step
// time and the memory go, throughput, MFU/HFU. Pure and thread-safe. An
// Evaluator does the per-hardware set-up once (the cluster graph) so that each
// further plan costs about a microsecond. Each term of the step lives in its
// own file, named as StepBreakdown names it.
#pragma once
#include <array>
#include <optional>

#include "cost/estimate.h"
#include "cost/pipeline_step.h"
#include "cost/plan_check.h"
#include "cost/step_context.h"
#include "net/cluster.h"
#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {

struct Evaluation {
  PlanProblem problem = PlanProblem::none;  // none: `estimate` is valid
  spec::Plan plan;                          // completed: dp and grad_accum filled
  Estimate estimate;                        // also filled for out_of_memory
  bool ok() const { return problem == PlanProblem::none; }
};

class Evaluator {
 public:
  // Keeps references: the specs, stack and calibration must outlive the Evaluator.
  Evaluator(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
            const spec::Calibration& calibration, const spec::Workload& workload);
  Evaluation evaluate(const spec::Plan& plan, PipelineMethod method = PipelineMethod::closed_form) const;

  const spec::ModelSpec& model() const { return model_; }
  const spec::HardwareSpec& hardware() const { return hardware_; }
  const spec::Stack& stack() const { return stack_; }
  // The stack as a plan at ZeRO stage `zero` sees it (spec::at_zero_stage),
  // resolved once here: the stack every term of that plan reads.
  const spec::Stack& stack_at(int zero) const;
  const spec::Calibration& calibration() const { return calibration_; }
  const spec::Workload& workload() const { return workload_; }

 private:
  const spec::ModelSpec& model_;
  const spec::HardwareSpec& hardware_;
  const spec::Stack& stack_;
  const spec::Calibration& calibration_;
  const spec::Workload& workload_;
  // Per ZeRO stage, the stack with its by_zero_stage entry applied; empty where
  // the file states none, so most stacks are never copied.
  std::array<std::optional<spec::Stack>, 4> zero_stage_stacks_;
  net::Cluster cluster_;
  double attention_speedup_;  // looked up once: the stack and hardware do not change
};

Evaluation evaluate(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
                    const spec::Calibration& calibration, const spec::Workload& workload, const spec::Plan& plan,
                    PipelineMethod method = PipelineMethod::closed_form);

}  // namespace trainplan::cost
