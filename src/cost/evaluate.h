// cost::evaluate: the step model. Given the model, the hardware, a
// Calibration, the Workload and a Plan, it returns the Estimate: where the
// step time and the memory go, throughput, MFU/HFU. Pure and thread-safe.
// An Evaluator does the per-hardware set-up once (the cluster graph) so that
// each further plan costs about a microsecond; the free function is the same
// model for one plan.
#pragma once
#include "spec/calibration.h"
#include "cost/estimate.h"
#include "cost/plan_check.h"
#include "net/cluster.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace tp::cost {

enum class PipelineMethod { closed_form, dag };

struct Evaluation {
  PlanProblem problem = PlanProblem::none;  // none: `estimate` is valid
  spec::Plan plan;                          // completed: dp and grad_accum filled
  Estimate estimate;                        // also filled for out_of_memory
  bool ok() const { return problem == PlanProblem::none; }
};

class Evaluator {
 public:
  // Keeps references: the specs and calibration must outlive the Evaluator.
  Evaluator(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Calibration& calibration,
            const spec::Workload& workload);
  Evaluation evaluate(const spec::Plan& plan, PipelineMethod method = PipelineMethod::closed_form) const;

  const spec::ModelSpec& model() const { return model_; }
  const spec::HardwareSpec& hardware() const { return hardware_; }
  const spec::Calibration& calibration() const { return calibration_; }
  const spec::Workload& workload() const { return workload_; }

 private:
  const spec::ModelSpec& model_;
  const spec::HardwareSpec& hardware_;
  const spec::Calibration& calibration_;
  const spec::Workload& workload_;
  net::Cluster cluster_;
  // Per-op memory efficiencies pulled out of the calibration's map once.
  spec::MemoryEfficiency norm_, softmax_, activation_, residual_, optimizer_;
};

Evaluation evaluate(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                    const spec::Calibration& calibration, const spec::Workload& workload, const spec::Plan& plan,
                    PipelineMethod method = PipelineMethod::closed_form);

}  // namespace tp::cost
