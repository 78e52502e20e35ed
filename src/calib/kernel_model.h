// KernelModel: the time model `calibrate check` scores. Richer than the
// Calibration fields the cost model reads: every op kind pays a fixed per-call
// overhead (thread wake-up, packing set-up), and a memory-bound op's cost per
// byte depends on where its working set lives (L2, L3 or DRAM), which also
// covers ops limited by exp/tanh arithmetic (a per-byte cost like any other).
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "calib/sweep.h"

namespace trainplan::calib {

struct MemoryTiers {
  double overhead_s = 0;             // paid only above parallel_from_bytes: waking the other threads
  double parallel_from_bytes = 0;
  // (working set up to this many bytes, seconds per byte moved), ascending; the last tier is open-ended.
  std::vector<std::pair<double, double>> tiers;
  double seconds(double bytes) const;
};

// A GEMM's time as the work its phases do: a fixed call overhead (thread wake-up),
// the FMAs, packing op(B) (k n elements), packing op(A) (m k, once per 1024-column
// block of C; its own rate when A is read transposed) and rounding C (m n).
// Non-negative least squares on relative error.
struct GemmTime {
  double overhead_s = 0, s_per_flop = 0, s_per_b = 0, s_per_a = 0, s_per_a_transposed = 0, s_per_c = 0;
  double seconds(double m, double n, double k, bool trans_a) const;
};

// Flash attention: a call overhead, a cost per FLOP of the two matrix products, one per
// score (FLOPs / head_dim: the exp and rescaling work, which does not shrink with
// head_dim) and one per byte of Q, K, V, O.
struct AttentionTime {
  double overhead_s = 0, s_per_flop = 0, s_per_score = 0, s_per_byte = 0;
};

struct KernelModel {
  GemmTime gemm;
  AttentionTime attention;
  AttentionTime attention_backward;  // the same terms fitted on the backward kernel (op "attention_backward")
  std::map<std::string, MemoryTiers> memory;
  // Predicted seconds for one measurement's op and shape; throws SpecError for an op it lacks.
  double seconds(const Measurement& m) const;
};

// Fits on `points` (the caller keeps held-out points out). Tier bounds per op: the size
// below which the kernel runs on one thread, the L2 of all threads (l2_bytes) and half
// the shared L3 (l3_bytes; other processes share it, and inputs plus output must fit).
KernelModel fit_kernel_model(const std::vector<Measurement>& points, double l2_bytes, double l3_bytes);
GemmTime fit_gemm_time(const std::vector<Measurement>& points);
MemoryTiers fit_memory_tiers(const std::vector<Measurement>& points, const std::vector<double>& bounds_bytes,
                             double parallel_from_bytes);

nlohmann::json to_json(const KernelModel& model);
KernelModel kernel_model_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

}  // namespace trainplan::calib
