// Predictor: measured runs loaded once (model, hardware, stack, workload, one
// cost::Evaluator each), predicting seq/s and memory under one Calibration that
// the caller edits in place between calls (a fit moves its scalar factors:
// GEMM ceiling, attention factor, collective efficiencies and latency, per-step
// overhead; per-op memory curves are read once). Runs may span hardware of one
// accelerator family. Runs whose batch is per replica get global batch = DP x
// micro-batch x accumulation; each run's measured figure is resolved to seq/s.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cost/evaluate.h"
#include "spec/calibration.h"
#include "validate/measured_run.h"

namespace trainplan::validate {

class Predictor {
 public:
  // Throws spec::SpecError when a run names a stack that does not offer its plan.
  Predictor(const std::vector<MeasuredRun>& runs, const spec::Calibration& start);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  spec::Calibration& calibration() { return calibration_; }
  const spec::Calibration& calibration() const { return calibration_; }
  size_t size() const { return runs_.size(); }
  const MeasuredRun& run(size_t i) const { return runs_[i]; }  // resolved: measured_seqs_per_s set
  int devices(size_t i) const;
  // Why the model cannot run the plan at all (not memory), or none.
  cost::PlanProblem problem(size_t i) const;
  // Runs with a measured speed whose plan the model can run: what a fit may use.
  bool timed(size_t i) const;
  double predict_seqs_per_s(size_t i) const;
  cost::Evaluation evaluate(size_t i) const;
  // Memory of the stage the run's measurement names (the heavier when unnamed).
  cost::MemoryBreakdown measured_stage_memory(size_t i) const;
  // The same table's plan at another cluster size (for scaling curves); 0 if it cannot run.
  double predict_at_instances(size_t i, int instances) const;

 private:
  struct Loaded;
  std::vector<MeasuredRun> runs_;
  spec::Calibration calibration_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
};

// A copy of `run` with its global batch resolved for `devices_per_instance`.
MeasuredRun resolved(const MeasuredRun& run, int devices_per_instance);

}  // namespace trainplan::validate
