// Predictor: the measured runs of one hardware, loaded once (specs, workloads,
// one cost::Evaluator each), predicting seq/s under a Calibration the caller
// edits in place between calls. Only the scalar factors a fit moves (GEMM
// ceiling, attention factor, collective efficiencies and latency, per-step
// overhead) may change after construction; per-op memory curves are read once.
// Runs whose batch is per replica get global batch = DP x micro-batch x accumulation.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "cost/evaluate.h"
#include "validate/measured_run.h"

namespace tp::validate {

class Predictor {
 public:
  // Throws spec::SpecError when the runs span more than one hardware or a plan cannot run.
  Predictor(const std::vector<MeasuredRun>& runs, const spec::Calibration& start);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  spec::Calibration& calibration() { return calibration_; }
  const spec::Calibration& calibration() const { return calibration_; }
  size_t size() const { return runs_.size(); }
  const MeasuredRun& run(size_t i) const { return runs_[i]; }
  int devices(size_t i) const;
  double predict_seqs_per_s(size_t i) const;
  cost::Evaluation evaluate(size_t i) const;
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

}  // namespace tp::validate
