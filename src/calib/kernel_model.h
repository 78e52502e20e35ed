// KernelModel: the time model `calibrate check` scores. Richer than the
// Calibration fields the cost model reads: every op kind pays a fixed per-call
// overhead (thread wake-up, packing set-up), and a memory-bound op's cost per
// byte depends on where its working set lives (L2, L3 or DRAM), which also
// covers ops limited by exp/tanh arithmetic (a per-byte cost like any other).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calib/calibration.h"
#include "calib/sweep.h"

namespace tp::calib {

struct MemoryTiers {
  double overhead_s = 0;
  // (working set up to this many bytes, seconds per byte moved), ascending; the last tier is open-ended.
  std::vector<std::pair<double, double>> tiers;
  double seconds(double bytes) const;
};

struct KernelModel {
  double gemm_overhead_s = 0;
  GemmEfficiency gemm;  // of `peak_flops_per_s`, on top of the overhead
  double attention_overhead_s = 0;
  double attention_factor = 1;  // multiplies gemm.at() for flash attention
  std::map<std::string, MemoryTiers> memory;
  // Predicted seconds for one measurement's op and shape; throws SpecError for an op it lacks.
  double seconds(const Measurement& m, double peak_flops_per_s) const;
};

// Fits on `points` (the caller keeps held-out points out). Cache sizes set the tier bounds:
// l2_bytes is the L2 of all threads together, l3_bytes the shared L3.
KernelModel fit_kernel_model(const std::vector<Measurement>& points, double peak_flops_per_s, double l2_bytes,
                             double l3_bytes);
// GEMM alone: time = overhead + flops / (peak * efficiency(m, n, k)), fitted on log time.
void fit_gemm_with_overhead(const std::vector<Measurement>& points, double peak_flops_per_s, double* overhead_s,
                            GemmEfficiency* gemm);
MemoryTiers fit_memory_tiers(const std::vector<Measurement>& points, const std::vector<double>& bounds_bytes);

nlohmann::json to_json(const KernelModel& model);
KernelModel kernel_model_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

}  // namespace tp::calib
