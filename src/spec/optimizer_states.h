// How mixed precision keeps the optimizer's state beside the 16-bit weights, in
// bytes per parameter: FP32 masters (4), FP32 masters as 16-bit remainders (2)
// or none (0); Adam's two moments in FP32 (8) or BF16 (4). A stack states them
// (master_weights_dtype, optimizer_state_dtype); a launcher config may keep
// others, which the export formats check and the app prices.
#pragma once
#include <string>

#include "spec/stack_parts.h"

namespace trainplan::spec {

struct OptimizerStates {
  double master_bytes = 4;
  double moment_bytes = 8;
  bool operator==(const OptimizerStates&) const = default;
};

inline constexpr OptimizerStates kFp32Optimizer{4, 8};           // FP32 masters and moments
inline constexpr OptimizerStates kNoMastersFp32Moments{0, 8};    // NxD 2.18's BF16 weights beside an FP32 optimizer
inline constexpr OptimizerStates kBf16Optimizer{0, 4};           // BF16 moments, no masters
inline constexpr OptimizerStates kMasterRemainders{2, 8};        // FP32 masters kept as 16-bit remainders

OptimizerStates optimizer_states(const StackMemory& memory);

// "FP32 master weights and FP32 Adam moments", "no master weights and BF16 Adam moments", ...
std::string describe(const OptimizerStates& states);

}  // namespace trainplan::spec
